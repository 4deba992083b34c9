package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/internal/store"
)

func next[T any](t *testing.T, ch <-chan store.Event[T]) store.Event[T] {
	t.Helper()
	select {
	case ev, ok := <-ch:
		if !ok {
			t.Fatal("watch channel closed")
		}
		return ev
	case <-time.After(testTimeout):
		t.Fatal("no event")
	}
	panic("unreachable")
}

func TestWatchOrder(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ctx := ctxT(t)
	k := store.NewKind[*edgeproto.ClusterInst](s)
	// Changes written before the watch starts are seen from fromRev on.
	c1 := cluster("c1", "acme")
	rev1, err := k.Create(ctx, c1)
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithCancel(ctx)
	ch := k.Watch(wctx, rev1)
	c2 := cluster("c2", "acme")
	rev2, _ := k.Create(ctx, c2)
	_, rev3, err := k.Update(ctx, c1.GetKeyString(), &edgeproto.ClusterInst{FlavorName: "large"}, mustFM(t, edgeproto.ClusterInstFieldFlavorName), nil)
	if err != nil {
		t.Fatal(err)
	}
	rev4, _ := k.Delete(ctx, c2.GetKeyString(), nil)
	// Another kind's writes do not show.
	if _, err := store.NewKind[*edgeproto.ClusterInstInfo](s).Put(ctx, &edgeproto.ClusterInstInfo{Key: c1.GetKey()}); err != nil {
		t.Fatal(err)
	}
	want := []struct {
		typ  store.EventType
		key  string
		rev  int64
		flav string
	}{
		{store.EventPut, c1.GetKeyString(), rev1, "small"},
		{store.EventPut, c2.GetKeyString(), rev2, "small"},
		{store.EventPut, c1.GetKeyString(), rev3, "large"},
		{store.EventDelete, c2.GetKeyString(), rev4, "small"}, // the deleted object
	}
	for i, w := range want {
		ev := next(t, ch)
		if ev.Type != w.typ || ev.Key != w.key || ev.Rev != w.rev || ev.Object.GetFlavorName() != w.flav || ev.Err != nil {
			t.Fatalf("event %d: %v %q rev %d %v %v, want %v %q rev %d flavor %q", i, ev.Type, ev.Key, ev.Rev, ev.Object, ev.Err, w.typ, w.key, w.rev, w.flav)
		}
	}
	cancel()
	for range ch { // closes once ctx ends
	}
}

func TestWatchBadValueAndCompaction(t *testing.T) {
	t.Parallel()
	s, srv := newStore(t)
	ctx := ctxT(t)
	k := store.NewKind[*edgeproto.ClusterInst](s)
	rev0, _ := k.Create(ctx, cluster("c0", "acme"))
	ch := k.Watch(ctx, 0)
	waitWatching(t, k, ch)
	if _, err := srv.Client().Put(ctx, k.Path("name=bad,organization=acme"), "garbage"); err != nil {
		t.Fatal(err)
	}
	ev := next(t, ch)
	if ev.Type != store.EventError || ev.Key != "name=bad,organization=acme" || !errors.Is(ev.Err, store.ErrBadValue) {
		t.Fatalf("bad value event %+v", ev)
	}
	// The watch goes on after a bad value.
	c := cluster("c1", "acme")
	if _, err := k.Create(ctx, c); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, ch); ev.Type != store.EventPut || ev.Key != c.GetKeyString() {
		t.Fatalf("after a bad value: %+v", ev)
	}

	// Watching from a compacted revision ends with ErrCompacted.
	resp, err := srv.Client().Compact(ctx, rev0+2)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp
	old := k.Watch(ctx, rev0)
	ev = next(t, old)
	if ev.Type != store.EventError || !errors.Is(ev.Err, store.ErrCompacted) || ev.Rev != rev0+2 {
		t.Fatalf("compacted watch: %+v", ev)
	}
	if _, ok := <-old; ok {
		t.Fatal("watch channel open after a compaction error")
	}
}

// waitWatching makes sure the watch of ch is established by writing an
// object and seeing it, so that later writes cannot come before the watch.
func waitWatching(t *testing.T, k *store.Kind[*edgeproto.ClusterInst], ch <-chan store.Event[*edgeproto.ClusterInst]) {
	t.Helper()
	mark := cluster("watch-mark", "acme")
	if _, err := k.Put(ctxT(t), mark); err != nil {
		t.Fatal(err)
	}
	for {
		if ev := next(t, ch); ev.Key == mark.GetKeyString() {
			return
		}
	}
}
