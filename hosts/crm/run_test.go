package crm_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/hosts/controller"
	"github.com/edgekit/edgekit/hosts/controller/controllertest"
	"github.com/edgekit/edgekit/hosts/controller/notify"
	"github.com/edgekit/edgekit/hosts/crm"
	"github.com/edgekit/edgekit/internal/devtls"
	"github.com/edgekit/edgekit/internal/store"
	"github.com/edgekit/edgekit/platforms"
	notifyv1 "github.com/edgekit/edgekit/proto/edgekit/notify/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"
)

// TestRunWithDevTLS runs a controller process and a CRM process (in this
// test's process) as their mains do, with mutual TLS from the development
// authority.
func TestRunWithDevTLS(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx := testCtx(t)
	cctx, stopController := context.WithCancel(ctx)
	ready := make(chan *controller.Running, 1)
	var wg sync.WaitGroup
	t.Cleanup(func() { stopController(); wg.Wait() })
	wg.Go(func() {
		err := controller.Run(cctx, controller.Options{DataDir: dir, Listen: "127.0.0.1:0", DevTLS: true, Logger: testLogger(),
			Ready: func(r *controller.Running) { ready <- r }})
		if err != nil {
			t.Errorf("controller: %v", err)
		}
	})
	var r *controller.Running
	select {
	case r = <-ready:
	case <-ctx.Done():
		t.Fatal("controller not ready")
	}
	pem, err := os.ReadFile(r.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	serverOnly := credentials.NewTLS(&tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS13})
	admin, err := os.ReadFile(r.AdminTokenFile)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient(r.Addr, grpc.WithTransportCredentials(serverOnly),
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
	if err != nil || first.GetCrmAccessKey() == "" {
		t.Fatalf("create cloudlet: %v %v", first, err)
	}
	key := first.GetCrmAccessKey()

	// TLS without a client certificate: the notify stream is refused even
	// with the right key.
	st, err := notifyv1.NewNotifyServiceClient(conn).Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// io.EOF: the server ended the stream already; Recv says why.
	if err := st.Send(&notifyv1.ConnectRequest{Msg: &notifyv1.ConnectRequest_Hello{Hello: &notifyv1.Hello{CloudletKey: site, AccessKey: key}}}); err != nil && !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	if _, err := st.Recv(); status.Code(err) != codes.Unauthenticated {
		t.Fatalf("notify without a client certificate: %v, want Unauthenticated", err)
	}

	// Another site's CRM, with its own certificate of the authority and
	// site1's stolen key, is refused: the certificate names site2.
	ca, err := devtls.OpenCA(filepath.Join(dir, "tls"))
	if err != nil {
		t.Fatal(err)
	}
	other, err := ca.Issue(notify.CRMCertName(&edgeproto.CloudletKey{Organization: "operator", Name: "site2"}), devtls.LeafOptions{})
	if err != nil {
		t.Fatal(err)
	}
	otherConn, err := grpc.NewClient(r.Addr, grpc.WithTransportCredentials(credentials.NewTLS(other.ClientConfig())))
	if err != nil {
		t.Fatal(err)
	}
	defer otherConn.Close()
	st, err = notifyv1.NewNotifyServiceClient(otherConn).Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// io.EOF: the server ended the stream already; Recv says why.
	if err := st.Send(&notifyv1.ConnectRequest{Msg: &notifyv1.ConnectRequest_Hello{Hello: &notifyv1.Hello{CloudletKey: site, AccessKey: key}}}); err != nil && !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	if _, err := st.Recv(); status.Code(err) != codes.Unauthenticated || !strings.Contains(err.Error(), "crm-operator.site2") {
		t.Fatalf("site2's certificate with site1's key: %v, want Unauthenticated naming the certificate", err)
	}

	// The key in a file, as an operator would keep it.
	keyFile := filepath.Join(t.TempDir(), "site1.key")
	if err := os.WriteFile(keyFile, []byte(key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	crmCtx, stopCRM := context.WithCancel(ctx)
	crmReady := make(chan *crm.Running, 1)
	var cwg sync.WaitGroup
	defer func() { stopCRM(); cwg.Wait() }()
	cwg.Go(func() {
		err := crm.Run(crmCtx, crm.Options{Controller: r.Addr, Cloudlet: "operator/site1", AccessKeyFile: keyFile, Platform: "fake",
			StateDir: t.TempDir(), DevTLSDir: filepath.Join(dir, "tls"), MetricsListen: "127.0.0.1:0", Logger: testLogger(),
			ReconnectMin: 20 * time.Millisecond, ReconnectMax: 200 * time.Millisecond,
			Ready: func(r *crm.Running) { crmReady <- r }})
		if err != nil {
			t.Errorf("crm: %v", err)
		}
	})
	cr := <-crmReady
	cloudlets := store.NewKind[*edgeproto.Cloudlet](r.Controller.Store())
	controllertest.WaitFor(t, 20*time.Second, "the cloudlet READY", func() bool {
		c, _, err := cloudlets.Get(ctx, (&edgeproto.Cloudlet{Key: site}).GetKeyString())
		return err == nil && c.GetState() == edgeproto.TrackedState_TRACKED_STATE_READY
	})
	controllertest.WaitFor(t, 10*time.Second, "/metrics to show the CRM connected", func() bool {
		resp, err := http.Get("http://" + cr.MetricsAddr + "/metrics")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return strings.Contains(string(b), "edgekit_crm_connected 1")
	})
}

func TestRunRefusesBadOptions(t *testing.T) {
	t.Parallel()
	loose := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(loose, []byte("k"), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := map[string]crm.Options{
		"no cloudlet":           {Controller: "127.0.0.1:1", AccessKey: "k", Platform: "fake"},
		"cloudlet without org":  {Controller: "127.0.0.1:1", Cloudlet: "/site", AccessKey: "k", Platform: "fake"},
		"no key":                {Controller: "127.0.0.1:1", Cloudlet: "o/s", Platform: "fake"},
		"key and file":          {Controller: "127.0.0.1:1", Cloudlet: "o/s", AccessKey: "k", AccessKeyFile: loose, Platform: "fake"},
		"world-readable key":    {Controller: "127.0.0.1:1", Cloudlet: "o/s", AccessKeyFile: loose, Platform: "fake"},
		"no controller address": {Cloudlet: "o/s", AccessKey: "k", Platform: "fake"},
		"missing key file":      {Controller: "127.0.0.1:1", Cloudlet: "o/s", AccessKeyFile: loose + ".none", Platform: "fake"},
	}
	for name, o := range bad {
		if err := crm.Run(context.Background(), o); !errors.Is(err, crm.ErrConfig) {
			t.Errorf("%s: Run = %v, want ErrConfig", name, err)
		}
	}
	err := crm.Run(context.Background(), crm.Options{Controller: "127.0.0.1:1", Cloudlet: "o/s", AccessKey: "k", Platform: "nope"})
	if !errors.Is(err, platforms.ErrUnknownPlatform) {
		t.Errorf("unknown platform: Run = %v, want ErrUnknownPlatform", err)
	}
}
