package crm

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
	notifyv1 "github.com/edgekit/edgekit/proto/edgekit/notify/v1"
)

// TestOutboxKeepsPhasesApart reports a cluster's create through the
// outbox while its first report is in flight: the steps reported in
// CREATING are not merged into the READY report, a report in flight when
// the stream breaks goes again as it was and before what followed it, and
// the controller gets CREATING, CREATING with every step, then READY.
func TestOutboxKeepsPhasesApart(t *testing.T) {
	t.Parallel()
	cache := executor.NewCache[*edgeproto.ClusterInstInfo]()
	kind := newInfoKind(cache, edgeproto.ClusterInstInfoFieldState, func(i *edgeproto.ClusterInstInfo) bool { return trackedGone(i.GetState()) })
	o := newOutbox(time.Hour, func(string, string) bool { return true })
	send := sender(o, cache, kind)
	key := &edgeproto.ClusterKey{Organization: "dev", Name: "c1"}
	info := &edgeproto.ClusterInstInfo{Key: key, Status: &edgeproto.StatusInfo{}}
	report := func(mutate func(), flags ...string) {
		t.Helper()
		mutate()
		fm := info.FieldSchema().NewFieldMap()
		fm.Set(edgeproto.ClusterInstInfoFieldKey)
		fm.Set(flags...)
		if err := send.Send(context.Background(), info.Clone(), fm); err != nil {
			t.Fatal(err)
		}
	}
	// got renders a report: its state when it carries one, and its messages.
	got := func(r *notifyv1.Report) string {
		i := r.GetClusterInstInfo()
		s := "-"
		if slices.Contains(r.GetFields(), edgeproto.ClusterInstInfoFieldState) {
			s = strings.TrimPrefix(i.GetState().String(), "TRACKED_STATE_")
		}
		return strings.TrimSpace(s + " " + strings.Join(i.GetStatus().GetMsgs(), ","))
	}
	next := func() *notifyv1.Report {
		t.Helper()
		r, ok := o.next()
		if !ok {
			t.Fatal("no report ready")
		}
		return r
	}

	report(func() {
		info.State = edgeproto.TrackedState_TRACKED_STATE_CREATING
		info.Status.SetTask("Creating ClusterInst")
	},
		edgeproto.ClusterInstInfoFieldState, edgeproto.ClusterInstInfoFieldStatus)
	first := next()
	report(func() { info.Status.SetStep("Reserving subnet") }, edgeproto.ClusterInstInfoFieldStatusStepName,
		edgeproto.ClusterInstInfoFieldStatusMsgCount, edgeproto.ClusterInstInfoFieldStatusMsgs)
	report(func() { info.Status.SetStep("Cluster ready") }, edgeproto.ClusterInstInfoFieldStatusStepName,
		edgeproto.ClusterInstInfoFieldStatusMsgCount, edgeproto.ClusterInstInfoFieldStatusMsgs)
	report(func() { info.State = edgeproto.TrackedState_TRACKED_STATE_READY }, edgeproto.ClusterInstInfoFieldState)
	if _, ok := o.next(); ok {
		t.Fatal("a second report of the object went out while one was in flight")
	}
	o.disconnected() // the stream broke with the first report in flight

	var reports []string
	for range 3 {
		r := next()
		reports = append(reports, got(r))
		o.ack(r.GetSeq(), notifyv1.Verdict_VERDICT_APPLIED)
	}
	want := []string{
		"CREATING Creating ClusterInst",
		"- Creating ClusterInst,Reserving subnet,Cluster ready",
		"READY",
	}
	if !slices.Equal(reports, want) {
		t.Errorf("reports after the reconnect:\n%s\nwant:\n%s", strings.Join(reports, "\n"), strings.Join(want, "\n"))
	}
	if got(first) != want[0] {
		t.Errorf("first report %q, want %q", got(first), want[0])
	}
	if _, ok := o.next(); ok || o.pending() != 0 {
		t.Errorf("the outbox still holds %d entries after every report was acknowledged", o.pending())
	}

	// A report the controller could not judge goes again as it was, before
	// what was reported after it.
	report(func() {
		info.State = edgeproto.TrackedState_TRACKED_STATE_DELETING
		info.Status.SetTask("Deleting ClusterInst")
	},
		edgeproto.ClusterInstInfoFieldState, edgeproto.ClusterInstInfoFieldStatus)
	r := next()
	report(func() { info.State = edgeproto.TrackedState_TRACKED_STATE_DELETE_DONE }, edgeproto.ClusterInstInfoFieldState)
	o.ack(r.GetSeq(), notifyv1.Verdict_VERDICT_FAILED)
	o.requeue(o.entries[kind.name+"/"+executor.KeyString(key)]) // the retry timer, now
	r = next()
	if g := got(r); !strings.HasPrefix(g, "DELETING ") {
		t.Errorf("the failed report went again as %q, want it as it was (DELETING)", g)
	}
	o.ack(r.GetSeq(), notifyv1.Verdict_VERDICT_APPLIED)
	if g := got(next()); g != "DELETE_DONE" {
		t.Errorf("then %q, want DELETE_DONE", g)
	}
}

// A report answering a later request than what the outbox has pending for
// the object starts a new phase even when it sets no state (a cloudlet's
// update begins with its task only): the pending READY of the earlier
// request goes as it was, with that request's request_id, never merged
// into a report carrying the later request_id, where the controller would
// take it for the later request's outcome.
func TestOutboxNeverMergesTwoRequests(t *testing.T) {
	t.Parallel()
	cache := executor.NewCache[*edgeproto.ClusterInstInfo]()
	kind := newInfoKind(cache, edgeproto.ClusterInstInfoFieldState, func(i *edgeproto.ClusterInstInfo) bool { return trackedGone(i.GetState()) })
	o := newOutbox(time.Hour, func(string, string) bool { return true })
	send := sender(o, cache, kind)
	key := &edgeproto.ClusterKey{Organization: "dev", Name: "c1"}
	report := func(info *edgeproto.ClusterInstInfo, flags ...string) {
		t.Helper()
		fm := info.FieldSchema().NewFieldMap()
		fm.Set(edgeproto.ClusterInstInfoFieldKey, edgeproto.ClusterInstInfoFieldRequestId)
		fm.Set(flags...)
		if err := send.Send(context.Background(), info, fm); err != nil {
			t.Fatal(err)
		}
	}
	report(&edgeproto.ClusterInstInfo{Key: key, RequestId: 7, State: edgeproto.TrackedState_TRACKED_STATE_READY},
		edgeproto.ClusterInstInfoFieldState)
	st := &edgeproto.StatusInfo{}
	st.SetTask("Updating ClusterInst")
	report(&edgeproto.ClusterInstInfo{Key: key, RequestId: 9, Status: st}, edgeproto.ClusterInstInfoFieldStatus)

	var got []string
	for range 2 {
		r, ok := o.next()
		if !ok {
			t.Fatalf("no report ready after %v", got)
		}
		i := r.GetClusterInstInfo()
		s := "-"
		if slices.Contains(r.GetFields(), edgeproto.ClusterInstInfoFieldState) {
			s = strings.TrimPrefix(i.GetState().String(), "TRACKED_STATE_")
		}
		got = append(got, fmt.Sprintf("%d %s %s", i.GetRequestId(), s, strings.Join(i.GetStatus().GetMsgs(), ",")))
		o.ack(r.GetSeq(), notifyv1.Verdict_VERDICT_APPLIED)
	}
	want := []string{"7 READY ", "9 - Updating ClusterInst"}
	if !slices.Equal(got, want) {
		t.Errorf("reports %q, want %q", got, want)
	}
}
