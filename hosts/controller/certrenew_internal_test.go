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

// The CCRM renewal request is never written at the controller's start,
// whether there is none yet, a current one or an overdue one (a write
// there moved the store's revision past its caches' with no event of
// theirs, and a Show right after the start waited on the caches until its
// deadline); while the controller runs, it is written when due.
func TestTellCCRMsToRenewNotAtStart(t *testing.T) {
	t.Parallel()
	cli := etcdtest.New(t).Client()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	key := CertRenewalKey("r1")
	var logs logbuf.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	start := func(validity time.Duration) (stop func()) {
		rctx, cancel := context.WithCancel(ctx)
		var wg sync.WaitGroup
		wg.Go(func() { tellCCRMsToRenew(rctx, cli, "r1", validity, log) })
		return func() { cancel(); wg.Wait() }
	}
	put := func(expiringBefore time.Time) {
		t.Helper()
		v, err := json.Marshal(CertRenewal{ExpiringBefore: expiringBefore})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cli.Put(ctx, key, string(v)); err != nil {
			t.Fatal(err)
		}
	}
	const validity = time.Hour
	for _, c := range []struct {
		name   string
		before func()
	}{
		{"no request yet", func() {}},
		{"a current request", func() { put(time.Now().Add(validity / 2)) }},
		{"an overdue request", func() { put(time.Now().Add(-validity)) }},
	} {
		c.before()
		resp, err := cli.Get(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		w := cli.Watch(ctx, key, clientv3.WithRev(resp.Header.Revision+1))
		looks := strings.Count(logs.String(), "start=true")
		stop := start(validity)
		for done := false; !done; {
			select {
			case resp := <-w:
				if len(resp.Events) > 0 {
					t.Fatalf("%s: the request was written at the controller's start", c.name)
				}
			case <-time.After(20 * time.Millisecond):
				done = strings.Count(logs.String(), "start=true") > looks
			case <-ctx.Done():
				t.Fatalf("%s: neither a write nor the start's look; log:\n%s", c.name, logs.String())
			}
		}
		stop()
	}

	// Running, with a validity of a fraction of a second: the overdue
	// request is written again, naming half a validity ahead.
	const short = 400 * time.Millisecond
	stop := start(short)
	defer stop()
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := cli.Get(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Kvs) == 1 {
			r, err := ParseCertRenewal(resp.Kvs[0].Value)
			if err != nil {
				t.Fatal(err)
			}
			if r.ExpiringBefore.After(time.Now().Add(-validity / 2)) {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the due request not written within 20s; log:\n%s", logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
