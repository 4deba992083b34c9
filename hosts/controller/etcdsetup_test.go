package controller_test

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"

	"github.com/edgekit/edgekit/hosts/controller"
	"github.com/edgekit/edgekit/internal/devtls"
	"github.com/edgekit/edgekit/internal/etcd"
	"github.com/edgekit/edgekit/internal/testenv/etcdtest"
)

// controller etcd-setup gives an external cluster (TLS with client
// certificates, authentication off) the region's users and roles, turns
// authentication on, and runs again once it is on.
func TestEtcdSetupOnAnExternalCluster(t *testing.T) {
	t.Parallel()
	tlsDir := filepath.Join(t.TempDir(), "tls")
	ca, err := devtls.OpenCA(tlsDir)
	if err != nil {
		t.Fatal(err)
	}
	st, err := etcd.DevServerTLS(ca, "ctl")
	if err != nil {
		t.Fatal(err)
	}
	srv := etcdtest.New(t, etcdtest.WithConfig(func(c *etcd.EmbedConfig) { c.ClientTLS = st }))
	eps := srv.Embedded().Endpoints()
	args := []string{"--etcd-endpoints", eps[0], "--region", "west", "--etcd-ca-file", filepath.Join(tlsDir, devtls.CACertFile),
		"--etcd-cert-file", st.ClientCertFile, "--etcd-key-file", st.ClientKeyFile, "--ccrm-users", "c1", "--fluidos-nodes", "n1"}
	for range 2 {
		var out, errOut bytes.Buffer
		if err := controller.EtcdSetupMain(context.Background(), args, &out, &errOut); err != nil {
			t.Fatalf("etcd-setup: %v\n%s", err, errOut.String())
		}
		if !strings.Contains(out.String(), "authentication is on") {
			t.Errorf("etcd-setup said %q", out.String())
		}
	}
	ctx := testCtx(t)
	c1 := devEtcdClient(t, tlsDir, "c1", eps)
	if _, err := c1.Put(ctx, controller.ClaimKey("/edgekit/west/", "App", "a"), "c1"); err != nil {
		t.Errorf("the CCRM writes a claim: %v", err)
	}
	if _, err := c1.Put(ctx, "/edgekit/west/App/a", "{}"); !errors.Is(err, rpctypes.ErrPermissionDenied) {
		t.Errorf("the CCRM writes an App: %v", err)
	}
	n1 := devEtcdClient(t, tlsDir, "n1", eps)
	if _, err := n1.Put(ctx, "/edgekit/n1/Contract/x", "{}"); err != nil {
		t.Errorf("the node writes its store: %v", err)
	}
	if _, err := n1.Get(ctx, "/edgekit/west/App/a"); !errors.Is(err, rpctypes.ErrPermissionDenied) {
		t.Errorf("the node reads the region: %v", err)
	}
	if _, err := devEtcdClient(t, tlsDir, "ctl", eps).Put(ctx, "/edgekit/west/App/a", "{}"); err != nil {
		t.Errorf("the controller writes: %v", err)
	}

	var out bytes.Buffer
	if err := controller.EtcdSetupMain(context.Background(), []string{"--print", "--region", "west", "--ccrm-users", "c1"}, &out, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"etcdctl role grant-permission edgekit-west-ccrm readwrite --prefix=true /edgekit/west/ccrm/claims/\n",
		"etcdctl user add c1 --no-password\n", "etcdctl user grant-role controller root\n", "etcdctl auth enable\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("--print: no %q in\n%s", want, out.String())
		}
	}
	if err := controller.EtcdSetupMain(context.Background(), []string{"--region", "west"}, &out, &out); err == nil || !strings.Contains(err.Error(), "--etcd-endpoints is required") {
		t.Errorf("without endpoints: %v", err)
	}
}
