package etcd_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"os"
	"testing"
	"time"

	"github.com/edgekit/edgekit/internal/devtls"
	"github.com/edgekit/edgekit/internal/etcd"
)

// A host's serving certificate and its etcd client certificate have one
// Common Name (the controller's "controller", a FLUIDOS node's id), and
// the serving one is renewed while the host runs, here with a lifetime of
// seconds. The etcd member and its clients reload their files on each
// handshake: those files are not rewritten by the renewals, every load of
// them gives a matching pair, and new connections go on authenticating as
// the user.
func TestDevEtcdCertificatesOutliveRenewalsOfTheirName(t *testing.T) {
	t.Parallel()
	m, ca := authMember(t, testPolicy)
	cc, err := etcd.DevClientConfig(ca, "admin", m.Endpoints())
	if err != nil {
		t.Fatal(err)
	}
	cc.DialTimeout = 5 * time.Second
	before, err := os.ReadFile(cc.CertFile)
	if err != nil {
		t.Fatal(err)
	}
	r, err := ca.Renewer("admin", devtls.LeafOptions{Validity: 3 * time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = r.Start(ctx) }()
	t.Cleanup(func() { cancel(); <-done })

	deadline := time.Now().Add(90 * time.Second)
	conns := 0
	for r.Renewals() < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("the serving certificate was renewed %d times in 90s, want 3", r.Renewals())
		}
		if _, err := tls.LoadX509KeyPair(cc.CertFile, cc.KeyFile); err != nil {
			t.Fatalf("loading the etcd client's files while the certificate of its name is renewed: %v", err)
		}
		// A new client: a new handshake, reading the files now.
		cli, err := etcd.NewClient(cc)
		if err != nil {
			t.Fatal(err)
		}
		pctx, pcancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err = cli.Put(pctx, "/r/work/k", "v")
		pcancel()
		_ = cli.Close()
		if err != nil {
			t.Fatalf("a new etcd client while the certificate of its name is renewed: %v", err)
		}
		conns++
		time.Sleep(50 * time.Millisecond) // pacing, not synchronisation
	}
	after, err := os.ReadFile(cc.CertFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Errorf("the etcd client's certificate file was rewritten by renewals of the serving certificate of its name")
	}
	if got := r.Current().Leaf.Subject.CommonName; got != "admin" {
		t.Errorf("the renewed certificate's Common Name is %q, want admin", got)
	}
	if time.Until(r.Current().Leaf.NotAfter) > time.Minute {
		t.Errorf("the renewed certificate expires at %v, want within seconds", r.Current().Leaf.NotAfter)
	}
	t.Logf("%d new etcd connections over %d renewals", conns, r.Renewals())
}
