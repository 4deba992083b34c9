package controller_test

import (
	"errors"
	"testing"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/fieldmap"
	"github.com/edgekit/edgekit/hosts/controller"
	"github.com/edgekit/edgekit/hosts/controller/controllertest"
	"github.com/edgekit/edgekit/internal/store"
)

// requestReport is a ClusterInstInfo report of state s answering request
// id, as the engine sends it: key, state and request_id.
func requestReport(key *edgeproto.ClusterKey, s edgeproto.TrackedState, id int64) (*edgeproto.ClusterInstInfo, *fieldmap.FieldMap) {
	fm, _ := edgeproto.NewClusterInstInfoFieldMap(edgeproto.ClusterInstInfoFieldKey, edgeproto.ClusterInstInfoFieldState,
		edgeproto.ClusterInstInfoFieldRequestId)
	return &edgeproto.ClusterInstInfo{Key: key, State: s, RequestId: id}, fm
}

func storedCluster(t *testing.T, env *controllertest.Env, key *edgeproto.ClusterKey) (*edgeproto.ClusterInst, bool) {
	t.Helper()
	ci, modRev, err := store.NewKind[*edgeproto.ClusterInst](env.Store).Get(testCtx(t), (&edgeproto.ClusterInst{Key: key}).GetKeyString())
	if errors.Is(err, store.ErrNotFound) {
		return nil, false
	}
	if err != nil {
		t.Fatal(err)
	}
	return ci, modRev != 0
}

// A CRM whose stream broke sends the reports it had in flight again on its
// next stream. When the READY of a create is sent again after the user's
// update of the object was accepted, it must not pass for the update's
// outcome: the report answers the create's request, and the controller
// refuses it, so the object stays UPDATE_REQUESTED (the CRM runs the
// update) and the update's own reports complete it.
func TestALateReportOfAnEarlierRequestIsRefused(t *testing.T) {
	t.Parallel()
	env, ck, cl := noHost(t, true)
	ctx := testCtx(t)
	crm := controller.Reporter{Cloudlet: cl}
	apply := func(s edgeproto.TrackedState, id int64) error {
		info, fm := requestReport(ck, s, id)
		return env.Controller.ApplyInfo(ctx, crm, info, fm)
	}

	created, _ := storedCluster(t, env, ck)
	create := created.GetRequestId()
	if create == 0 {
		t.Fatalf("the controller gave the create no request_id: %v", created)
	}
	for _, s := range []edgeproto.TrackedState{edgeproto.TrackedState_TRACKED_STATE_CREATING, edgeproto.TrackedState_TRACKED_STATE_READY} {
		if err := apply(s, create); err != nil {
			t.Fatalf("report %v of the create: %v", s, err)
		}
	}

	// The user updates the cluster and follows the update.
	admin := clientsOf(env.Conn(env.AdminToken()))
	type result struct {
		ps  []*edgeproto.Progress
		err error
	}
	done := make(chan result, 1)
	go func() {
		ps, err := drain(admin.clusters.UpdateClusterInst(ctx, &edgeproto.UpdateClusterInstRequest{
			ClusterInst: &edgeproto.ClusterInst{Key: ck, KubernetesVersion: "1.31"},
			Fields:      []string{edgeproto.ClusterInstFieldKubernetesVersion}}))
		done <- result{ps, err}
	}()
	var update int64
	controllertest.WaitFor(t, 30e9, "the update accepted", func() bool {
		ci, _ := storedCluster(t, env, ck)
		update = ci.GetRequestId()
		return ci.GetState() == edgeproto.TrackedState_TRACKED_STATE_UPDATE_REQUESTED
	})
	if update <= create {
		t.Fatalf("the update's request_id %d is not above the create's %d", update, create)
	}

	// The READY of the create arrives again, late.
	err := apply(edgeproto.TrackedState_TRACKED_STATE_READY, create)
	if !errors.Is(err, controller.ErrStaleRequest) || !errors.Is(err, controller.ErrStaleReport) {
		t.Fatalf("late READY of the create: got %v, want ErrStaleRequest", err)
	}
	if ci, _ := storedCluster(t, env, ck); ci.GetState() != edgeproto.TrackedState_TRACKED_STATE_UPDATE_REQUESTED || ci.GetRequestId() != update {
		t.Fatalf("after the late READY the cluster is %v at request %d, want UPDATE_REQUESTED at request %d",
			ci.GetState(), ci.GetRequestId(), update)
	}

	// The CRM runs the update: its reports are applied and end the update.
	for _, s := range []edgeproto.TrackedState{edgeproto.TrackedState_TRACKED_STATE_UPDATING, edgeproto.TrackedState_TRACKED_STATE_READY} {
		if err := apply(s, update); err != nil {
			t.Fatalf("report %v of the update: %v", s, err)
		}
	}
	var r result
	select {
	case r = <-done:
	case <-ctx.Done():
		t.Fatal("the update's progress stream did not end")
	}
	if r.err != nil || lastState(t, r.ps) != edgeproto.TrackedState_TRACKED_STATE_READY {
		t.Fatalf("update: %v %v", r.ps, r.err)
	}
	sawUpdating := false
	for _, p := range r.ps {
		sawUpdating = sawUpdating || p.GetState() == edgeproto.TrackedState_TRACKED_STATE_UPDATING
	}
	if !sawUpdating {
		t.Errorf("the update ended without going through UPDATING: %v", r.ps)
	}
	if ci, _ := storedCluster(t, env, ck); ci.GetKubernetesVersion() != "1.31" {
		t.Errorf("kubernetes_version after the update = %q", ci.GetKubernetesVersion())
	}
}

// Request ids only grow for a key, across a delete and a new create: a
// late report of the former object is refused by its id too.
func TestRequestIDsGrowAcrossARecreate(t *testing.T) {
	t.Parallel()
	env, ck, cl := noHost(t, true)
	ctx := testCtx(t)
	crm := controller.Reporter{Cloudlet: cl}
	apply := func(s edgeproto.TrackedState, id int64) error {
		info, fm := requestReport(ck, s, id)
		return env.Controller.ApplyInfo(ctx, crm, info, fm)
	}
	admin := clientsOf(env.Conn(env.AdminToken()))
	created, _ := storedCluster(t, env, ck)
	if err := apply(edgeproto.TrackedState_TRACKED_STATE_READY, created.GetRequestId()); err != nil {
		t.Fatal(err)
	}
	if _, err := drain(admin.clusters.DeleteClusterInst(ctx, &edgeproto.DeleteClusterInstRequest{Key: ck, NoWait: true})); err != nil {
		t.Fatal(err)
	}
	deleting, _ := storedCluster(t, env, ck)
	del := deleting.GetRequestId()
	if del <= created.GetRequestId() {
		t.Fatalf("the delete's request_id %d is not above the create's %d", del, created.GetRequestId())
	}
	if err := apply(edgeproto.TrackedState_TRACKED_STATE_DELETE_DONE, del); err != nil {
		t.Fatal(err)
	}
	if _, found := storedCluster(t, env, ck); found {
		t.Fatal("the cluster is still stored after DELETE_DONE")
	}
	if _, err := drain(admin.clusters.CreateClusterInst(ctx, &edgeproto.CreateClusterInstRequest{NoWait: true, ClusterInst: &edgeproto.ClusterInst{
		Key: ck, CloudletKey: cl, FlavorName: "fake.small"}})); err != nil {
		t.Fatal(err)
	}
	again, _ := storedCluster(t, env, ck)
	if again.GetRequestId() <= del {
		t.Fatalf("the new create's request_id %d is not above the former delete's %d", again.GetRequestId(), del)
	}
	if err := apply(edgeproto.TrackedState_TRACKED_STATE_DELETING, del); !errors.Is(err, controller.ErrStaleRequest) {
		t.Fatalf("late DELETING of the former cluster: got %v, want ErrStaleRequest", err)
	}
}

// A report without a request_id (a resource manager that predates it), or
// with 0, is judged by the transition table alone, as before request ids.
func TestReportsWithoutARequestIDAreJudgedAsBefore(t *testing.T) {
	t.Parallel()
	env, ck, cl := noHost(t, true)
	ctx := testCtx(t)
	crm := controller.Reporter{Cloudlet: cl}
	info, fm := stateReport(ck, edgeproto.TrackedState_TRACKED_STATE_CREATING)
	if err := env.Controller.ApplyInfo(ctx, crm, info, fm); err != nil {
		t.Fatalf("CREATING without a request_id: %v", err)
	}
	info, fm = requestReport(ck, edgeproto.TrackedState_TRACKED_STATE_READY, 0)
	if err := env.Controller.ApplyInfo(ctx, crm, info, fm); err != nil {
		t.Fatalf("READY with request_id 0: %v", err)
	}
	if got := clusterState(t, env, ck); got != edgeproto.TrackedState_TRACKED_STATE_READY {
		t.Fatalf("cluster in %v, want READY", got)
	}
	info, fm = stateReport(ck, edgeproto.TrackedState_TRACKED_STATE_CREATING)
	if err := env.Controller.ApplyInfo(ctx, crm, info, fm); !errors.Is(err, edgeproto.ErrInfoStateRejected) {
		t.Fatalf("stale CREATING without a request_id: got %v, want the transition table's rejection", err)
	}
}
