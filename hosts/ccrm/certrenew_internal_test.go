package ccrm

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgekit/edgekit/hosts/controller"
	"github.com/edgekit/edgekit/internal/devtls"
	"github.com/edgekit/edgekit/internal/testenv/etcdtest"
)

// A replica applies the renewal request made while it was away as soon as
// it connects, then each new one; a request it cannot read changes
// nothing.
func TestFollowCertRenewals(t *testing.T) {
	t.Parallel()
	e := etcdtest.New(t)
	cli := e.Client()
	ca, err := devtls.OpenCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	r, err := ca.Renewer(controller.CCRMCertName, devtls.LeafOptions{Validity: time.Hour}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	key := controller.CertRenewalKey("r1")
	put := func(v string) {
		t.Helper()
		if _, err := cli.Put(ctx, key, v); err != nil {
			t.Fatal(err)
		}
	}
	ask := func(before time.Time) string {
		b, err := json.Marshal(controller.CertRenewal{ExpiringBefore: before})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	// Asked while the replica was away: every certificate expiring within
	// two hours (this one expires within one).
	put(ask(time.Now().Add(2 * time.Hour)))
	first := r.Current().Leaf

	var asked atomic.Int64
	fctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { followCertRenewals(fctx, cli, "r1", r, &asked, slog.New(slog.DiscardHandler)) })
	defer func() { stop(); wg.Wait() }()
	waitUntil(t, 20*time.Second, "the renewal asked before the replica connected", func() bool { return asked.Load() == 1 })
	if r.Current().Leaf.Equal(first) {
		t.Fatal("the certificate was not renewed")
	}

	// A request the current certificate already outlives changes nothing;
	// one it does not is applied; a bad one is ignored.
	put(ask(time.Now().Add(time.Minute)))
	put("not json")
	second := r.Current().Leaf
	put(ask(second.NotAfter.Add(time.Hour)))
	waitUntil(t, 20*time.Second, "the second renewal", func() bool { return asked.Load() == 2 })
	if r.Current().Leaf.Equal(second) {
		t.Fatal("the second request did not renew")
	}
}

func waitUntil(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
