package crm_test

import (
	"slices"
	"testing"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/hosts/controller/controllertest"
	"github.com/edgekit/edgekit/platforms/fake"
)

func TestCRMRunsTheLifecycleOfItsCloudlet(t *testing.T) {
	t.Parallel()
	e := newEdge(t)
	ctx := testCtx(t)
	p := fake.New(fake.Options{})
	c := e.startCRM(t, e.env.Addr, p)

	// First connect: the cloudlet is initialised and reported READY.
	waitState[*edgeproto.Cloudlet](t, e, e.cloudlet, edgeproto.TrackedState_TRACKED_STATE_READY)
	<-c.Synced()
	info := get[*edgeproto.CloudletInfo](t, e, e.cloudlet)
	if info.GetState() != edgeproto.CloudletState_CLOUDLET_STATE_READY || len(info.GetFlavors()) == 0 {
		t.Fatalf("CloudletInfo after init: state %v, %d flavors", info.GetState(), len(info.GetFlavors()))
	}

	ps, err := controllertest.Drain(e.dev.clusters.CreateClusterInst(ctx, &edgeproto.CreateClusterInstRequest{ClusterInst: e.cluster("c1")}))
	if err != nil || controllertest.Final(ps) != edgeproto.TrackedState_TRACKED_STATE_READY {
		t.Fatalf("create cluster: %v %v", ps, err)
	}
	if _, err := e.dev.apps.CreateApp(ctx, &edgeproto.CreateAppRequest{App: e.app("web")}); err != nil {
		t.Fatal(err)
	}
	ps, err = controllertest.Drain(e.dev.appInsts.CreateAppInst(ctx, &edgeproto.CreateAppInstRequest{AppInst: e.appInst("i1", "web", "c1")}))
	if err != nil || controllertest.Final(ps) != edgeproto.TrackedState_TRACKED_STATE_READY {
		t.Fatalf("create app instance: %v %v", ps, err)
	}
	var msgs []string
	for _, p := range ps {
		msgs = append(msgs, p.GetMessage())
	}
	if !slices.Contains(msgs, "Creating AppInst") {
		t.Errorf("the create's progress %q lacks the CRM engine's task", msgs)
	}
	if ai := get[*edgeproto.AppInst](t, e, e.appInst("i1", "", "").Key); ai.GetRuntimeInfo() == nil {
		t.Errorf("the runtime the CRM reported is not on the AppInst: %v", ai)
	}

	upd := e.appInst("i1", "web", "c1")
	upd.Annotations = map[string]string{"team": "blue"}
	ps, err = controllertest.Drain(e.dev.appInsts.UpdateAppInst(ctx, &edgeproto.UpdateAppInstRequest{AppInst: upd,
		Fields: []string{edgeproto.AppInstFieldAnnotations}}))
	if err != nil || controllertest.Final(ps) != edgeproto.TrackedState_TRACKED_STATE_READY {
		t.Fatalf("update app instance: %v %v", ps, err)
	}

	ps, err = controllertest.Drain(e.dev.appInsts.DeleteAppInst(ctx, &edgeproto.DeleteAppInstRequest{Key: upd.Key}))
	if err != nil || controllertest.Final(ps) != edgeproto.TrackedState_TRACKED_STATE_DELETE_DONE {
		t.Fatalf("delete app instance: %v %v", ps, err)
	}
	if _, err := e.dev.apps.DeleteApp(ctx, &edgeproto.DeleteAppRequest{Key: appKey("web")}); err != nil {
		t.Fatal(err)
	}
	ps, err = controllertest.Drain(e.dev.clusters.DeleteClusterInst(ctx, &edgeproto.DeleteClusterInstRequest{Key: e.cluster("c1").Key}))
	if err != nil || controllertest.Final(ps) != edgeproto.TrackedState_TRACKED_STATE_DELETE_DONE {
		t.Fatalf("delete cluster: %v %v", ps, err)
	}
	for _, op := range []struct {
		op  fake.Op
		key string
	}{
		{fake.OpCreateCluster, "name=c1,organization=developer"},
		{fake.OpCreateAppInst, "name=i1,organization=developer"},
		{fake.OpUpdateAppInst, "name=i1,organization=developer"},
		{fake.OpDeleteAppInst, "name=i1,organization=developer"},
		{fake.OpDeleteCluster, "name=c1,organization=developer"},
	} {
		if n := p.Calls(op.op, op.key); n != 1 {
			t.Errorf("platform %s %s called %d times, want 1", op.op, op.key, n)
		}
	}
	controllertest.WaitFor(t, 5e9, "every report acknowledged", func() bool { return c.PendingReports() == 0 })
}
