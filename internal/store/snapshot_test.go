package store_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/internal/store"
)

// snapshotText renders a snapshot as "name flavor" lines in the order
// Range gives them.
func snapshotText(s *store.Snapshot[*edgeproto.ClusterInst], from string) string {
	var b strings.Builder
	s.Range(from, func(key string, obj *edgeproto.ClusterInst) bool {
		if key != obj.GetKeyString() {
			fmt.Fprintf(&b, "key %q holds %q\n", key, obj.GetKeyString())
		}
		fmt.Fprintf(&b, "%s %s\n", obj.GetKey().GetName(), obj.GetFlavorName())
		return true
	})
	return b.String()
}

// A snapshot keeps the content and revision the cache had when it was
// taken, whatever the cache applies afterwards: puts, deletes, new
// objects and a relist after a compaction.
func TestCacheSnapshotKeepsItsRevision(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for _, name := range []string{"c3", "c2"} {
		if _, err := f.k.Create(f.ctx, cluster(name, "acme")); err != nil {
			t.Fatal(err)
		}
	}
	c := store.NewCache(f.k)
	stop := startCache(t, c)
	rev := flavor(t, f, "name=c2,organization=acme", "medium")
	if err := c.WaitRev(f.ctx, rev); err != nil {
		t.Fatal(err)
	}
	snap := c.Snapshot()
	if snap.Rev() != c.Rev() || snap.Rev() < rev {
		t.Fatalf("snapshot at %d, cache at %d, last write %d", snap.Rev(), c.Rev(), rev)
	}
	want := "c1 small\nc2 medium\nc3 small\n"
	if got := snapshotText(snap, ""); got != want || snap.Len() != 3 {
		t.Fatalf("snapshot (%d objects):\n%swant:\n%s", snap.Len(), got, want)
	}

	// Changes the watch applies: update, delete, create.
	flavor(t, f, "name=c1,organization=acme", "large")
	if _, err := f.k.Delete(f.ctx, "name=c3,organization=acme", nil); err != nil {
		t.Fatal(err)
	}
	rev, err := f.k.Create(f.ctx, cluster("c0", "acme"))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.WaitRev(f.ctx, rev); err != nil {
		t.Fatal(err)
	}
	if got := snapshotText(snap, ""); got != want {
		t.Fatalf("snapshot changed with the cache:\n%swant:\n%s", got, want)
	}
	mid := c.Snapshot()
	if got, want := snapshotText(mid, ""), "c0 small\nc1 large\nc2 medium\n"; got != want {
		t.Fatalf("new snapshot:\n%swant:\n%s", got, want)
	}

	// Changes a list applies: the cache stops, the history is compacted,
	// the cache lists again.
	stop()
	flavor(t, f, "name=c0,organization=acme", "tiny")
	last, err := f.k.Delete(f.ctx, "name=c2,organization=acme", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.srv.Client().Compact(f.ctx, last); err != nil {
		t.Fatal(err)
	}
	startCache(t, c)
	if err := c.WaitRev(f.ctx, last); err != nil {
		t.Fatal(err)
	}
	if got := snapshotText(snap, ""); got != want {
		t.Fatalf("first snapshot changed after a relist:\n%swant:\n%s", got, want)
	}
	if got, want := snapshotText(mid, ""), "c0 small\nc1 large\nc2 medium\n"; got != want {
		t.Fatalf("second snapshot changed after a relist:\n%swant:\n%s", got, want)
	}
	if got, want := snapshotText(c.Snapshot(), ""), "c0 tiny\nc1 large\n"; got != want {
		t.Fatalf("snapshot after the relist:\n%swant:\n%s", got, want)
	}
	if got, want := snapshotText(snap, "name=c2"), "c2 medium\nc3 small\n"; got != want {
		t.Fatalf("snapshot from c2:\n%swant:\n%s", got, want)
	}

	// Objects the cache hands out through a snapshot are its own: List
	// still returns copies that agree with a fresh snapshot.
	var names []string
	for _, o := range c.List() {
		names = append(names, o.GetKey().GetName())
	}
	if got := strings.Join(names, ","); got != "c0,c1" {
		t.Fatalf("List: %s", got)
	}
}

// Walk reads every object at the revision of its first page, however many
// pages it takes and whatever is written between them, and stops at the
// first error of its function.
func TestKindWalkOneRevision(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t, store.WithPageSize(2))
	ctx := ctxT(t)
	k := store.NewKind[*edgeproto.ClusterInst](s)
	var created int64
	for i := range 7 {
		rev, err := k.Create(ctx, cluster(fmt.Sprintf("c%d", i), "acme"))
		if err != nil {
			t.Fatal(err)
		}
		created = rev
	}
	var got []string
	rev, err := k.Walk(ctx, func(obj *edgeproto.ClusterInst) error {
		got = append(got, obj.GetKey().GetName()+" "+obj.GetFlavorName())
		if len(got) == 1 {
			// Between the first page and the next: change an object
			// still to come, delete one, add one.
			if _, _, err := k.Update(ctx, "name=c5,organization=acme", &edgeproto.ClusterInst{FlavorName: "large"}, mustFM(t, edgeproto.ClusterInstFieldFlavorName), nil); err != nil {
				return err
			}
			if _, err := k.Delete(ctx, "name=c6,organization=acme", nil); err != nil {
				return err
			}
			if _, err := k.Create(ctx, cluster("c9", "acme")); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if rev != created {
		t.Fatalf("walked at revision %d, want the last create's %d", rev, created)
	}
	want := "c0 small,c1 small,c2 small,c3 small,c4 small,c5 small,c6 small"
	if g := strings.Join(got, ","); g != want {
		t.Fatalf("walk:\n%s\nwant:\n%s", g, want)
	}

	stop := errors.New("stop here")
	n := 0
	if _, err := k.Walk(ctx, func(*edgeproto.ClusterInst) error {
		n++
		if n == 3 {
			return stop
		}
		return nil
	}); err != stop || n != 3 {
		t.Fatalf("walk ended with %v after %d objects, want the function's error after 3", err, n)
	}
}
