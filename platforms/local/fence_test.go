package local

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
)

// instProcs lists the live processes of root whose marker names inst.
func instProcs(t *testing.T, root string, inst *edgeproto.AppInst) []int {
	t.Helper()
	name, err := appDirName(inst.GetKey())
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for pid, m := range markedProcs(t, root) {
		if strings.HasSuffix(m, "/"+name) {
			out = append(out, pid)
		}
	}
	return out
}

// TestTwoPlatformsShareRoot: two platforms over one state directory (two
// engines, such as two CCRM replicas) both serve the cloudlet at once;
// when both create the same instance at the same time there is one
// process; while one holds an instance's lock (paused in its create, its
// process not started) the other lists the cloudlet, and its own create
// of that instance waits for the lock instead of starting a duplicate.
func TestTwoPlatformsShareRoot(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	second := e.newPlatform()
	t.Cleanup(func() { _ = second.Close() })
	e.createCluster(e.cluster)
	if err := second.InitCloudlet(e.ctx(), e.cloudlet, e.res, nil); err != nil {
		t.Fatalf("second platform's InitCloudlet: %v", err)
	}
	app := newApp()

	// Each platform creates its own instance, at the same time.
	a1, a2 := e.newInst("a1"), e.newInst("a2")
	var wg sync.WaitGroup
	errs := make([]error, 4)
	wg.Add(2)
	go func() {
		defer wg.Done()
		_, errs[0] = e.p.CreateAppInst(e.ctx(), e.cluster, app, a1, e.res, nil)
	}()
	go func() {
		defer wg.Done()
		_, errs[1] = second.CreateAppInst(e.ctx(), e.cluster, app, a2, e.res, nil)
	}()
	wg.Wait()
	if errs[0] != nil || errs[1] != nil {
		t.Fatalf("creates on two platforms: %v, %v", errs[0], errs[1])
	}

	// Both create the same instance at once: one process.
	a3 := e.newInst("a3")
	wg.Add(2)
	for i, p := range []*Platform{e.p, second} {
		inst := e.newInst("a3") // each engine has its own copy
		go func() {
			defer wg.Done()
			_, errs[2+i] = p.CreateAppInst(e.ctx(), e.cluster, app, inst, e.res, nil)
		}()
	}
	wg.Wait()
	if errs[2] != nil || errs[3] != nil {
		t.Fatalf("the same create on two platforms: %v, %v", errs[2], errs[3])
	}
	for _, inst := range []*edgeproto.AppInst{a1, a2, a3} {
		if got := instProcs(t, e.root, inst); len(got) != 1 {
			t.Errorf("instance %s has processes %v, want one", inst.Key.Name, got)
		}
	}

	// The first platform pauses in a create, holding a4's lock.
	a4 := e.newInst("a4")
	paused, resume := make(chan struct{}), make(chan struct{})
	var once sync.Once
	e.p.hook = func(point string) {
		if point == hookAppIntent {
			once.Do(func() {
				close(paused)
				<-resume
			})
		}
	}
	created := make(chan error, 1)
	go func() {
		_, err := e.p.CreateAppInst(e.ctx(), e.cluster, app, a4, e.res, nil)
		created <- err
	}()
	select {
	case <-paused:
	case err := <-created:
		t.Fatalf("create ended before its pause: %v", err)
	}
	resumed := false
	defer func() {
		if !resumed {
			close(resume)
		}
	}()
	// The other platform reads the inventory meanwhile.
	inv, err := second.ListInsts(e.ctx(), e.cloudlet)
	if err != nil {
		t.Fatalf("ListInsts while another platform holds a lock: %v", err)
	}
	names := map[string]bool{}
	for _, ai := range inv.AppInsts {
		names[ai.Key.Name] = true
	}
	for _, n := range []string{"a1", "a2", "a3", "a4"} {
		if !names[n] {
			t.Errorf("ListInsts lists %v, missing %s", names, n)
		}
	}
	// Its create of a4 waits for the lock: it gives up when its context
	// ends, having started nothing.
	short, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	_, err = second.CreateAppInst(short, e.cluster, app, e.newInst("a4"), e.res, nil)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("create of an instance another platform is creating: %v, want it to wait for the lock", err)
	}
	if got := instProcs(t, e.root, a4); len(got) != 0 {
		t.Errorf("processes %v of a4 started while the other platform held its lock", got)
	}
	resumed = true
	close(resume)
	if err := <-created; err != nil {
		t.Fatalf("paused create: %v", err)
	}
	if _, err := second.CreateAppInst(e.ctx(), e.cluster, app, e.newInst("a4"), e.res, nil); err != nil {
		t.Fatalf("create of a4 by the second platform after the first one: %v", err)
	}
	if got := instProcs(t, e.root, a4); len(got) != 1 {
		t.Errorf("instance a4 has processes %v, want one", got)
	}

	// The second platform deletes the cluster the first one created.
	if err := second.DeleteCluster(e.ctx(), e.cloudlet, e.cluster, e.res, nil); err != nil {
		t.Fatalf("DeleteCluster on the second platform: %v", err)
	}
	checkNoneRunning(t, e.root)
}

// fencedCtx returns ctx carrying the fence of a claim with token.
func fencedCtx(ctx context.Context, token int64) context.Context {
	return executor.WithFence(ctx, executor.Fence{Key: "claims/test", Token: token})
}

// recordedFence reads the fence of the record at path.
func recordedFence(t *testing.T, path string) int64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f fenced
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	return f.Fence
}

// TestStaleFenceRefused: an engine whose claim moved to another engine
// (over the same state directory) while it was paused (by the test hook,
// before it locked the object) has every write refused with executor.ErrFenced once it resumes: its update does not
// restart the instance, its deletes stop and remove nothing. Writes under
// the newer fence, and under none, go on.
func TestStaleFenceRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	stale := e.p
	fresh := e.newPlatform()
	t.Cleanup(func() { _ = fresh.Close() })
	if err := stale.InitCloudlet(fencedCtx(e.ctx(), 1), e.cloudlet, e.res, nil); err != nil {
		t.Fatal(err)
	}
	if err := stale.CreateCluster(fencedCtx(e.ctx(), 2), e.cloudlet, e.cluster, e.res, nil); err != nil {
		t.Fatal(err)
	}
	app := newApp()
	inst := e.newInst("a1")
	if _, err := stale.CreateAppInst(fencedCtx(e.ctx(), 3), e.cluster, app, inst, e.res, nil); err != nil {
		t.Fatal(err)
	}
	// The cluster's claim moves to the other engine, which writes under
	// it; the instance's is still the first engine's.
	if err := fresh.UpdateCluster(fencedCtx(e.ctx(), 10), e.cloudlet, e.cluster, e.res, nil); err != nil {
		t.Fatal(err)
	}
	rt, err := stale.UpdateAppInst(fencedCtx(e.ctx(), 3), e.cluster, app, inst, e.res, nil)
	if err != nil {
		t.Fatal(err)
	}
	statePath := filepath.Join(e.mustAppDir(inst), appStateFile)
	if got := recordedFence(t, statePath); got != 3 {
		t.Fatalf("state.json records fence %d, want 3", got)
	}
	pid := rt.Pids[0]

	// The stale engine was paused at the start of a delete, before it
	// locked the instance; the other one updates it meanwhile under its
	// newer claim; resumed, the delete is refused and stops nothing.
	paused, resume := make(chan struct{}), make(chan struct{})
	var once sync.Once
	stale.hook = func(point string) {
		if point == hookBegin {
			once.Do(func() {
				close(paused)
				<-resume
			})
		}
	}
	deleted := make(chan error, 1)
	go func() {
		deleted <- stale.DeleteAppInst(fencedCtx(e.ctx(), 3), e.cluster, app, e.newInst("a1"), e.res, nil)
	}()
	<-paused
	if rt, err = fresh.UpdateAppInst(fencedCtx(e.ctx(), 11), e.cluster, app, inst, e.res, nil); err != nil {
		t.Fatal(err)
	}
	close(resume)
	if err := <-deleted; !errors.Is(err, executor.ErrFenced) {
		t.Fatalf("delete resumed after the claim moved: %v, want ErrFenced", err)
	}
	if got := instProcs(t, e.root, inst); len(got) != 1 || int64(got[0]) != pid {
		t.Fatalf("processes of the instance after the resumed delete: %v, want just %d", got, pid)
	}
	stale.hook = nil
	if got := recordedFence(t, statePath); got != 11 {
		t.Fatalf("state.json records fence %d, want 11", got)
	}

	// The paused engine resumes under its old claims.
	changed := newApp("EXTRA=1") // an update that would restart it
	if _, err := stale.UpdateAppInst(fencedCtx(e.ctx(), 3), e.cluster, changed, inst, e.res, nil); !errors.Is(err, executor.ErrFenced) {
		t.Fatalf("update under a stale fence: %v, want ErrFenced", err)
	} else if !strings.Contains(err.Error(), "fence 11") || !strings.Contains(err.Error(), "under 3") {
		t.Errorf("error %q does not name both fences", err)
	}
	if err := stale.DeleteAppInst(fencedCtx(e.ctx(), 3), e.cluster, app, inst, e.res, nil); !errors.Is(err, executor.ErrFenced) {
		t.Fatalf("delete under a stale fence: %v, want ErrFenced", err)
	}
	if err := stale.DeleteCluster(fencedCtx(e.ctx(), 2), e.cloudlet, e.cluster, e.res, nil); !errors.Is(err, executor.ErrFenced) {
		t.Fatalf("cluster delete under a stale fence: %v, want ErrFenced", err)
	}
	if got := instProcs(t, e.root, inst); len(got) != 1 || int64(got[0]) != pid {
		t.Fatalf("processes of the instance after refused writes: %v, want just %d", got, pid)
	}
	if got := recordedFence(t, statePath); got != 11 {
		t.Errorf("state.json records fence %d after refused writes, want 11", got)
	}

	// A write under no fence (a host with one engine) keeps the fence.
	if _, err := stale.UpdateAppInst(e.ctx(), e.cluster, app, inst, e.res, nil); err != nil {
		t.Fatalf("update under no fence: %v", err)
	}
	if got := recordedFence(t, statePath); got != 11 {
		t.Errorf("state.json records fence %d after a write under none, want 11", got)
	}
	// The newer claim holder deletes.
	if err := fresh.DeleteCluster(fencedCtx(e.ctx(), 12), e.cloudlet, e.cluster, e.res, nil); err != nil {
		t.Fatalf("cluster delete under the newer fence: %v", err)
	}
	checkNoneRunning(t, e.root)
}
