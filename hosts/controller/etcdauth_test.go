package controller_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/hosts/ccrm/reservations"
	"github.com/edgekit/edgekit/hosts/controller"
	"github.com/edgekit/edgekit/hosts/controller/controllertest"
	"github.com/edgekit/edgekit/internal/devtls"
	"github.com/edgekit/edgekit/internal/etcd"
	"github.com/edgekit/edgekit/internal/store"
	"github.com/edgekit/edgekit/internal/testenv/freeport"
)

// devEtcdClient connects to endpoints as the etcd user named user, with a
// certificate of the controller's development authority.
func devEtcdClient(t *testing.T, tlsDir, user string, endpoints []string) *clientv3.Client {
	t.Helper()
	ca, err := devtls.OpenCA(tlsDir)
	if err != nil {
		t.Fatal(err)
	}
	cc, err := etcd.DevClientConfig(ca, user, endpoints)
	if err != nil {
		t.Fatal(err)
	}
	cli, err := etcd.NewClient(cc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cli.Close() })
	return cli
}

// Under --dev-tls the embedded etcd serves TLS and authenticates: a client
// without a certificate gets nothing; a CCRM's user reads the region and
// writes its claims and reservations, but no object; the controller's
// own writes go through; and a restart applies the roles again.
func TestDevTLSEtcdAuthentication(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	opts := controller.Options{DataDir: dir, Region: "r", Listen: freeport.Addr(t), DevTLS: true, StopTimeout: 2 * time.Second,
		EtcdCCRMUsers: []string{"ccrm-a", "ccrm-b"}}
	run, stop := startController(t, opts)
	if !run.EtcdAuth || len(run.EtcdEndpoints) != 1 || !strings.HasPrefix(run.EtcdEndpoints[0], "https://") {
		t.Fatalf("etcd auth %v on %v: want authentication over https", run.EtcdAuth, run.EtcdEndpoints)
	}
	ctx := testCtx(t)
	pool := mustCAPool(t, run.CAFile)
	conn, err := grpc.NewClient(run.Addr, grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12})),
		grpc.WithPerRPCCredentials(controllertest.BearerToken(readToken(t, run.AdminTokenFile))))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if _, err := clientsOf(conn).flavors.CreateFlavor(ctx, &edgeproto.CreateFlavorRequest{Flavor: &edgeproto.Flavor{Key: &edgeproto.FlavorKey{Name: "f1"}}}); err != nil {
		t.Fatalf("the controller writes to its etcd: %v", err)
	}

	// No certificate: refused, whether the client trusts the server or not.
	for _, cc := range []etcd.ClientConfig{
		{Endpoints: run.EtcdEndpoints, CAFile: run.CAFile, DialTimeout: 2 * time.Second},
		{Endpoints: []string{"http://" + strings.TrimPrefix(run.EtcdEndpoints[0], "https://")}, DialTimeout: 2 * time.Second},
	} {
		cli, err := etcd.NewClient(cc)
		if err != nil {
			t.Fatal(err)
		}
		rctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		_, err = cli.Get(rctx, "/edgekit/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
		cancel()
		cli.Close()
		if err == nil {
			t.Errorf("%s without a client certificate read the store", cc.Endpoints[0])
		}
	}
	// A certificate of the authority that names no etcd user: refused.
	tlsDir := filepath.Join(dir, "tls")
	if _, err := devEtcdClient(t, tlsDir, "stranger", run.EtcdEndpoints).Get(ctx, "/edgekit/", clientv3.WithPrefix()); err == nil {
		t.Error("an unknown etcd user read the store")
	}

	for _, user := range []string{"ccrm-a", "ccrm-b"} {
		cli := devEtcdClient(t, tlsDir, user, run.EtcdEndpoints)
		st, err := store.New(cli, "r")
		if err != nil {
			t.Fatal(err)
		}
		flavors := store.NewKind[*edgeproto.Flavor](st)
		if got, _, err := flavors.List(ctx); err != nil || len(got) != 1 || got[0].GetKey().GetName() != "f1" {
			t.Fatalf("%s reads the flavors: %v %v", user, got, err)
		}
		if _, err := flavors.Put(ctx, &edgeproto.Flavor{Key: &edgeproto.FlavorKey{Name: "f1"}, Vcpus: 99}); !errors.Is(err, rpctypes.ErrPermissionDenied) {
			t.Errorf("%s overwrites a flavor: %v, want permission denied", user, err)
		}
		if _, err := store.NewKind[*edgeproto.Cloudlet](st).Create(ctx, &edgeproto.Cloudlet{Key: &edgeproto.CloudletKey{Organization: "op", Name: user}}); !errors.Is(err, rpctypes.ErrPermissionDenied) {
			t.Errorf("%s creates a Cloudlet: %v, want permission denied", user, err)
		}
		if _, err := store.NewKind[*edgeproto.App](st).Create(ctx, &edgeproto.App{Key: &edgeproto.AppKey{Organization: "dev", Name: user, Version: "1"}}); !errors.Is(err, rpctypes.ErrPermissionDenied) {
			t.Errorf("%s creates an App: %v, want permission denied", user, err)
		}
		if _, err := cli.Delete(ctx, st.Prefix(), clientv3.WithPrefix()); !errors.Is(err, rpctypes.ErrPermissionDenied) {
			t.Errorf("%s deletes the region: %v, want permission denied", user, err)
		}
		// Its own prefixes: a claim bound to its lease, a reservation.
		lease, err := cli.Grant(ctx, 5)
		if err != nil {
			t.Fatalf("%s grants a lease: %v", user, err)
		}
		claim := controller.ClaimKey(st.Prefix(), "ClusterInst", "c-"+user)
		if _, err := cli.Put(ctx, claim, user, clientv3.WithLease(lease.ID)); err != nil {
			t.Errorf("%s writes its claim: %v", user, err)
		}
		res := st.Prefix() + reservations.Prefix + "op/cl/port/" + user
		if _, err := cli.Put(ctx, res, user); err != nil {
			t.Errorf("%s writes a reservation: %v", user, err)
		}
		if _, err := cli.Delete(ctx, res); err != nil {
			t.Errorf("%s deletes a reservation: %v", user, err)
		}
		if _, err := cli.Revoke(ctx, lease.ID); err != nil {
			t.Errorf("%s revokes its lease: %v", user, err)
		}
	}

	// The key commands reach this etcd with the controller's certificate
	// from the data directory.
	var keysErr bytes.Buffer
	if err := controller.Main(ctx, []string{"keys", "list", "--data-dir", dir, "--region", "r"}, &keysErr); err != nil {
		t.Errorf("controller keys list on a --dev-tls controller: %v\n%s", err, keysErr.String())
	}

	// Started again on the same data without --dev-tls: refused, saying
	// why, rather than failing on its first request.
	stop()
	plain := opts
	plain.DevTLS = false
	if err := controller.Run(ctx, plain); err == nil || !strings.Contains(err.Error(), "has authentication on") {
		t.Errorf("started without --dev-tls on an authenticated etcd: %v", err)
	}

	// Started again on the same data, the controller finds authentication
	// on and applies its roles again, with a user fewer.
	opts.EtcdCCRMUsers = []string{"ccrm-a"}
	run, _ = startController(t, opts)
	a := devEtcdClient(t, tlsDir, "ccrm-a", run.EtcdEndpoints)
	if _, err := a.Put(ctx, controller.ClaimKey("/edgekit/r/", "App", "x"), "a"); err != nil {
		t.Errorf("ccrm-a after the restart: %v", err)
	}
	b := devEtcdClient(t, tlsDir, "ccrm-b", run.EtcdEndpoints)
	if _, err := b.Put(ctx, controller.ClaimKey("/edgekit/r/", "App", "y"), "b"); !errors.Is(err, rpctypes.ErrPermissionDenied) {
		t.Errorf("ccrm-b, no longer a CCRM user, writes a claim: %v", err)
	}
}

func mustCAPool(t *testing.T, caFile string) *x509.CertPool {
	t.Helper()
	b, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		t.Fatalf("%s holds no certificate", caFile)
	}
	return pool
}

func readToken(t *testing.T, file string) string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// Given certificate files instead of --dev-tls, the embedded etcd serves
// them and authenticates the same way; the controller is the user its
// client certificate names. Files that do not go together are refused,
// naming the flags.
func TestEmbeddedEtcdWithGivenCertificates(t *testing.T) {
	t.Parallel()
	tlsDir := filepath.Join(t.TempDir(), "pki")
	ca, err := devtls.OpenCA(tlsDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"etcd-server", "region-admin"} {
		if _, err := ca.Issue(n, devtls.LeafOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	caFile := filepath.Join(tlsDir, devtls.CACertFile)
	opts := controller.Options{DataDir: t.TempDir(), Region: "r", Listen: freeport.Addr(t), StopTimeout: 2 * time.Second,
		EtcdServerCertFile: ca.CertPath("etcd-server"), EtcdServerKeyFile: ca.KeyPath("etcd-server"), EtcdClientCAFile: caFile,
		EtcdCAFile: caFile, EtcdCertFile: ca.CertPath("region-admin"), EtcdKeyFile: ca.KeyPath("region-admin")}

	bad := opts
	bad.EtcdClientCAFile = ""
	if err := controller.Run(context.Background(), bad); err == nil || !strings.Contains(err.Error(), "--etcd-client-ca-file") {
		t.Errorf("a server certificate without a client CA: %v", err)
	}
	bad = opts
	bad.EtcdCertFile, bad.EtcdKeyFile = "", ""
	if err := controller.Run(context.Background(), bad); err == nil || !strings.Contains(err.Error(), "--etcd-cert-file") {
		t.Errorf("no client certificate for the controller: %v", err)
	}

	run, _ := startController(t, opts)
	if !run.EtcdAuth || !strings.HasPrefix(run.EtcdEndpoints[0], "https://") {
		t.Fatalf("etcd auth %v on %v: want authentication over https", run.EtcdAuth, run.EtcdEndpoints)
	}
	ctx := testCtx(t)
	if _, err := devEtcdClient(t, tlsDir, "region-admin", run.EtcdEndpoints).Put(ctx, "/edgekit/r/x", "v"); err != nil {
		t.Errorf("the controller's user writes: %v", err)
	}
	if _, err := devEtcdClient(t, tlsDir, "ccrm", run.EtcdEndpoints).Put(ctx, "/edgekit/r/x", "v"); !errors.Is(err, rpctypes.ErrPermissionDenied) {
		t.Errorf("the CCRM user writes an object: %v", err)
	}
	if _, err := devEtcdClient(t, tlsDir, "controller", run.EtcdEndpoints).Get(ctx, "/edgekit/r/x"); err == nil {
		t.Error("a certificate named controller, no user here, reads")
	}
}
