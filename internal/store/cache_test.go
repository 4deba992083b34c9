package store_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/internal/store"
)

// recorder records what a cache's handler sees, as "type key flavor".
type recorder struct {
	mu  sync.Mutex
	evs []string
}

func (r *recorder) handle(ev store.Event[*edgeproto.ClusterInst]) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := fmt.Sprintf("%v %s", ev.Type, strings.TrimSuffix(ev.Key, ",organization=acme"))
	if ev.Object != nil {
		s += " " + ev.Object.GetFlavorName()
	}
	r.evs = append(r.evs, s)
}

// take waits for n events and returns them, leaving none.
func (r *recorder) take(t *testing.T, n int) []string {
	t.Helper()
	waitFor(t, fmt.Sprintf("%d events", n), func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		return len(r.evs) >= n
	})
	r.mu.Lock()
	defer r.mu.Unlock()
	evs := r.evs
	r.evs = nil
	if len(evs) != n {
		t.Fatalf("%d events, want %d: %q", len(evs), n, evs)
	}
	return evs
}

func wantEvents(t *testing.T, got []string, want ...string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// startCache runs a cache until the returned stop is called (or the test
// ends) and waits until it is synced.
func startCache(t *testing.T, c *store.Cache[*edgeproto.ClusterInst]) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Start(ctx) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Start: %v", err)
		}
	}
	t.Cleanup(stop)
	select {
	case <-c.Synced():
	case err := <-done:
		t.Fatalf("Start returned before the cache synced: %v", err)
	case <-ctxT(t).Done():
		t.Fatal("cache not synced")
	}
	return stop
}

func flavor(t *testing.T, f *fixture, key, fl string) int64 {
	t.Helper()
	_, rev, err := f.k.Update(f.ctx, key, &edgeproto.ClusterInst{FlavorName: fl}, mustFM(t, edgeproto.ClusterInstFieldFlavorName), nil)
	if err != nil {
		t.Fatal(err)
	}
	return rev
}

func TestCacheFollowsChanges(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var rec recorder
	c := store.NewCache(f.k, store.OnEvent(rec.handle))
	startCache(t, c)
	if err := c.Start(f.ctx); err == nil {
		t.Fatal("a second Start of a running cache succeeded")
	}
	wantEvents(t, rec.take(t, 1), "put name=c1 small") // the first list
	if c.Rev() < f.rev {
		t.Fatalf("synced at %d, before the fixture's write %d", c.Rev(), f.rev)
	}
	rev, err := f.k.Create(f.ctx, cluster("c2", "acme"))
	if err != nil {
		t.Fatal(err)
	}
	// Read your writes: after WaitRev the cache has the object.
	if err := c.WaitRev(f.ctx, rev); err != nil {
		t.Fatal(err)
	}
	if got, ok := c.Get("name=c2,organization=acme"); !ok || got.GetFlavorName() != "small" {
		t.Fatalf("get after WaitRev: %v %v", got, ok)
	}
	// Copies: changing what Get returned changes nothing in the cache.
	got, _ := c.Get("name=c2,organization=acme")
	got.FlavorName = "mutated"
	if again, _ := c.Get("name=c2,organization=acme"); again.GetFlavorName() != "small" {
		t.Fatal("Get returned the cache's own object")
	}
	flavor(t, f, f.key, "large")
	if _, err := f.k.Delete(f.ctx, "name=c2,organization=acme", nil); err != nil {
		t.Fatal(err)
	}
	wantEvents(t, rec.take(t, 3), "put name=c2 small", "put name=c1 large", "delete name=c2 small")
	list := c.List()
	if len(list) != 1 || list[0].GetFlavorName() != "large" || c.Len() != 1 {
		t.Fatalf("list %v", list)
	}
	// A write of another kind: WaitRev returns through a progress
	// notification, though the cache sees no event.
	orev, err := store.NewKind[*edgeproto.Flavor](f.s).Put(f.ctx, &edgeproto.Flavor{Key: &edgeproto.FlavorKey{Name: "x"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.WaitRev(f.ctx, orev); err != nil {
		t.Fatalf("WaitRev of another kind's write: %v", err)
	}
	// A revision that never comes: WaitRev ends with its context.
	short, cancel := context.WithTimeout(f.ctx, 300*time.Millisecond)
	defer cancel()
	if err := c.WaitRev(short, orev+1000); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitRev of a future revision: %v", err)
	}
}

// The cache resumes from the revision after the last one it applied: a
// stop and start (a client gone and back) and a broken watch miss nothing
// and repeat nothing.
func TestCacheResumes(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var rec recorder
	c := store.NewCache(f.k, store.OnEvent(rec.handle))
	stop := startCache(t, c)
	rec.take(t, 1)
	stop()
	// Changes while the cache is away.
	flavor(t, f, f.key, "f1")
	if _, err := f.k.Create(f.ctx, cluster("c2", "acme")); err != nil {
		t.Fatal(err)
	}
	flavor(t, f, f.key, "f2")
	startCache(t, c)
	wantEvents(t, rec.take(t, 3), "put name=c1 f1", "put name=c2 small", "put name=c1 f2")

	// The watch breaks and is made again.
	c.BreakWatch()
	rev := flavor(t, f, f.key, "f3")
	if err := c.WaitRev(f.ctx, rev); err != nil {
		t.Fatal(err)
	}
	wantEvents(t, rec.take(t, 1), "put name=c1 f3")
}

// When the revision to resume from was compacted, the cache lists again and
// reports what changed: deletes for what vanished, puts for what is new or
// changed, nothing for what did not change.
func TestCacheRelistsAfterCompaction(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for _, n := range []string{"c2", "c3"} {
		if _, err := f.k.Create(f.ctx, cluster(n, "acme")); err != nil {
			t.Fatal(err)
		}
	}
	var rec recorder
	c := store.NewCache(f.k, store.OnEvent(rec.handle))
	stop := startCache(t, c)
	wantEvents(t, rec.take(t, 3), "put name=c1 small", "put name=c2 small", "put name=c3 small")
	stop()
	if _, err := f.k.Delete(f.ctx, f.key, nil); err != nil {
		t.Fatal(err)
	}
	flavor(t, f, "name=c2,organization=acme", "large")
	if _, err := f.k.Create(f.ctx, cluster("c4", "acme")); err != nil {
		t.Fatal(err)
	}
	// Even a value written and deleted while away leaves no trace.
	if _, err := f.k.Create(f.ctx, cluster("c5", "acme")); err != nil {
		t.Fatal(err)
	}
	last, err := f.k.Delete(f.ctx, "name=c5,organization=acme", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.srv.Client().Compact(f.ctx, last); err != nil {
		t.Fatal(err)
	}
	startCache(t, c)
	wantEvents(t, rec.take(t, 3), "delete name=c1 small", "put name=c2 large", "put name=c4 small")
	if c.Rev() < last {
		t.Fatalf("cache at %d after the list, want at least %d", c.Rev(), last)
	}
	var keys []string
	for _, o := range c.List() {
		keys = append(keys, o.GetKey().GetName())
	}
	if strings.Join(keys, ",") != "c2,c3,c4" {
		t.Fatalf("cache holds %v", keys)
	}
	// And it watches on from there.
	rev := flavor(t, f, "name=c3,organization=acme", "x")
	if err := c.WaitRev(f.ctx, rev); err != nil {
		t.Fatal(err)
	}
	wantEvents(t, rec.take(t, 1), "put name=c3 x")
}

func TestCacheBadValue(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	if _, err := f.srv.Client().Put(f.ctx, f.k.Path("name=bad,organization=acme"), "garbage"); err != nil {
		t.Fatal(err)
	}
	var rec recorder
	c := store.NewCache(f.k, store.OnEvent(rec.handle))
	startCache(t, c)
	// The bad value does not stop the cache; it is reported by key.
	wantEvents(t, rec.take(t, 2), "error name=bad", "put name=c1 small")
	if _, err := f.srv.Client().Put(f.ctx, f.k.Path(f.key), "{"); err != nil {
		t.Fatal(err)
	}
	wantEvents(t, rec.take(t, 1), "error name=c1")
	if _, ok := c.Get(f.key); ok || c.Len() != 0 || c.Snapshot().Len() != 0 {
		t.Fatalf("cache kept an object whose value went bad")
	}
}

// A cache waiting for a revision written by another kind is told of it by
// a progress notification, which etcd sends on a watch stream only when
// every watch of the stream started at or before the current revision. A
// watch of the process that starts ahead of it (after reading at the
// current revision, from the next one) must not hold the cache back until
// the next write, however quiet the store.
func TestCacheWaitRevPastAWatchStartedAhead(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := store.NewCache(f.k)
	startCache(t, c)
	// A write outside the cache's kind: the revision the cache must reach.
	resp, err := f.s.Client().Put(f.ctx, "/elsewhere/x", "v")
	if err != nil {
		t.Fatal(err)
	}
	target := resp.Header.Revision
	// Another watch of the process, as a watcher that read at the current
	// revision starts one, with the client's usual require-leader context.
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(context.Background()))
	defer cancel()
	f.s.Client().Watch(wctx, "/other/", clientv3.WithPrefix(), clientv3.WithRev(target+1))
	ctx, cancelWait := context.WithTimeout(f.ctx, 10*time.Second)
	defer cancelWait()
	if err := c.WaitRev(ctx, target); err != nil {
		t.Fatalf("the cache never reached revision %d with no write after it (at %d): %v", target, c.Rev(), err)
	}
}
