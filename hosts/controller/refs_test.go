package controller_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/edgekit/edgekit/edgeproto"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// A delete checks only the dependents of what it deletes: a storm of
// writes to other objects of the kinds it checks does not make it conflict
// until it gives up.
func TestDeleteIsNotStarvedByUnrelatedWrites(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := testCtx(t)
	if _, err := drain(w.dev.appInsts.CreateAppInst(ctx, &edgeproto.CreateAppInstRequest{AppInst: w.appInst("busy")})); err != nil {
		t.Fatal(err)
	}
	spare := &edgeproto.ClusterKey{Organization: "developer", Name: "spare"}
	if ps, err := drain(w.dev.clusters.CreateClusterInst(ctx, &edgeproto.CreateClusterInstRequest{ClusterInst: &edgeproto.ClusterInst{
		Key: spare, CloudletKey: w.cloudlet, FlavorName: "fake.small"}})); err != nil || lastState(t, ps) != edgeproto.TrackedState_TRACKED_STATE_READY {
		t.Fatalf("spare cluster: %v %v", ps, err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				// Writes to the App and to the instance's Info keep the
				// AppInst and App kinds busy.
				_, _ = w.dev.apps.UpdateApp(ctx, &edgeproto.UpdateAppRequest{App: &edgeproto.App{Key: w.app,
					Annotations: map[string]string{"n": fmt.Sprint(g, i)}}, Fields: []string{edgeproto.AppFieldAnnotations}})
			}
		})
	}
	ps, err := drain(w.dev.clusters.DeleteClusterInst(ctx, &edgeproto.DeleteClusterInstRequest{Key: spare}))
	close(stop)
	wg.Wait()
	if err != nil || lastState(t, ps) != edgeproto.TrackedState_TRACKED_STATE_DELETE_DONE {
		t.Fatalf("delete of an unused cluster under load: %v %v", ps, err)
	}
}

// A delete of a cluster and a create of an instance on it, at the same
// time, never both succeed: either the instance exists and the delete is
// refused, or the delete came first and the create is refused.
func TestDeleteAndCreateOfADependentAreExclusive(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := testCtx(t)
	for round := range 10 {
		ck := &edgeproto.ClusterKey{Organization: "developer", Name: fmt.Sprintf("r%d", round)}
		if ps, err := drain(w.dev.clusters.CreateClusterInst(ctx, &edgeproto.CreateClusterInstRequest{ClusterInst: &edgeproto.ClusterInst{
			Key: ck, CloudletKey: w.cloudlet, FlavorName: "fake.small"}})); err != nil || lastState(t, ps) != edgeproto.TrackedState_TRACKED_STATE_READY {
			t.Fatalf("round %d: cluster: %v %v", round, ps, err)
		}
		inst := w.appInst(fmt.Sprintf("i%d", round))
		inst.ClusterKey = ck
		var delErr, createErr error
		var wg sync.WaitGroup
		wg.Go(func() {
			_, delErr = drain(w.dev.clusters.DeleteClusterInst(ctx, &edgeproto.DeleteClusterInstRequest{Key: ck, NoWait: true}))
		})
		wg.Go(func() {
			_, createErr = drain(w.dev.appInsts.CreateAppInst(ctx, &edgeproto.CreateAppInstRequest{AppInst: inst, NoWait: true}))
		})
		wg.Wait()
		if (delErr == nil) == (createErr == nil) {
			t.Fatalf("round %d: delete of the cluster: %v; create of an instance on it: %v; want exactly one to succeed", round, delErr, createErr)
		}
		for _, err := range []error{delErr, createErr} {
			if err != nil && status.Code(err) != codes.FailedPrecondition {
				t.Fatalf("round %d: refused with %v, want FailedPrecondition", round, err)
			}
		}
		// Clean up for the next round.
		if createErr == nil {
			waitState(t, w, inst.Key.Name, edgeproto.TrackedState_TRACKED_STATE_READY)
			if _, err := drain(w.dev.appInsts.DeleteAppInst(ctx, &edgeproto.DeleteAppInstRequest{Key: inst.Key})); err != nil {
				t.Fatal(err)
			}
		}
	}
}
