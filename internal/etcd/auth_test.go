package etcd_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/edgekit/edgekit/internal/devtls"
	"github.com/edgekit/edgekit/internal/etcd"
)

// authMember starts a member over TLS with authentication on, whose own
// client is the administrator "admin".
func authMember(t *testing.T, p etcd.AuthPolicy) (*etcd.Embedded, *devtls.CA) {
	t.Helper()
	ca, err := devtls.OpenCA(filepath.Join(t.TempDir(), "tls"))
	if err != nil {
		t.Fatal(err)
	}
	tlsCfg, err := etcd.DevServerTLS(ca, "admin")
	if err != nil {
		t.Fatal(err)
	}
	return start(t, etcd.EmbedConfig{DataDir: t.TempDir(), ClientTLS: tlsCfg, Auth: &p}), ca
}

// clientAs connects to m with a certificate of ca named user.
func clientAs(t *testing.T, m *etcd.Embedded, ca *devtls.CA, user string) *clientv3.Client {
	t.Helper()
	cc, err := etcd.DevClientConfig(ca, user, m.Endpoints())
	if err != nil {
		t.Fatal(err)
	}
	cc.DialTimeout = 2 * time.Second
	cli, err := etcd.NewClient(cc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cli.Close() })
	return cli
}

var testPolicy = etcd.AuthPolicy{
	Roles: []etcd.Role{{Name: "worker", Permissions: []etcd.Permission{{Prefix: "/r/"}, {Prefix: "/r/work/", Write: true}}}},
	Users: []etcd.User{{Name: "admin", Roles: []string{etcd.RootRole}}, {Name: "w1", Roles: []string{"worker"}}},
}

func TestAuthRefusesClientsWithoutCredentials(t *testing.T) {
	t.Parallel()
	m, ca := authMember(t, testPolicy)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := m.Client().Put(ctx, "/r/obj", "v"); err != nil {
		t.Fatalf("the administrator writes: %v", err)
	}
	if eps := m.Endpoints(); !strings.HasPrefix(eps[0], "https://") {
		t.Fatalf("endpoints %v: want https", eps)
	}
	// Trusting the server but presenting no certificate: the handshake
	// fails, no request gets through.
	noCert, err := etcd.NewClient(etcd.ClientConfig{Endpoints: m.Endpoints(), CAFile: filepath.Join(ca.Dir(), devtls.CACertFile), DialTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer noCert.Close()
	rctx, rcancel := context.WithTimeout(ctx, 3*time.Second)
	if _, err := noCert.Get(rctx, "/r/obj"); err == nil {
		t.Fatal("a client without a certificate read a key")
	}
	rcancel()
	// Plain HTTP on the TLS port.
	plain, err := etcd.NewClient(etcd.ClientConfig{Endpoints: []string{"http://" + strings.TrimPrefix(m.Endpoints()[0], "https://")}, DialTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	rctx, rcancel = context.WithTimeout(ctx, 3*time.Second)
	if _, err := plain.Get(rctx, "/r/obj"); err == nil {
		t.Fatal("a plain client read a key")
	}
	rcancel()
	// A certificate of the authority whose name is no user.
	if _, err := clientAs(t, m, ca, "stranger").Get(ctx, "/r/obj"); err == nil {
		t.Fatal("a certificate of no user read a key")
	}
}

func TestAuthRolesLimitWrites(t *testing.T) {
	t.Parallel()
	m, ca := authMember(t, testPolicy)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := m.Client().Put(ctx, "/r/obj", "v"); err != nil {
		t.Fatal(err)
	}
	w := clientAs(t, m, ca, "w1")
	if resp, err := w.Get(ctx, "/r/obj"); err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("the worker reads its prefix: %v %v", resp, err)
	}
	if _, err := w.Put(ctx, "/r/work/x", "v"); err != nil {
		t.Fatalf("the worker writes under its write prefix: %v", err)
	}
	for _, k := range []string{"/r/obj", "/r/workx", "/other"} {
		if _, err := w.Put(ctx, k, "v"); !errors.Is(err, rpctypes.ErrPermissionDenied) {
			t.Errorf("worker put %s: %v, want permission denied", k, err)
		}
	}
	if _, err := w.Delete(ctx, "/r/obj"); !errors.Is(err, rpctypes.ErrPermissionDenied) {
		t.Errorf("worker delete: %v, want permission denied", err)
	}
	if _, err := w.Get(ctx, "/other"); !errors.Is(err, rpctypes.ErrPermissionDenied) {
		t.Errorf("worker reads outside its prefix: %v, want permission denied", err)
	}
	if _, err := w.UserAddWithOptions(ctx, "w2", "", &clientv3.UserAddOptions{NoPassword: true}); err == nil {
		t.Error("the worker added a user")
	}
}

// TestAuthPolicyAppliedAgain restarts a member with a narrower policy:
// the permission and the role taken away are revoked, and what stays
// keeps working.
func TestAuthPolicyAppliedAgain(t *testing.T) {
	t.Parallel()
	m, ca := authMember(t, testPolicy)
	cfg := m.Config()
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	narrow := etcd.AuthPolicy{
		Roles: []etcd.Role{{Name: "worker", Permissions: []etcd.Permission{{Prefix: "/r/"}}}, {Name: "other"}},
		Users: []etcd.User{{Name: "admin", Roles: []string{etcd.RootRole}}, {Name: "w1", Roles: []string{"other"}}, {Name: "w2", Roles: []string{"worker"}}},
	}
	cfg.Auth = &narrow
	m2 := start(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := m2.Client().Put(ctx, "/r/obj", "v"); err != nil {
		t.Fatal(err)
	}
	if _, err := clientAs(t, m2, ca, "w2").Put(ctx, "/r/work/x", "v"); !errors.Is(err, rpctypes.ErrPermissionDenied) {
		t.Errorf("w2 writes a prefix the policy no longer grants: %v", err)
	}
	if _, err := clientAs(t, m2, ca, "w2").Get(ctx, "/r/obj"); err != nil {
		t.Errorf("w2 reads: %v", err)
	}
	if _, err := clientAs(t, m2, ca, "w1").Get(ctx, "/r/obj"); !errors.Is(err, rpctypes.ErrPermissionDenied) {
		t.Errorf("w1 lost the worker role but reads: %v", err)
	}
}

func TestAuthPolicyValidate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		p    etcd.AuthPolicy
		want string
	}{
		{etcd.AuthPolicy{Users: []etcd.User{{Name: "a"}}}, "no user has the \"root\" role"},
		{etcd.AuthPolicy{Users: []etcd.User{{Name: "a", Roles: []string{"root", "x"}}}}, "role \"x\" is not in the policy"},
		{etcd.AuthPolicy{Roles: []etcd.Role{{Name: "x", Permissions: []etcd.Permission{{}}}}, Users: []etcd.User{{Name: "a", Roles: []string{"root"}}}}, "empty prefix"},
		{etcd.AuthPolicy{Users: []etcd.User{{Name: "a b", Roles: []string{"root"}}}}, "user name \"a b\""},
	} {
		if err := tc.p.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.p, err, tc.want)
		}
	}
	if _, err := etcd.StartEmbedded(context.Background(), etcd.EmbedConfig{DataDir: t.TempDir(), Auth: &testPolicy}); err == nil || !strings.Contains(err.Error(), "needs client TLS") {
		t.Errorf("auth without TLS: %v", err)
	}
}
