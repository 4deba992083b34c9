package controller_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/edgekit/edgekit/atrest"
	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/hosts/controller"
	"github.com/edgekit/edgekit/hosts/controller/controllertest"
	"github.com/edgekit/edgekit/internal/store"
	"github.com/edgekit/edgekit/internal/testenv/etcdtest"
)

// A controller started on a store written in clear (by a build without
// encryption) creates its key file (0600) under its data directory and
// seals the stored secrets in the background; the API still serves them
// to their owner's Show.
func TestRunMigratesPlaintextSecrets(t *testing.T) {
	srv := etcdtest.New(t)
	ctx := t.Context()
	old, err := store.New(srv.Client(), "r")
	if err != nil {
		t.Fatal(err)
	}
	const secret = "Planted-Secret-Migrated"
	app := appWithSecret("legacy")
	app.EnvVars[1].SecretValue = secret
	if _, err := store.NewKind[*edgeproto.App](old).Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	path := store.NewKind[*edgeproto.App](old).Path(app.GetKeyString())
	dir := t.TempDir()
	run, stop := startController(t, controller.Options{DataDir: dir, Region: "r", Listen: "127.0.0.1:0", EtcdEndpoints: srv.Endpoints()})
	defer stop()
	fi, err := os.Stat(filepath.Join(dir, atrest.DefaultKeyFileName))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v, %v; want it created with mode 0600", fi, err)
	}
	var raw []byte
	controllertest.WaitFor(t, 30*time.Second, "the legacy App sealed", func() bool {
		resp, err := srv.Client().Get(ctx, path, clientv3.WithPrefix())
		if err != nil || len(resp.Kvs) != 1 {
			return false
		}
		raw = resp.Kvs[0].Value
		return atrest.IsSealed(raw)
	})
	if bytes.Contains(raw, []byte(secret)) {
		t.Fatalf("the sealed value holds the secret")
	}
	tok, err := os.ReadFile(run.AdminTokenFile)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient(run.Addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithPerRPCCredentials(controllertest.BearerToken(string(bytes.TrimSpace(tok)))))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	got, err := edgeproto.NewAppServiceClient(conn).ShowApps(ctx, &edgeproto.ShowAppsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	a, err := got.Recv()
	if err != nil || a.GetApp().GetKey().GetName() != "legacy" {
		t.Fatalf("Show after the migration: %v, %v", a, err)
	}
}
