package executor_test

import (
	"errors"
	"testing"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/fieldmap"
	"github.com/edgekit/edgekit/platforms/fake"
)

// Every report of an operation carries the request_id of the object the
// engine acts on, so that the receiver can tell which request it answers;
// an object without one (0) gets reports without the flag.
func TestReportsCarryTheRequestTheyAnswer(t *testing.T) {
	l := newLink[*edgeproto.ClusterInstInfo]()
	eng, _, _, _ := deliveryEngine(t, l, fastRetry)
	reportsOf := func(obj *edgeproto.ClusterInst) []*fieldmap.FieldMap {
		t.Helper()
		_, before := l.counts()
		if err := wait(t, mustSubmit(t, eng, obj)); err != nil {
			t.Fatalf("%s: %v", obj.State, err)
		}
		_, after := l.counts()
		return after[len(before):]
	}
	ck := executor.KeyString(clusterKey("c1"))
	for _, step := range []struct {
		state edgeproto.TrackedState
		id    int64
	}{
		{edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED, 7},
		{edgeproto.TrackedState_TRACKED_STATE_UPDATE_REQUESTED, 9},
	} {
		c := cluster("c1", step.state)
		c.RequestId = step.id
		reports := reportsOf(c)
		if len(reports) < 2 {
			t.Fatalf("%s: %d reports, want the running state and the outcome at least", step.state, len(reports))
		}
		for i, fm := range reports {
			if !fm.Has(edgeproto.ClusterInstInfoFieldRequestId) {
				t.Errorf("%s: report %d (%v) lacks the request_id", step.state, i, fm)
			}
		}
		if info, _ := l.cache().Get(ck); info.GetRequestId() != step.id {
			t.Errorf("%s: the receiver holds request_id %d, want %d", step.state, info.GetRequestId(), step.id)
		}
	}
	for i, fm := range reportsOf(cluster("c2", edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED)) {
		if fm.Has(edgeproto.ClusterInstInfoFieldRequestId) {
			t.Errorf("report %d (%v) of an object without a request_id names the flag", i, fm)
		}
	}
}

// What an earlier request could not deliver is not sent with the reports
// of a later request: the cloudlet's READY of a create that failed to go
// out must not reach the receiver with the request_id of the update that
// follows (the update's first report sets no state), where it would read
// as the update's outcome.
func TestUndeliveredFlagsOfAnEarlierRequestAreDropped(t *testing.T) {
	p := fake.New(fake.Options{})
	w := newWorld()
	l := newLink[*edgeproto.CloudletInfo]()
	l.set(func(_ int, i *edgeproto.CloudletInfo, fm *fieldmap.FieldMap) error {
		if fm.Has(edgeproto.CloudletInfoFieldState) && i.State == edgeproto.CloudletState_CLOUDLET_STATE_READY {
			return errLinkDown
		}
		return nil
	})
	cfg := w.config(p)
	cfg.CloudletInfos = l
	cfg.ReportRetry = fastRetry
	eng, err := executor.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	start(t, eng)
	create := cloudlet(edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED)
	create.RequestId = 7
	if err := wait(t, mustSubmit(t, eng, create)); !errors.Is(err, executor.ErrReportFailed) {
		t.Fatalf("create over a link refusing READY: %v, want ErrReportFailed", err)
	}
	l.set(nil)
	_, before := l.counts()

	update := cloudlet(edgeproto.TrackedState_TRACKED_STATE_UPDATE_REQUESTED)
	update.RequestId = 9
	gate := p.Pause(fake.OpInitCloudlet, executor.KeyString(update))
	h := mustSubmit(t, eng, update)
	<-gate.Reached()
	_, during := l.counts()
	gate.Release()
	if err := wait(t, h); err != nil {
		t.Fatalf("update: %v", err)
	}
	started := during[len(before):]
	if len(started) == 0 {
		t.Fatal("no report of the update before the platform call")
	}
	for i, fm := range started {
		if fm.Has(edgeproto.CloudletInfoFieldState) {
			t.Errorf("report %d of the update before its outcome carries a state (%v): the create's undelivered READY", i, fm)
		}
	}
	if info, _ := l.cache().Get(executor.KeyString(update)); info.GetState() != edgeproto.CloudletState_CLOUDLET_STATE_READY || info.GetRequestId() != 9 {
		t.Errorf("after the update the receiver holds %v at request %d, want READY at 9", info.GetState(), info.GetRequestId())
	}
}
