package crm_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"flag"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/hosts/ccrm"
	"github.com/edgekit/edgekit/hosts/controller"
	"github.com/edgekit/edgekit/hosts/controller/controllertest"
	"github.com/edgekit/edgekit/hosts/controller/notify"
	"github.com/edgekit/edgekit/hosts/crm"
	"github.com/edgekit/edgekit/internal/devtls"
	"github.com/edgekit/edgekit/internal/store"
	rmv1 "github.com/edgekit/edgekit/proto/edgekit/rm/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
)

// certValidity is the life of every certificate in TestCertificatesRenew:
// short enough that the test spans several renewals of each.
const certValidity = 4 * time.Second

// certTraffic is how long TestCertificatesRenew sends traffic while the
// certificates renew: five of their lives by default, in CI; the issue's
// full size is a minute (-crm.cert-traffic=1m).
var certTraffic = flag.Duration("crm.cert-traffic", 5*certValidity, "how long TestCertificatesRenew sends traffic through renewals of its 4-second certificates")

// TestCertificatesRenew runs a controller, a CRM and a CCRM replica with
// certificates of the development authority valid for a few seconds, and
// traffic for several of their lives: no call fails, the CRM's notify
// stream is never dropped, every new handshake (with the controller's
// certificate, the CRM's, the replica's) sees a valid certificate, each of
// them is renewed several times, and the replica's renewals come from the
// controller's requests.
func TestCertificatesRenew(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs for about 20 seconds (-crm.cert-traffic)")
	}
	dir := t.TempDir()
	tlsDir := filepath.Join(dir, "tls")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute+*certTraffic)
	defer cancel()
	var wg sync.WaitGroup
	var stops []context.CancelFunc
	t.Cleanup(func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
		wg.Wait()
	})
	start := func(name string, run func(ctx context.Context) error) {
		rctx, stop := context.WithCancel(ctx)
		stops = append(stops, stop)
		wg.Go(func() {
			if err := run(rctx); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		})
	}

	ready := make(chan *controller.Running, 1)
	start("controller", func(ctx context.Context) error {
		return controller.Run(ctx, controller.Options{DataDir: dir, Listen: "127.0.0.1:0", MetricsListen: "127.0.0.1:0", DevTLS: true,
			DevTLSValidity: certValidity, Logger: testLogger(), Ready: func(r *controller.Running) { ready <- r }})
	})
	var r *controller.Running
	select {
	case r = <-ready:
	case <-ctx.Done():
		t.Fatal("controller not ready")
	}
	ca, err := devtls.OpenCA(tlsDir)
	if err != nil {
		t.Fatal(err)
	}
	serverOnly := &tls.Config{RootCAs: ca.Pool(), MinVersion: tls.VersionTLS13}
	admin, err := os.ReadFile(r.AdminTokenFile)
	if err != nil {
		t.Fatal(err)
	}
	bearer := grpc.WithPerRPCCredentials(controllertest.BearerToken(strings.TrimSpace(string(admin))))
	// One connection for the whole test: its calls must never fail.
	conn, err := grpc.NewClient(r.Addr, grpc.WithTransportCredentials(credentials.NewTLS(serverOnly)), bearer)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	cloudlets := edgeproto.NewCloudletServiceClient(conn)
	create := func(name string, onEdge bool) string {
		t.Helper()
		cs, err := cloudlets.CreateCloudlet(ctx, &edgeproto.CreateCloudletRequest{
			Cloudlet: &edgeproto.Cloudlet{Key: &edgeproto.CloudletKey{Organization: "operator", Name: name}, PlatformType: "fake", CrmOnEdge: onEdge},
			NoWait:   true})
		if err != nil {
			t.Fatal(err)
		}
		first, err := cs.Recv()
		if err != nil {
			t.Fatalf("create cloudlet %s: %v", name, err)
		}
		return first.GetCrmAccessKey()
	}
	keyFile := filepath.Join(t.TempDir(), "site1.key")
	if err := os.WriteFile(keyFile, []byte(create("site1", true)), 0o600); err != nil {
		t.Fatal(err)
	}

	crmReady := make(chan *crm.Running, 1)
	start("crm", func(ctx context.Context) error {
		return crm.Run(ctx, crm.Options{Controller: r.Addr, Cloudlet: "operator/site1", AccessKeyFile: keyFile, Platform: "fake",
			StateDir: t.TempDir(), DevTLSDir: tlsDir, DevTLSValidity: certValidity, MetricsListen: "127.0.0.1:0", Logger: testLogger(),
			ReconnectMin: 20 * time.Millisecond, ReconnectMax: 200 * time.Millisecond,
			Ready: func(r *crm.Running) { crmReady <- r }})
	})
	ccrmReady := make(chan *ccrm.Running, 1)
	start("ccrm", func(ctx context.Context) error {
		return ccrm.Run(ctx, ccrm.Options{EtcdEndpoints: r.EtcdEndpoints, Controller: r.Addr, DevTLSDir: tlsDir, DevTLSValidity: certValidity,
			EncryptionKeyFile: filepath.Join(dir, "encryption.keys"),
			Replica:           ccrm.Config{ReplicaID: "replica-1", StateDir: t.TempDir(), Logger: testLogger()},
			Ready:             func(r *ccrm.Running) { ccrmReady <- r }})
	})
	var cr *crm.Running
	var rr *ccrm.Running
	for cr == nil || rr == nil {
		select {
		case cr = <-crmReady:
		case rr = <-ccrmReady:
		case <-ctx.Done():
			t.Fatal("CRM or CCRM not ready")
		}
	}
	if cr.Certificate == nil || rr.Certificate == nil {
		t.Fatal("the CRM or the replica has no certificate renewer")
	}
	metric := func(name string) (string, bool) {
		resp, err := http.Get("http://" + cr.MetricsAddr + "/metrics")
		if err != nil {
			return "", false
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, name) {
				return line, true
			}
		}
		return "", false
	}
	controllertest.WaitFor(t, 30*time.Second, "the CRM's notify stream up", func() bool {
		line, _ := metric("edgekit_crm_connected ")
		return line == "edgekit_crm_connected 1"
	})
	waitReady := func(name string) {
		t.Helper()
		kind := store.NewKind[*edgeproto.Cloudlet](r.Controller.Store())
		controllertest.WaitFor(t, 30*time.Second, "cloudlet "+name+" READY", func() bool {
			c, _, err := kind.Get(ctx, (&edgeproto.Cloudlet{Key: &edgeproto.CloudletKey{Organization: "operator", Name: name}}).GetKeyString())
			return err == nil && c.GetState() == edgeproto.TrackedState_TRACKED_STATE_READY
		})
	}
	waitReady("site1")
	create("offsite1", false) // served by the replica
	waitReady("offsite1")

	// fresh calls the controller on a new connection made with cfg (the
	// controller refuses a client certificate that is not valid now) and
	// checks the certificate the controller presented on it is valid now;
	// it returns its serial number.
	fresh := func(what string, cfg *tls.Config) string {
		t.Helper()
		c, err := grpc.NewClient(r.Addr, grpc.WithTransportCredentials(credentials.NewTLS(cfg)), bearer)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		var p peer.Peer
		if _, err := healthpb.NewHealthClient(c).Check(ctx, &healthpb.HealthCheckRequest{}, grpc.Peer(&p)); err != nil {
			t.Fatalf("%s: a call on a new connection: %v", what, err)
		}
		info, ok := p.AuthInfo.(credentials.TLSInfo)
		if !ok || len(info.State.PeerCertificates) == 0 {
			t.Fatalf("%s: no TLS peer certificate (%T)", what, p.AuthInfo)
		}
		leaf := info.State.PeerCertificates[0]
		if now := time.Now(); now.After(leaf.NotAfter) || now.Before(leaf.NotBefore) {
			t.Fatalf("%s: controller certificate valid %v to %v, now %v", what, leaf.NotBefore, leaf.NotAfter, now)
		}
		return leaf.SerialNumber.String()
	}
	crmTLS := cr.Certificate.Bundle(ca.Pool()).ClientConfig()
	ccrmTLS := rr.Certificate.Bundle(ca.Pool()).ClientConfig()
	health := healthpb.NewHealthClient(conn)
	serials := map[string]bool{}
	end := time.Now().Add(*certTraffic)
	for i := 0; time.Now().Before(end); i++ {
		if _, err := health.Check(ctx, &healthpb.HealthCheckRequest{}); err != nil {
			t.Fatalf("call %d on the first connection: %v", i, err)
		}
		show, err := cloudlets.ShowCloudlets(ctx, &edgeproto.ShowCloudletsRequest{})
		for err == nil {
			_, err = show.Recv()
		}
		if err != io.EOF {
			t.Fatalf("show %d on the first connection: %v", i, err)
		}
		serials[fresh("a user", serverOnly)] = true
		// With the certificates the CRM and the replica present now.
		fresh("the CRM's certificate", crmTLS)
		fresh("the replica's certificate", ccrmTLS)
		time.Sleep(100 * time.Millisecond) // paces the traffic; nothing waits on it
	}

	// The stream opened before the renewals is the one still up.
	if line, _ := metric("edgekit_crm_connected "); line != "edgekit_crm_connected 1" {
		t.Errorf("CRM: %q, want connected", line)
	}
	if line, ok := metric("edgekit_crm_streams_total"); ok {
		t.Errorf("the CRM's notify stream ended during the renewals: %s", line)
	}
	if len(serials) < 3 {
		t.Errorf("new handshakes saw %d controller certificates over %v, want at least 3", len(serials), *certTraffic)
	}
	if n := cr.Certificate.Renewals(); n < 3 {
		t.Errorf("CRM certificate renewed %d times, want at least 3", n)
	}
	if n := rr.RenewalsAsked(); n < 3 {
		t.Errorf("replica certificate renewed %d times as the controller asked, want at least 3 (%d in all)", n, rr.Certificate.Renewals())
	}
	// The replica still serves: a cloudlet created after the renewals
	// becomes READY through it, and the CRM's cloudlet is still READY.
	create("offsite2", false)
	waitReady("offsite2")
	waitReady("site1")
}

// renewThroughValidity is the life of the certificates in
// TestCRMRenewsThroughController. A CRM renews at two thirds of its
// certificate's life, through a call to the controller: 8 seconds leave
// that call almost 3 seconds, which a loaded machine needs.
const renewThroughValidity = 8 * time.Second

// TestCRMRenewsThroughController runs a CRM given its certificate as files
// (not the authority's key) with --tls-renew: it renews through the
// controller, several times over a few lives of the certificate, without
// dropping its notify stream, and writes each certificate back to its
// files. The controller renews only the caller's own identity.
func TestCRMRenewsThroughController(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs for about 25 seconds")
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	cctx, stopController := context.WithCancel(ctx)
	ready := make(chan *controller.Running, 1)
	wg.Go(func() {
		if err := controller.Run(cctx, controller.Options{DataDir: dir, Listen: "127.0.0.1:0", MetricsListen: "", DevTLS: true,
			DevTLSValidity: renewThroughValidity, Logger: testLogger(), Ready: func(r *controller.Running) { ready <- r }}); err != nil {
			t.Errorf("controller: %v", err)
		}
	})
	t.Cleanup(func() { stopController(); wg.Wait() })
	var r *controller.Running
	select {
	case r = <-ready:
	case <-ctx.Done():
		t.Fatal("controller not ready")
	}
	ca, err := devtls.OpenCA(filepath.Join(dir, "tls"))
	if err != nil {
		t.Fatal(err)
	}
	admin, err := os.ReadFile(r.AdminTokenFile)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient(r.Addr, grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: ca.Pool(), MinVersion: tls.VersionTLS13})),
		grpc.WithPerRPCCredentials(controllertest.BearerToken(strings.TrimSpace(string(admin)))))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	site := &edgeproto.CloudletKey{Organization: "operator", Name: "site1"}
	cs, err := edgeproto.NewCloudletServiceClient(conn).CreateCloudlet(ctx, &edgeproto.CreateCloudletRequest{
		Cloudlet: &edgeproto.Cloudlet{Key: site, PlatformType: "fake", CrmOnEdge: true}, NoWait: true})
	if err != nil {
		t.Fatal(err)
	}
	first, err := cs.Recv()
	if err != nil {
		t.Fatal(err)
	}
	// The CRM's files: its certificate and key, and the authority's
	// certificate; not the authority's key.
	crmDir := t.TempDir()
	keyFile := filepath.Join(crmDir, "access.key")
	if err := os.WriteFile(keyFile, []byte(first.GetCrmAccessKey()), 0o600); err != nil {
		t.Fatal(err)
	}
	name := notify.CRMCertName(site)
	b, err := ca.Issue(name, devtls.LeafOptions{Validity: renewThroughValidity})
	if err != nil {
		t.Fatal(err)
	}
	certFile, certKeyFile := filepath.Join(crmDir, "crm.crt"), filepath.Join(crmDir, "crm.key")
	for src, dst := range map[string]string{ca.CertPath(name): certFile, ca.KeyPath(name): certKeyFile} {
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	files, err := devtls.FileRenewer(certFile, certKeyFile, 0, nil)
	if err != nil {
		t.Fatal(err)
	}

	// The API renews the caller's own identity only.
	certs := rmv1.NewCertificateServiceClient(mustConn(t, r.Addr, b.ClientConfig()))
	if _, err := certs.RenewCertificate(ctx, &rmv1.RenewCertificateRequest{Csr: newCSR(t, "controller")}); status.Code(err) != codes.PermissionDenied {
		t.Errorf("a CRM asking for the controller's name: %v, want PermissionDenied", err)
	}
	anon := rmv1.NewCertificateServiceClient(mustConn(t, r.Addr, &tls.Config{RootCAs: ca.Pool(), MinVersion: tls.VersionTLS13}))
	if _, err := anon.RenewCertificate(ctx, &rmv1.RenewCertificateRequest{Csr: newCSR(t, name)}); status.Code(err) != codes.Unauthenticated {
		t.Errorf("no client certificate: %v, want Unauthenticated", err)
	}

	crmCtx, stopCRM := context.WithCancel(ctx)
	crmReady := make(chan *crm.Running, 1)
	var cwg sync.WaitGroup
	defer func() { stopCRM(); cwg.Wait() }()
	cwg.Go(func() {
		err := crm.Run(crmCtx, crm.Options{Controller: r.Addr, Cloudlet: "operator/site1", AccessKeyFile: keyFile, Platform: "fake",
			StateDir: t.TempDir(), MetricsListen: "127.0.0.1:0", Logger: testLogger(),
			TLS:        &tls.Config{RootCAs: ca.Pool(), MinVersion: tls.VersionTLS13, GetClientCertificate: files.GetClientCertificate},
			TLSRenewer: files, RenewFromController: true,
			ReconnectMin: 20 * time.Millisecond, ReconnectMax: 200 * time.Millisecond,
			Ready: func(r *crm.Running) { crmReady <- r }})
		if err != nil {
			t.Errorf("crm: %v", err)
		}
	})
	var cr *crm.Running
	select {
	case cr = <-crmReady:
	case <-ctx.Done():
		t.Fatal("CRM not ready")
	}
	metric := func(name string) string {
		resp, err := http.Get("http://" + cr.MetricsAddr + "/metrics")
		if err != nil {
			return ""
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		for _, line := range strings.Split(string(body), "\n") {
			if strings.HasPrefix(line, name) {
				return line
			}
		}
		return ""
	}
	controllertest.WaitFor(t, 30*time.Second, "the CRM's notify stream up", func() bool {
		return metric("edgekit_crm_connected ") == "edgekit_crm_connected 1"
	})
	health := healthpb.NewHealthClient(conn)
	end := time.Now().Add(3 * renewThroughValidity)
	for i := 0; time.Now().Before(end); i++ {
		// A new connection with the certificate the CRM presents now.
		c := mustConn(t, r.Addr, cr.Certificate.Bundle(ca.Pool()).ClientConfig())
		if _, err := healthpb.NewHealthClient(c).Check(ctx, &healthpb.HealthCheckRequest{}); err != nil {
			t.Fatalf("call %d with the CRM's current certificate: %v", i, err)
		}
		_ = c.Close()
		if _, err := health.Check(ctx, &healthpb.HealthCheckRequest{}); err != nil {
			t.Fatalf("call %d on the first connection: %v", i, err)
		}
		time.Sleep(100 * time.Millisecond) // paces the traffic; nothing waits on it
	}
	if line := metric("edgekit_crm_connected "); line != "edgekit_crm_connected 1" {
		t.Errorf("CRM: %q, want connected", line)
	}
	if line := metric("edgekit_crm_streams_total"); line != "" {
		t.Errorf("the CRM's notify stream ended during the renewals: %s", line)
	}
	if n := cr.Certificate.Renewals(); n < 3 {
		t.Errorf("CRM certificate renewed %d times through the controller, want at least 3", n)
	}
	onDisk, err := devtls.LoadBundle(certFile, certKeyFile, filepath.Join(ca.Dir(), devtls.CACertFile))
	if err != nil {
		t.Fatal(err)
	}
	if cur := cr.Certificate.Current().Leaf; !onDisk.Certificate.Leaf.Equal(cur) && onDisk.Certificate.Leaf.NotAfter.Before(cur.NotAfter) {
		t.Errorf("the files hold a certificate until %v, the CRM presents one until %v", onDisk.Certificate.Leaf.NotAfter, cur.NotAfter)
	}
	if onDisk.Certificate.Leaf.Equal(b.Certificate.Leaf) {
		t.Error("the renewed certificates were not written to the CRM's files")
	}
}

func mustConn(t *testing.T, addr string, cfg *tls.Config) *grpc.ClientConn {
	t.Helper()
	c, err := grpc.NewClient(addr, grpc.WithTransportCredentials(credentials.NewTLS(cfg)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func newCSR(t *testing.T, name string) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: name}}, key)
	if err != nil {
		t.Fatal(err)
	}
	return der
}
