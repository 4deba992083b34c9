package store_test

import (
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/internal/store"
)

// stuckCache is a running cache whose handler can be made to block, so
// that the cache stays behind etcd while a test writes. The handler blocks
// on the first change at or after a revision the test chooses; the cache
// has applied that change (handlers run after it) and applies no more.
// Choosing by revision, not by "the next event", keeps a change the
// handler has not been handed yet from being the one it blocks on.
type stuckCache struct {
	c         *store.Cache[*edgeproto.ClusterInst]
	stuckFrom atomic.Int64 // 0: never
	release   chan struct{}
	once      sync.Once
}

func newStuckCache(t *testing.T, f *txFixture) *stuckCache {
	t.Helper()
	sc := &stuckCache{release: make(chan struct{})}
	sc.c = store.NewCache(f.k, store.OnEvent(func(ev store.Event[*edgeproto.ClusterInst]) {
		if from := sc.stuckFrom.Load(); from != 0 && ev.Rev >= from {
			<-sc.release
		}
	}))
	t.Cleanup(startCache(t, sc.c))
	t.Cleanup(sc.unstick)
	return sc
}

// stickAfter makes the cache apply the first change after rev and no more.
func (sc *stuckCache) stickAfter(rev int64) { sc.stuckFrom.Store(rev + 1) }

func (sc *stuckCache) unstick() { sc.once.Do(func() { close(sc.release) }) }

// put writes c's flavor to etcd.
func (f *txFixture) putFlavor(t *testing.T, flavor string) {
	t.Helper()
	c := f.c.Clone()
	c.FlavorName = flavor
	if _, err := f.k.Put(f.ctx, c); err != nil {
		t.Fatal(err)
	}
}

// A transaction reading through a current cache runs once and commits; one
// reading through a cache that is behind etcd fails its commit and runs
// again reading etcd; an error decided on a stale cached read is not
// returned before a run on etcd's values confirms it.
func TestCacheTxGet(t *testing.T) {
	t.Parallel()
	f := newTxFixture(t)
	sc := newStuckCache(t, f)
	update := func(check func(flavor string) error) (seen []string, err error) {
		_, err = f.s.Txn(f.ctx, func(tx *store.Tx) error {
			c, ok, err := sc.c.TxGet(tx, f.key)
			if err != nil || !ok {
				return errors.Join(err, errors.New("cluster not found"))
			}
			seen = append(seen, c.GetFlavorName())
			if err := check(c.GetFlavorName()); err != nil {
				return err
			}
			c.Reservable = !c.Reservable
			return f.k.TxPut(tx, c)
		})
		return seen, err
	}
	anyFlavor := func(string) error { return nil }

	// Current cache: one run.
	f.putFlavor(t, "v2")
	if err := sc.c.WaitRev(f.ctx, mustRev(t, f)); err != nil {
		t.Fatal(err)
	}
	if seen, err := update(anyFlavor); err != nil || len(seen) != 1 || seen[0] != "v2" {
		t.Fatalf("current cache: saw %v, %v; want one run seeing v2", seen, err)
	}
	// The cache applies the next write (the update above, then v3) and no
	// more: it is behind etcd.
	sc.stickAfter(mustRev(t, f))
	f.putFlavor(t, "v3")
	if err := sc.c.WaitRev(f.ctx, mustRev(t, f)); err != nil {
		t.Fatal(err)
	}
	f.putFlavor(t, "v4")
	if seen, err := update(anyFlavor); err != nil || len(seen) != 2 || seen[0] != "v3" || seen[1] != "v4" {
		t.Fatalf("stale cache: saw %v, %v; want [v3 v4]", seen, err)
	}
	// A verdict on a stale value is checked on etcd's.
	wantV5 := func(flavor string) error {
		if flavor != "v5" {
			return errors.New("not v5")
		}
		return nil
	}
	// The cache's copy is now the update's own write (v4), which it knows
	// at once, though its watch is stuck; etcd has moved on to v5.
	f.putFlavor(t, "v5")
	if seen, err := update(wantV5); err != nil || len(seen) != 2 || seen[0] != "v4" || seen[1] != "v5" {
		t.Fatalf("stale cache verdict: saw %v, %v; want [v4 v5] and no error", seen, err)
	}
	f.putFlavor(t, "v5")
	// A verdict that holds on etcd's values is returned.
	if seen, err := update(func(string) error { return errors.New("no") }); err == nil || err.Error() != "no" || len(seen) != 2 {
		t.Fatalf("verdict: saw %v, %v; want 2 runs and error no", seen, err)
	}
	// A run that writes nothing after a stale cached read is checked too.
	runs := 0
	_, err := f.s.Txn(f.ctx, func(tx *store.Tx) error {
		runs++
		_, _, err := sc.c.TxGet(tx, f.key)
		return err
	})
	if err != nil || runs != 2 {
		t.Fatalf("read-only: %d runs, %v; want 2 (the cache is behind)", runs, err)
	}
	// An object the cache has not seen yet is read from etcd.
	sc.unstick()
	other := cluster("c7", "acme")
	sc2 := newStuckCache(t, f)
	sc2.stickAfter(mustRev(t, f))
	f.putFlavor(t, "v6")
	if err := sc2.c.WaitRev(f.ctx, mustRev(t, f)); err != nil {
		t.Fatal(err)
	}
	if _, err := f.k.Create(f.ctx, other); err != nil {
		t.Fatal(err)
	}
	var found []bool
	_, err = f.s.Txn(f.ctx, func(tx *store.Tx) error {
		_, ok, err := sc2.c.TxGet(tx, other.GetKeyString())
		found = append(found, ok)
		if err == nil && !ok {
			return store.ErrNotFound
		}
		return err
	})
	if err != nil || len(found) != 2 || found[0] || !found[1] {
		t.Fatalf("unseen object: found %v, %v; want [false true]", found, err)
	}
}

// mustRev is the store's current revision.
func mustRev(t *testing.T, f *txFixture) int64 {
	t.Helper()
	resp, err := f.s.Client().Get(f.ctx, "/")
	if err != nil {
		t.Fatal(err)
	}
	return resp.Header.Revision
}

// A transaction whose reads a cache served has the cache's revision as
// its Rev (at or past the revision of every object it read), not 0; one
// that also read etcd has the newer of the two.
func TestCacheTxGetRev(t *testing.T) {
	t.Parallel()
	f := newTxFixture(t)
	sc := newStuckCache(t, f)
	f.putFlavor(t, "v2")
	written := mustRev(t, f)
	if err := sc.c.WaitRev(f.ctx, written); err != nil {
		t.Fatal(err)
	}
	var cacheOnly, both int64
	if _, err := f.s.Txn(f.ctx, func(tx *store.Tx) error {
		if _, ok, err := sc.c.TxGet(tx, f.key); err != nil || !ok {
			return errors.Join(err, errors.New("cluster not found"))
		}
		cacheOnly = tx.Rev()
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if cacheOnly < written || cacheOnly != sc.c.Rev() {
		t.Fatalf("Rev after a cached read = %d, want the cache's revision %d (the object was written at %d)", cacheOnly, sc.c.Rev(), written)
	}
	// The cache stays behind while etcd moves on: a read of etcd in the
	// same transaction sees a newer revision.
	sc.stickAfter(written)
	f.putFlavor(t, "v3")
	if err := sc.c.WaitRev(f.ctx, mustRev(t, f)); err != nil {
		t.Fatal(err)
	}
	f.putFlavor(t, "v4")
	now := mustRev(t, f)
	if _, err := f.s.Txn(f.ctx, func(tx *store.Tx) error {
		if tx.Attempt() > 1 {
			return nil // the stale cached read failed the first run's commit
		}
		if _, _, err := sc.c.TxGet(tx, f.key); err != nil {
			return err
		}
		if _, _, err := f.cloudlets.TxGet(tx, f.cl.GetKeyString()); err != nil {
			return err
		}
		both = tx.Rev()
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if both < now {
		t.Fatalf("Rev after a stale cached read and an etcd read = %d, want at least etcd's %d", both, now)
	}
}

// A transaction's writes reach the caches as soon as it commits: back-to-back
// updates, creates and deletes through a cache whose watch delivers nothing
// each run once (a stale copy would fail the commit and run again reading
// etcd), and see the previous one's write. The compare on the revision is
// unchanged: a write of another process still fails the commit. When the
// watch delivers the same writes later, the cache keeps the newest copy.
func TestCacheTxGetSeesItsOwnWrites(t *testing.T) {
	t.Parallel()
	f := newTxFixture(t)
	sc := newStuckCache(t, f)
	if err := sc.c.WaitRev(f.ctx, mustRev(t, f)); err != nil {
		t.Fatal(err)
	}
	// The watch applies the next change, then no more.
	sc.stickAfter(mustRev(t, f))
	f.putFlavor(t, "v1")
	if err := sc.c.WaitRev(f.ctx, mustRev(t, f)); err != nil {
		t.Fatal(err)
	}
	stuckAt := sc.c.Rev()

	// run runs fn in a transaction and returns how many runs it took.
	run := func(fn func(tx *store.Tx) error) (runs int, rev int64) {
		t.Helper()
		rev, err := f.s.Txn(f.ctx, func(tx *store.Tx) error {
			runs++
			return fn(tx)
		})
		if err != nil {
			t.Fatal(err)
		}
		return runs, rev
	}
	var seen []string
	setFlavor := func(flavor string) func(tx *store.Tx) error {
		return func(tx *store.Tx) error {
			c, ok, err := sc.c.TxGet(tx, f.key)
			if err != nil || !ok {
				return errors.Join(err, errors.New("cluster not found"))
			}
			seen = append(seen, c.GetFlavorName())
			c.FlavorName = flavor
			return f.k.TxPut(tx, c)
		}
	}
	for i, flavor := range []string{"v2", "v3", "v4", "v5"} {
		runs, _ := run(setFlavor(flavor))
		if runs != 1 {
			t.Fatalf("update %d ran %d times (saw %v), want once: the cache did not know the previous update", i, runs, seen)
		}
	}
	if want := []string{"v1", "v2", "v3", "v4"}; !slices.Equal(seen, want) {
		t.Fatalf("updates saw %v, want %v", seen, want)
	}
	if got, ok := sc.c.Get(f.key); !ok || got.GetFlavorName() != "v5" {
		t.Fatalf("Get = %v, %v; want the last write (v5)", got, ok)
	}
	if sc.c.Rev() != stuckAt {
		t.Fatalf("the cache's revision moved from %d to %d: its watch was to deliver nothing", stuckAt, sc.c.Rev())
	}

	// A delete, then a read that finds nothing, then a create: once each.
	other := cluster("c9", "acme")
	if runs, _ := run(func(tx *store.Tx) error { return f.k.TxPut(tx, other) }); runs != 1 {
		t.Fatalf("create ran %d times", runs)
	}
	if runs, _ := run(func(tx *store.Tx) error {
		if _, ok, err := sc.c.TxGet(tx, other.GetKeyString()); err != nil || !ok {
			return errors.Join(err, errors.New("created cluster not found"))
		}
		f.k.TxDelete(tx, other.GetKeyString())
		return nil
	}); runs != 1 {
		t.Fatalf("read and delete ran %d times", runs)
	}
	if runs, _ := run(func(tx *store.Tx) error {
		if _, ok, err := sc.c.TxGet(tx, other.GetKeyString()); err != nil || ok {
			return errors.Join(err, errors.New("deleted cluster found"))
		}
		return f.k.TxCreate(tx, other)
	}); runs != 1 {
		t.Fatalf("read of a deleted key and create ran %d times", runs)
	}

	// A write of another process (not through a transaction of this store)
	// still fails the commit of a run that read the cache's copy.
	f.putFlavor(t, "elsewhere")
	seen = nil
	if runs, _ := run(setFlavor("v6")); runs != 2 || seen[0] != "v5" || seen[1] != "elsewhere" {
		t.Fatalf("after a write elsewhere: %d runs seeing %v, want 2 seeing [v5 elsewhere]", runs, seen)
	}

	// The watch delivers everything: the copy stays the newest.
	sc.unstick()
	if err := sc.c.WaitRev(f.ctx, mustRev(t, f)); err != nil {
		t.Fatal(err)
	}
	if got, ok := sc.c.Get(f.key); !ok || got.GetFlavorName() != "v6" {
		t.Fatalf("after the watch caught up: Get = %v, %v; want v6", got, ok)
	}
	if _, ok := sc.c.Get(other.GetKeyString()); !ok {
		t.Fatalf("after the watch caught up: the re-created cluster is missing")
	}
	if n := sc.c.WrittenLen(); n != 0 {
		t.Fatalf("the cache still holds %d writes its watch applied", n)
	}
}

// A write recorded after a newer one of the same key (two transactions
// that commit in one order and reach the cache in the other) does not
// move the key back.
func TestCacheWriteNeverMovesBack(t *testing.T) {
	t.Parallel()
	f := newTxFixture(t)
	sc := newStuckCache(t, f)
	if err := sc.c.WaitRev(f.ctx, mustRev(t, f)); err != nil {
		t.Fatal(err)
	}
	sc.stickAfter(mustRev(t, f))
	f.putFlavor(t, "v1")
	if err := sc.c.WaitRev(f.ctx, mustRev(t, f)); err != nil {
		t.Fatal(err)
	}
	rev := sc.c.Rev()
	newer, older := f.c.Clone(), f.c.Clone()
	newer.FlavorName, older.FlavorName = "newer", "older"
	sc.c.Wrote(f.k.Path(f.key), false, newer, rev+10)
	sc.c.Wrote(f.k.Path(f.key), false, older, rev+5)
	if got, _ := sc.c.Get(f.key); got.GetFlavorName() != "newer" {
		t.Fatalf("Get = %q, want the newer write", got.GetFlavorName())
	}
	sc.c.Wrote(f.k.Path(f.key), true, nil, rev+7)
	if got, ok := sc.c.Get(f.key); !ok || got.GetFlavorName() != "newer" {
		t.Fatalf("an older delete hid the newer write: %v, %v", got, ok)
	}
	// A write at or below what the watch applied is ignored.
	sc.c.Wrote(f.k.Path("acme/other"), false, older, rev)
	if _, ok := sc.c.Get("acme/other"); ok {
		t.Fatalf("a write the watch applied already was recorded")
	}
}
