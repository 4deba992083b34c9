package crm_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/hosts/controller/controllertest"
	"github.com/edgekit/edgekit/hosts/crm"
	"github.com/edgekit/edgekit/internal/testenv/netproxy"
	"github.com/edgekit/edgekit/platforms/fake"
	"github.com/prometheus/client_golang/prometheus"
)

// readyEdge is an edge whose CRM runs on a fake platform through a proxy,
// with a READY cluster c1 and an App web.
func readyEdge(t *testing.T, opts ...crmOpts) (*edge, *netproxy.Proxy, *fake.Platform, *runningCRM) {
	t.Helper()
	return readyEdgeWith(t, nil, opts...)
}

// readyEdgeWith is readyEdge with the edge's controller adapted by eopts.
func readyEdgeWith(t *testing.T, eopts []edgeOpt, opts ...crmOpts) (*edge, *netproxy.Proxy, *fake.Platform, *runningCRM) {
	t.Helper()
	e := newEdge(t, eopts...)
	px := netproxy.Start(t, e.env.Addr)
	p := fake.New(fake.Options{})
	c := e.startCRM(t, px.Addr(), p, opts...)
	ctx := testCtx(t)
	waitState[*edgeproto.Cloudlet](t, e, e.cloudlet, edgeproto.TrackedState_TRACKED_STATE_READY)
	ps, err := controllertest.Drain(e.dev.clusters.CreateClusterInst(ctx, &edgeproto.CreateClusterInstRequest{ClusterInst: e.cluster("c1")}))
	if err != nil || controllertest.Final(ps) != edgeproto.TrackedState_TRACKED_STATE_READY {
		t.Fatalf("create cluster: %v %v", ps, err)
	}
	if _, err := e.dev.apps.CreateApp(ctx, &edgeproto.CreateAppRequest{App: e.app("web")}); err != nil {
		t.Fatal(err)
	}
	return e, px, p, c
}

func TestReportsSurviveACutStream(t *testing.T) {
	t.Parallel()
	e, px, p, c := readyEdge(t)
	ctx := testCtx(t)
	i1, i2 := e.appInst("i1", "web", "c1"), e.appInst("i2", "web", "c1")
	gate := p.Pause(fake.OpCreateAppInst, i1.GetKeyString())
	if _, err := controllertest.Drain(e.dev.appInsts.CreateAppInst(ctx, &edgeproto.CreateAppInstRequest{AppInst: i1, NoWait: true})); err != nil {
		t.Fatal(err)
	}
	<-gate.Reached()
	// The create is under way on the site when the link goes down; it
	// finishes there, and a second instance is asked for meanwhile.
	px.Cut()
	gate.Release()
	if err := c.Engine().Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := controllertest.Drain(e.dev.appInsts.CreateAppInst(ctx, &edgeproto.CreateAppInstRequest{AppInst: i2, NoWait: true})); err != nil {
		t.Fatal(err)
	}
	if got := get[*edgeproto.AppInst](t, e, i1.Key).GetState(); got == edgeproto.TrackedState_TRACKED_STATE_READY {
		t.Fatal("i1 READY while the link is cut: the test cut too late")
	}
	if c.PendingReports() == 0 {
		t.Fatal("no report pending while the link is cut")
	}

	px.Restore()
	waitState[*edgeproto.AppInst](t, e, i1.Key, edgeproto.TrackedState_TRACKED_STATE_READY)
	waitState[*edgeproto.AppInst](t, e, i2.Key, edgeproto.TrackedState_TRACKED_STATE_READY)
	if ai := get[*edgeproto.AppInst](t, e, i1.Key); ai.GetRuntimeInfo() == nil {
		t.Errorf("the runtime reported during the cut is lost: %v", ai)
	}
	for _, k := range []string{i1.GetKeyString(), i2.GetKeyString()} {
		if n := p.Calls(fake.OpCreateAppInst, k); n != 1 {
			t.Errorf("%s created %d times, want 1", k, n)
		}
	}
	controllertest.WaitFor(t, 10*time.Second, "every report acknowledged", func() bool { return c.PendingReports() == 0 })
}

func TestASilentControllerIsTakenForDead(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	e, px, p, _ := readyEdgeWith(t, []edgeOpt{shortKeepalive}, func(c *crm.Config) { c.Registerer = reg })
	ctx := testCtx(t)
	streams := func() float64 { return counterSum(t, reg, "edgekit_crm_streams_total") }
	before := streams()
	px.Freeze() // connections stay open; nothing passes
	controllertest.WaitFor(t, 10*time.Second, "the CRM to give up the silent stream", func() bool { return streams() > before })
	px.Restore()
	ps, err := controllertest.Drain(e.dev.appInsts.CreateAppInst(ctx, &edgeproto.CreateAppInstRequest{AppInst: e.appInst("i1", "web", "c1")}))
	if err != nil || controllertest.Final(ps) != edgeproto.TrackedState_TRACKED_STATE_READY {
		t.Fatalf("create after the freeze: %v %v", ps, err)
	}
	if n := p.Calls(fake.OpCreateAppInst, "name=i1,organization=developer"); n != 1 {
		t.Errorf("created %d times, want 1", n)
	}
}

func TestObjectsChangedWhileTheCRMIsDown(t *testing.T) {
	t.Parallel()
	e, px, p, c := readyEdge(t)
	ctx := testCtx(t)
	keep, gone, fresh := e.appInst("keep", "web", "c1"), e.appInst("gone", "web", "c1"), e.appInst("fresh", "web", "c1")
	for _, ai := range []*edgeproto.AppInst{keep, gone} {
		ps, err := controllertest.Drain(e.dev.appInsts.CreateAppInst(ctx, &edgeproto.CreateAppInstRequest{AppInst: ai}))
		if err != nil || controllertest.Final(ps) != edgeproto.TrackedState_TRACKED_STATE_READY {
			t.Fatalf("create %s: %v %v", ai.GetKeyString(), ps, err)
		}
	}
	c.stop()
	// While no CRM runs: one instance is deleted, one asked for.
	if _, err := controllertest.Drain(e.dev.appInsts.DeleteAppInst(ctx, &edgeproto.DeleteAppInstRequest{Key: gone.Key, NoWait: true})); err != nil {
		t.Fatal(err)
	}
	if _, err := controllertest.Drain(e.dev.appInsts.CreateAppInst(ctx, &edgeproto.CreateAppInstRequest{AppInst: fresh, NoWait: true})); err != nil {
		t.Fatal(err)
	}
	// A new CRM process (no memory of the first) converges.
	e.startCRM(t, px.Addr(), p)
	controllertest.WaitFor(t, 20*time.Second, "the deleted instance to go", func() bool {
		return !get[*edgeproto.AppInst](t, e, gone.Key).ProtoReflect().IsValid()
	})
	waitState[*edgeproto.AppInst](t, e, fresh.Key, edgeproto.TrackedState_TRACKED_STATE_READY)
	waitState[*edgeproto.AppInst](t, e, keep.Key, edgeproto.TrackedState_TRACKED_STATE_READY)
	for key, want := range map[string]int{keep.GetKeyString(): 1, gone.GetKeyString(): 1, fresh.GetKeyString(): 1} {
		if n := p.Calls(fake.OpCreateAppInst, key); n != want {
			t.Errorf("%s created %d times, want %d", key, n, want)
		}
	}
	if n := p.Calls(fake.OpDeleteAppInst, gone.GetKeyString()); n != 1 {
		t.Errorf("deleted instance: %d platform deletes, want 1", n)
	}
}

// An instance the platform lost while no CRM ran is created again when a
// CRM starts; when that fails, the instance shows CREATE_ERROR with the
// platform's error, not a READY that no longer runs.
func TestInstancesThePlatformLostAreCreatedAgain(t *testing.T) {
	t.Parallel()
	e, px, p, c := readyEdge(t)
	ctx := testCtx(t)
	back, broken := e.appInst("back", "web", "c1"), e.appInst("broken", "web", "c1")
	for _, ai := range []*edgeproto.AppInst{back, broken} {
		ps, err := controllertest.Drain(e.dev.appInsts.CreateAppInst(ctx, &edgeproto.CreateAppInstRequest{AppInst: ai}))
		if err != nil || controllertest.Final(ps) != edgeproto.TrackedState_TRACKED_STATE_READY {
			t.Fatalf("create %s: %v %v", ai.GetKeyString(), ps, err)
		}
	}
	c.stop()
	// The platform loses both; creating broken again fails.
	cluster := get[*edgeproto.ClusterInst](t, e, e.cluster("c1").Key)
	for _, ai := range []*edgeproto.AppInst{back, broken} {
		if err := p.DeleteAppInst(ctx, cluster, e.app("web"), ai, executor.NewMemReservations(), executor.ProgressFunc(func(string) {})); err != nil {
			t.Fatal(err)
		}
	}
	p.Inject(fake.Fault{Op: fake.OpCreateAppInst, Key: broken.GetKeyString(), Err: errors.New("image pull failed")})
	e.startCRM(t, px.Addr(), p)
	waitState[*edgeproto.AppInst](t, e, broken.Key, edgeproto.TrackedState_TRACKED_STATE_CREATE_ERROR)
	if errs := get[*edgeproto.AppInst](t, e, broken.Key).GetErrors(); len(errs) == 0 || !strings.Contains(strings.Join(errs, " "), "image pull failed") {
		t.Errorf("broken instance errors %q, want the platform's", errs)
	}
	controllertest.WaitFor(t, 20*time.Second, "back to be created again", func() bool {
		return p.Calls(fake.OpCreateAppInst, back.GetKeyString()) == 2
	})
	waitState[*edgeproto.AppInst](t, e, back.Key, edgeproto.TrackedState_TRACKED_STATE_READY)
	if _, ok := p.AppInst(back.GetKeyString()); !ok {
		t.Error("the READY instance is not on the platform")
	}
}

func TestInterruptedChangesResumeOnRestart(t *testing.T) {
	t.Parallel()
	// A short stop timeout: the stop cancels the create, as a kill would.
	e, px, p, c := readyEdge(t, func(c *crm.Config) { c.StopTimeout = 50 * time.Millisecond })
	ctx := testCtx(t)
	i1 := e.appInst("i1", "web", "c1")
	gate := p.Pause(fake.OpCreateAppInst, i1.GetKeyString())
	if _, err := controllertest.Drain(e.dev.appInsts.CreateAppInst(ctx, &edgeproto.CreateAppInstRequest{AppInst: i1, NoWait: true})); err != nil {
		t.Fatal(err)
	}
	<-gate.Reached()
	waitState[*edgeproto.AppInst](t, e, i1.Key, edgeproto.TrackedState_TRACKED_STATE_CREATING)
	// The CRM dies mid-create, reporting nothing more; so does the link.
	px.Cut()
	c.stop()
	gate.Release()
	px.Restore()
	e.startCRM(t, px.Addr(), p)
	waitState[*edgeproto.AppInst](t, e, i1.Key, edgeproto.TrackedState_TRACKED_STATE_READY)
}

// counterSum adds up the values of a counter vector of reg.
func counterSum(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	total := 0.0
	for _, mf := range mfs {
		if mf.GetName() == name {
			for _, m := range mf.GetMetric() {
				total += m.GetCounter().GetValue()
			}
		}
	}
	return total
}

// The tests' link outlasts a stall such as a loaded machine makes (here a
// link that passes nothing for 2s): the CRM keeps its stream, and a
// lifecycle run after it goes through without a reconnect. With a
// keepalive of 200ms the CRM gave the stream up after 600ms of silence, and
// TestCRMRunsTheLifecycleOfItsCloudlet, on such a machine, ran on the
// reconnect path, where a report of a create that was resent after the
// reconnect could settle the next update before the CRM saw it (the
// platform's update then never ran).
func TestTheTestLinkOutlastsAStall(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	e, px, p, _ := readyEdge(t, func(c *crm.Config) { c.Registerer = reg })
	ctx := testCtx(t)
	streams := func() float64 { return counterSum(t, reg, "edgekit_crm_streams_total") }
	before := streams()
	px.Freeze()
	select { // the stall's length, not a synchronisation
	case <-time.After(2 * time.Second):
	case <-ctx.Done():
		t.Fatal(ctx.Err())
	}
	px.Restore()
	inst := e.appInst("i1", "web", "c1")
	ps, err := controllertest.Drain(e.dev.appInsts.CreateAppInst(ctx, &edgeproto.CreateAppInstRequest{AppInst: inst}))
	if err != nil || controllertest.Final(ps) != edgeproto.TrackedState_TRACKED_STATE_READY {
		t.Fatalf("create after the stall: %v %v", ps, err)
	}
	inst.Annotations = map[string]string{"team": "blue"}
	ps, err = controllertest.Drain(e.dev.appInsts.UpdateAppInst(ctx, &edgeproto.UpdateAppInstRequest{AppInst: inst,
		Fields: []string{edgeproto.AppInstFieldAnnotations}}))
	if err != nil || controllertest.Final(ps) != edgeproto.TrackedState_TRACKED_STATE_READY {
		t.Fatalf("update after the stall: %v %v", ps, err)
	}
	if n := p.Calls(fake.OpUpdateAppInst, inst.GetKeyString()); n != 1 {
		t.Errorf("platform update called %d times, want 1", n)
	}
	if after := streams(); after != before {
		t.Errorf("the CRM gave up its stream during a 2s stall (%v streams ended before, %v after)", before, after)
	}
}
