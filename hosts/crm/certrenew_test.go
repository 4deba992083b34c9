package crm_test

import (
	"context"
	"crypto/tls"
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
	"github.com/edgekit/edgekit/hosts/crm"
	"github.com/edgekit/edgekit/internal/devtls"
	"github.com/edgekit/edgekit/internal/store"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/peer"
)

// certValidity is the life of every certificate in TestCertificatesRenew:
// short enough that the test spans several renewals of each.
const certValidity = 4 * time.Second

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
		t.Skip("runs for about 20 seconds")
	}
	dir := t.TempDir()
	tlsDir := filepath.Join(dir, "tls")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
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
	end := time.Now().Add(5 * certValidity)
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
		t.Errorf("new handshakes saw %d controller certificates over %v, want at least 3", len(serials), 5*certValidity)
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
