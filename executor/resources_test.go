package executor_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/platforms/fake"
)

// snapshotUse returns the vCPUs used and the clusters listed by the last
// resources snapshot reported for the test cloudlet.
func snapshotUse(t *testing.T, w *world) (vcpus uint64, clusters int) {
	t.Helper()
	info, ok := w.cloudletInfos.Get(executor.KeyString(cloudletKey))
	if !ok || info.ResourcesSnapshot == nil {
		t.Fatalf("no resources snapshot reported for %s", executor.KeyString(cloudletKey))
	}
	for _, r := range info.ResourcesSnapshot.Info {
		if r.Name == fake.ResourceVCPUs {
			vcpus = r.Used
		}
	}
	return vcpus, len(info.ResourcesSnapshot.ClusterInsts)
}

// After every cluster operation the engine refreshes the cloudlet's
// resources snapshot and reports it, coalescing a burst into a few
// refreshes; the last snapshot reflects the last change.
func TestResourcesRefreshedAfterChangesCoalesced(t *testing.T) {
	const n = 100
	w := newWorld()
	p := fake.New(fake.Options{})
	eng, err := executor.New(w.config(p))
	if err != nil {
		t.Fatal(err)
	}
	start(t, eng)
	cl := cloudlet(edgeproto.TrackedState_TRACKED_STATE_READY)
	cl.ResourceQuotas = nil
	w.cloudlets.Put(cl)
	if err := wait(t, mustSubmit(t, eng, cl)); err != nil {
		t.Fatalf("cloudlet refresh: %v", err)
	}
	ck := executor.KeyString(cloudletKey)
	initGathers := p.Calls(fake.OpGatherCloudletInfo, ck)

	// Creates: the first refresh is held in the platform until every
	// create ended, so all the others coalesce behind it.
	gate := p.Pause(fake.OpGatherCloudletInfo, ck)
	submitAll := func(state edgeproto.TrackedState, from, to int) {
		t.Helper()
		var (
			wg   sync.WaitGroup
			mu   sync.Mutex
			errs []error
		)
		for i := from; i < to; i++ {
			wg.Go(func() {
				h, err := eng.Submit(cluster(fmt.Sprintf("c%03d", i), state))
				if err == nil {
					err = h.Wait(waitCtx(t))
				}
				if err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if len(errs) > 0 {
			t.Fatalf("%d of %d operations failed, first: %v", len(errs), to-from, errs[0])
		}
	}
	submitAll(edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED, 0, n)
	select {
	case <-gate.Reached():
	case <-waitCtx(t).Done():
		t.Fatal("no resources refresh started after the creates")
	}
	gate.Release()
	if err := eng.Wait(waitCtx(t)); err != nil {
		t.Fatal(err)
	}
	refreshes := p.Calls(fake.OpGatherCloudletInfo, ck) - initGathers
	if refreshes < 1 || refreshes > 10 {
		t.Errorf("%d creates gave %d resources refreshes, want 1..10", n, refreshes)
	}
	medium := uint64(2) // vCPUs of fake.medium
	if vcpus, clusters := snapshotUse(t, w); clusters != n || vcpus != n*medium {
		t.Errorf("after %d creates the snapshot lists %d clusters using %d vCPUs, want %d using %d", n, clusters, vcpus, n, n*medium)
	}

	// Deletes, without holding anything: the last snapshot still shows
	// the last state.
	before := p.Calls(fake.OpGatherCloudletInfo, ck)
	submitAll(edgeproto.TrackedState_TRACKED_STATE_DELETE_REQUESTED, 0, n/2)
	if err := eng.Wait(waitCtx(t)); err != nil {
		t.Fatal(err)
	}
	if got := p.Calls(fake.OpGatherCloudletInfo, ck) - before; got < 1 || got > n/2 {
		t.Errorf("%d deletes gave %d resources refreshes, want 1..%d", n/2, got, n/2)
	}
	if vcpus, clusters := snapshotUse(t, w); clusters != n/2 || vcpus != n/2*medium {
		t.Errorf("after deleting %d of %d the snapshot lists %d clusters using %d vCPUs, want %d using %d",
			n/2, n, clusters, vcpus, n/2, n/2*medium)
	}
}

// A refresh runs under Config.ResourcesGuard: with the context the guard
// returns, released when it ends; a guard answering ErrBusy skips it.
func TestResourcesRefreshRunsUnderItsGuard(t *testing.T) {
	type tokenKey struct{}
	w := newWorld()
	p := fake.New(fake.Options{})
	cfg := w.config(p)
	var (
		mu             sync.Mutex
		busy           = true
		guarded, freed int
		tokens         []any
	)
	cfg.ResourcesGuard = func(ctx context.Context, kind, key string) (context.Context, func(), error) {
		mu.Lock()
		defer mu.Unlock()
		if kind != "Cloudlet" || key != executor.KeyString(cloudletKey) {
			t.Errorf("guard asked for %s %s", kind, key)
		}
		if busy {
			return nil, nil, fmt.Errorf("%w: claimed", executor.ErrBusy)
		}
		guarded++
		return context.WithValue(ctx, tokenKey{}, "claim"), func() { mu.Lock(); freed++; mu.Unlock() }, nil
	}
	cfg.Objects.Cloudlets = executor.GetterFunc[*edgeproto.CloudletKey, *edgeproto.Cloudlet](
		func(ctx context.Context, k *edgeproto.CloudletKey) (*edgeproto.Cloudlet, error) {
			mu.Lock()
			tokens = append(tokens, ctx.Value(tokenKey{}))
			mu.Unlock()
			return cloudlet(edgeproto.TrackedState_TRACKED_STATE_READY), nil
		})
	eng, err := executor.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	start(t, eng)
	ck := executor.KeyString(cloudletKey)
	run := func(name string) {
		t.Helper()
		if err := wait(t, mustSubmit(t, eng, cluster(name, edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED))); err != nil {
			t.Fatal(err)
		}
		if err := eng.Wait(waitCtx(t)); err != nil {
			t.Fatal(err)
		}
	}
	run("c1")
	if n := p.Calls(fake.OpGatherCloudletInfo, ck); n != 0 {
		t.Errorf("a busy guard let %d refreshes through", n)
	}
	mu.Lock()
	busy = false
	tokens = nil
	mu.Unlock()
	run("c2")
	mu.Lock()
	defer mu.Unlock()
	if n := p.Calls(fake.OpGatherCloudletInfo, ck); n != 1 || guarded != 1 || freed != 1 {
		t.Errorf("gathers %d, guarded %d, released %d; want 1 each", n, guarded, freed)
	}
	if len(tokens) != 2 || tokens[0] != nil || tokens[1] != "claim" {
		t.Errorf("cloudlet lookups saw tokens %v, want the operation's (none) then the guard's", tokens)
	}
}
