package crm_test

import (
	"testing"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/hosts/controller/controllertest"
	"github.com/edgekit/edgekit/platforms/fake"
)

// The READY of a create that the CRM could not deliver before its link
// went down is sent after the reconnect, when the controller has accepted
// an update of the object meanwhile (here with crm_override
// IGNORE_TRANSIENT_STATE, as the object was still CREATING for the
// controller). That READY answers the create: the controller refuses it
// rather than take it for the update's outcome, and the update runs on the
// site and ends through UPDATING.
func TestAReportSentAgainAfterAReconnectDoesNotEndTheNextRequest(t *testing.T) {
	t.Parallel()
	e, px, p, c := readyEdge(t)
	ctx := testCtx(t)
	i1 := e.appInst("i1", "web", "c1")
	key := i1.GetKeyString()
	gate := p.Pause(fake.OpCreateAppInst, key)
	if _, err := controllertest.Drain(e.dev.appInsts.CreateAppInst(ctx, &edgeproto.CreateAppInstRequest{AppInst: i1, NoWait: true})); err != nil {
		t.Fatal(err)
	}
	<-gate.Reached()
	waitState[*edgeproto.AppInst](t, e, i1.Key, edgeproto.TrackedState_TRACKED_STATE_CREATING)
	px.Cut()
	gate.Release()
	if err := c.Engine().Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if c.PendingReports() == 0 {
		t.Fatal("the create's READY is not pending while the link is cut")
	}

	// The user updates the instance the controller still sees CREATING,
	// and follows the update.
	upd := e.appInst("i1", "web", "c1")
	upd.Annotations = map[string]string{"team": "blue"}
	upd.CrmOverride = edgeproto.CRMOverride_CRM_OVERRIDE_IGNORE_TRANSIENT_STATE
	type result struct {
		ps  []*edgeproto.Progress
		err error
	}
	done := make(chan result, 1)
	go func() {
		ps, err := controllertest.Drain(e.dev.appInsts.UpdateAppInst(ctx, &edgeproto.UpdateAppInstRequest{AppInst: upd,
			Fields: []string{edgeproto.AppInstFieldAnnotations}}))
		done <- result{ps, err}
	}()
	waitState[*edgeproto.AppInst](t, e, i1.Key, edgeproto.TrackedState_TRACKED_STATE_UPDATE_REQUESTED)

	px.Restore()
	var r result
	select {
	case r = <-done:
	case <-ctx.Done():
		t.Fatal("the update's progress stream did not end")
	}
	if r.err != nil || controllertest.Final(r.ps) != edgeproto.TrackedState_TRACKED_STATE_READY {
		t.Fatalf("update: %v %v", r.ps, r.err)
	}
	sawUpdating := false
	for _, p := range r.ps {
		sawUpdating = sawUpdating || p.GetState() == edgeproto.TrackedState_TRACKED_STATE_UPDATING
	}
	if !sawUpdating {
		t.Errorf("the update ended without going through UPDATING (the create's READY ended it): %v", r.ps)
	}
	controllertest.WaitFor(t, 20e9, "the update to run on the site", func() bool { return p.Calls(fake.OpUpdateAppInst, key) > 0 })
	if n := p.Calls(fake.OpUpdateAppInst, key); n != 1 {
		t.Errorf("platform update called %d times, want 1", n)
	}
	waitState[*edgeproto.AppInst](t, e, i1.Key, edgeproto.TrackedState_TRACKED_STATE_READY)
	controllertest.WaitFor(t, 10e9, "every report acknowledged", func() bool { return c.PendingReports() == 0 })
}
