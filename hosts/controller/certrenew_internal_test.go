package controller

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/edgekit/edgekit/internal/testenv/etcdtest"
	"github.com/edgekit/edgekit/internal/testenv/logbuf"
)

// The CCRM renewal request is written when it is due only: a controller
// started again soon after it stopped writes nothing at its start (a
// write there moved the store's revision past its caches' with no event of
// theirs, and a Show right after the start waited on the caches until its
// deadline); one whose request is a quarter of validity old writes it
// again.
func TestTellCCRMsToRenewWritesOnlyWhenDue(t *testing.T) {
	t.Parallel()
	cli := etcdtest.New(t).Client()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const validity = time.Hour
	key := CertRenewalKey("r1")
	var logs logbuf.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	start := func() (stop func()) {
		rctx, cancel := context.WithCancel(ctx)
		var wg sync.WaitGroup
		wg.Go(func() { tellCCRMsToRenew(rctx, cli, "r1", validity, log) })
		return func() { cancel(); wg.Wait() }
	}
	stored := func() (CertRenewal, int64) {
		t.Helper()
		resp, err := cli.Get(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Kvs) == 0 {
			return CertRenewal{}, 0
		}
		r, err := ParseCertRenewal(resp.Kvs[0].Value)
		if err != nil {
			t.Fatal(err)
		}
		return r, resp.Kvs[0].ModRevision
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s; log:\n%s", what, logs.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	// First start: no request yet, one is written.
	stop := start()
	waitFor("the first request", func() bool { _, rev := stored(); return rev != 0 })
	stop()
	first, rev := stored()
	if left := time.Until(first.ExpiringBefore); left < validity/2-time.Minute || left > validity/2 {
		t.Errorf("the request names %v, want half a validity ahead", first.ExpiringBefore)
	}

	// Started again: the request is current, nothing is written.
	w := cli.Watch(ctx, key, clientv3.WithRev(rev+1))
	stop = start()
	for done := false; !done; {
		select {
		case resp := <-w:
			if len(resp.Events) > 0 {
				t.Fatalf("the request was written again at a start %v after the last one", time.Since(first.ExpiringBefore.Add(-validity/2)).Round(time.Millisecond))
			}
		case <-time.After(20 * time.Millisecond):
			done = strings.Contains(logs.String(), "renewal request is still current")
		case <-ctx.Done():
			t.Fatalf("neither a write nor a current request seen; log:\n%s", logs.String())
		}
	}
	stop()

	// A request a quarter of validity old is due: written again.
	old, err := json.Marshal(CertRenewal{ExpiringBefore: time.Now().Add(validity/4 - time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Put(ctx, key, string(old)); err != nil {
		t.Fatal(err)
	}
	stop = start()
	waitFor("the due request written", func() bool {
		r, _ := stored()
		return time.Until(r.ExpiringBefore) > validity/2-time.Minute
	})
	stop()
}
