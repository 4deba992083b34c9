package store_test

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/internal/store"
)

// Two writers update different fields of one object at the same time, 100
// rounds: both updates land every round.
func TestConcurrentUpdatesOfDifferentFields(t *testing.T) {
	t.Parallel()
	var retried atomic.Int64
	countRetries := store.WithObserver(store.ObserverFunc(func(o store.Observation) {
		if o.Attempts > 1 {
			retried.Add(int64(o.Attempts - 1))
		}
	}))
	f := newFixture(t, countRetries)
	ctx, k1, key := f.ctx, f.k, f.key
	// Two stores on two clients, as two controllers would be.
	s2, err := store.New(f.srv.NewClient(), "test", countRetries)
	if err != nil {
		t.Fatal(err)
	}
	k2 := store.NewKind[*edgeproto.ClusterInst](s2)
	flavor := mustFM(t, edgeproto.ClusterInstFieldFlavorName)
	version := mustFM(t, edgeproto.ClusterInstFieldKubernetesVersion)
	for round := range 100 {
		var wg sync.WaitGroup
		errs := make([]error, 2)
		wg.Go(func() {
			src := &edgeproto.ClusterInst{FlavorName: fmt.Sprintf("f%d", round)}
			_, _, errs[0] = k1.Update(ctx, key, src, flavor, nil)
		})
		wg.Go(func() {
			src := &edgeproto.ClusterInst{KubernetesVersion: fmt.Sprintf("v%d", round)}
			_, _, errs[1] = k2.Update(ctx, key, src, version, nil)
		})
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		got, _, err := k1.Get(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if got.GetFlavorName() != fmt.Sprintf("f%d", round) || got.GetKubernetesVersion() != fmt.Sprintf("v%d", round) {
			t.Fatalf("round %d: lost an update: flavor %q version %q", round, got.GetFlavorName(), got.GetKubernetesVersion())
		}
		if got.GetDeployment() != "kubernetes" {
			t.Fatalf("round %d: an unflagged field changed: %v", round, got)
		}
	}
	t.Logf("%d compare-and-swap retries in 100 rounds", retried.Load())
}

// A write between Update's read and its compare-and-swap makes it read
// again and re-apply; the other write survives.
func TestUpdateRetriesAfterConflict(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx, k, key := f.ctx, f.k, f.key
	calls := 0
	src := &edgeproto.ClusterInst{FlavorName: "large"}
	got, rev, err := k.Update(ctx, key, src, mustFM(t, edgeproto.ClusterInstFieldFlavorName), func(cur *edgeproto.ClusterInst) error {
		calls++
		if calls == 1 {
			// Another writer changes another field meanwhile.
			other := cur.Clone()
			other.Deployment = "docker"
			if _, err := k.Put(ctx, other); err != nil {
				t.Error(err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if calls != 2 {
		t.Fatalf("check ran %d times, want 2", calls)
	}
	stored, modRev, _ := k.Get(ctx, key)
	if got.GetFlavorName() != "large" || stored.GetFlavorName() != "large" || stored.GetDeployment() != "docker" || modRev != rev {
		t.Fatalf("returned %v at %d, stored %v at %d", got, rev, stored, modRev)
	}
}

// A writer that always gets there first exhausts the bounded attempts.
func TestUpdateGivesUpWithConflict(t *testing.T) {
	t.Parallel()
	f := newFixture(t, store.WithMaxAttempts(3))
	ctx, k, key := f.ctx, f.k, f.key
	calls := 0
	_, _, err := k.Modify(ctx, key, func(cur *edgeproto.ClusterInst) (bool, error) {
		calls++
		other := cur.Clone()
		other.Errors = append(other.Errors, "x")
		if _, err := k.Put(ctx, other); err != nil {
			t.Error(err)
		}
		cur.FlavorName = "large"
		return true, nil
	})
	if !errors.Is(err, store.ErrConflict) || calls != 3 {
		t.Fatalf("err %v after %d calls", err, calls)
	}
	// The same for a checked delete.
	calls = 0
	_, err = k.Delete(ctx, key, func(cur *edgeproto.ClusterInst) error {
		calls++
		if _, err := k.Put(ctx, cur); err != nil {
			t.Error(err)
		}
		return nil
	})
	if !errors.Is(err, store.ErrConflict) || calls != 3 {
		t.Fatalf("delete: err %v after %d calls", err, calls)
	}
}

// An update that changes nothing writes nothing.
func TestUpdateWithoutChangeDoesNotWrite(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx, k, c, rev := f.ctx, f.k, f.c, f.rev
	got, urev, err := k.Update(ctx, c.GetKeyString(), c, mustFM(t, edgeproto.ClusterInstFieldFlavorName, edgeproto.ClusterInstFieldState), nil)
	if err != nil || urev != rev || got.GetFlavorName() != "small" {
		t.Fatalf("update: %v at %d (create %d), %v", got, urev, rev, err)
	}
	_, modRev, _ := k.Get(ctx, c.GetKeyString())
	if modRev != rev {
		t.Fatalf("object rewritten: ModRevision %d, created at %d", modRev, rev)
	}
	// Modify reporting no change writes nothing either.
	_, mrev, err := k.Modify(ctx, c.GetKeyString(), func(*edgeproto.ClusterInst) (bool, error) { return false, nil })
	if err != nil || mrev != rev {
		t.Fatalf("modify: rev %d, %v", mrev, err)
	}
	// An error of fn aborts.
	boom := errors.New("boom")
	if _, _, err := k.Modify(ctx, c.GetKeyString(), func(cur *edgeproto.ClusterInst) (bool, error) {
		cur.FlavorName = "changed"
		return true, boom
	}); err != boom {
		t.Fatalf("modify error %v", err)
	}
	if got, _, _ := k.Get(ctx, c.GetKeyString()); got.GetFlavorName() != "small" {
		t.Fatalf("aborted modify wrote: %v", got)
	}
}

// A store starts a read-modify-write from the object it last saw. When
// another process changed the object since, the outcome is the one the
// current object gives: no refusal, no skipped write, no update of a
// deleted object.
func TestUpdateFromAStaleRememberedObject(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	other, err := store.New(f.srv.NewClient(), "test")
	if err != nil {
		t.Fatal(err)
	}
	ko := store.NewKind[*edgeproto.ClusterInst](other)
	state := mustFM(t, edgeproto.ClusterInstFieldState)
	fl := mustFM(t, edgeproto.ClusterInstFieldFlavorName)

	// f.k remembers the object as created: CREATE_REQUESTED, flavor small.
	ready := &edgeproto.ClusterInst{State: edgeproto.TrackedState_TRACKED_STATE_READY, FlavorName: "large"}
	if _, _, err := ko.Update(f.ctx, f.key, ready, mustFM(t, edgeproto.ClusterInstFieldState, edgeproto.ClusterInstFieldFlavorName), nil); err != nil {
		t.Fatal(err)
	}
	checks := 0
	_, _, err = f.k.Update(f.ctx, f.key, &edgeproto.ClusterInst{Reservable: true}, mustFM(t, edgeproto.ClusterInstFieldReservable), func(cur *edgeproto.ClusterInst) error {
		checks++
		if cur.GetState() != edgeproto.TrackedState_TRACKED_STATE_READY {
			return errors.New("not ready")
		}
		return nil
	})
	if err != nil || checks != 2 {
		t.Fatalf("update refused on a stale object: %v after %d checks", err, checks)
	}

	// Setting the flavor f.k last saw is a change of the current object.
	if _, _, err := ko.Update(f.ctx, f.key, &edgeproto.ClusterInst{FlavorName: "xl"}, fl, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.k.Update(f.ctx, f.key, &edgeproto.ClusterInst{FlavorName: "large"}, fl, nil); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := ko.Get(f.ctx, f.key); got.GetFlavorName() != "large" {
		t.Fatalf("write skipped on a stale object: flavor %q", got.GetFlavorName())
	}

	// Deleted by the other: NotFound, for Update and for a checked Delete.
	if _, err := ko.Delete(f.ctx, f.key, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.k.Update(f.ctx, f.key, f.c, state, nil); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("update of an object deleted elsewhere: %v", err)
	}
	if _, err := ko.Create(f.ctx, f.c); err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.k.Get(f.ctx, f.key); err != nil { // f.k remembers it again
		t.Fatal(err)
	}
	if _, err := ko.Delete(f.ctx, f.key, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := f.k.Delete(f.ctx, f.key, func(*edgeproto.ClusterInst) error { return errors.New("refused") }); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("checked delete of an object deleted elsewhere: %v", err)
	}
}
