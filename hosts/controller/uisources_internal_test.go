package controller

import (
	"testing"

	"github.com/edgekit/edgekit/edgeproto"
)

// The two watches a row is built from deliver an object and its Info
// written in one transaction in either order: when a new request's object
// (UPDATE_REQUESTED, its Info reset in the same transaction) arrives
// before its Info, the row shows the request, not the last change's
// progress still in the Info it knows.
func TestRowOfARequestIgnoresTheLastChangesProgress(t *testing.T) {
	book := newRowBook(rowSpec[*edgeproto.ClusterInst, *edgeproto.ClusterInstInfo]{
		kind:   "ClusterInst",
		owner:  func(c *edgeproto.ClusterInst) string { return c.GetKey().GetOrganization() },
		state:  (*edgeproto.ClusterInst).GetState,
		status: (*edgeproto.ClusterInstInfo).GetStatus,
		where:  func(*edgeproto.ClusterInst) string { return "" },

		request:     (*edgeproto.ClusterInst).GetRequestId,
		infoRequest: (*edgeproto.ClusterInstInfo).GetRequestId,
		infoErrors:  (*edgeproto.ClusterInstInfo).GetErrors,
	})
	key := "name=c1,organization=dev"
	ci := func(s edgeproto.TrackedState) *edgeproto.ClusterInst {
		return &edgeproto.ClusterInst{Key: &edgeproto.ClusterKey{Organization: "dev", Name: "c1"}, State: s}
	}
	created := &edgeproto.ClusterInstInfo{Status: &edgeproto.StatusInfo{TaskName: "Creating ClusterInst",
		Msgs: []string{"Creating ClusterInst", "Reserving port range"}}}
	message := func() string {
		t.Helper()
		row, ok := book.row(key)
		if !ok {
			t.Fatal("no row")
		}
		return row.Message
	}

	// Created: READY at revision 10, its Info of the create at 9.
	book.putInfo(key, created, 9)
	book.putObject(key, ci(edgeproto.TrackedState_TRACKED_STATE_READY), 10)
	if got := message(); got != "ready" {
		t.Errorf("READY: message %q, want %q", got, "ready")
	}
	// An update is requested at revision 11 (the Info reset with it): the
	// object arrives first.
	book.putObject(key, ci(edgeproto.TrackedState_TRACKED_STATE_UPDATE_REQUESTED), 11)
	if got := message(); got != "update requested" {
		t.Errorf("UPDATE_REQUESTED before its Info: message %q, want %q", got, "update requested")
	}
	book.putInfo(key, &edgeproto.ClusterInstInfo{Status: &edgeproto.StatusInfo{}}, 11)
	if got := message(); got != "update requested" {
		t.Errorf("UPDATE_REQUESTED with its reset Info: message %q, want %q", got, "update requested")
	}
	// The resource manager starts: its Info arrives before the object.
	book.putInfo(key, &edgeproto.ClusterInstInfo{Status: &edgeproto.StatusInfo{TaskName: "Updating ClusterInst",
		Msgs: []string{"Updating ClusterInst"}}}, 12)
	if got := message(); got != "Updating ClusterInst" {
		t.Errorf("UPDATE_REQUESTED with the update's Info: message %q, want the update's progress", got)
	}
	book.putObject(key, ci(edgeproto.TrackedState_TRACKED_STATE_UPDATING), 12)
	if got := message(); got != "Updating ClusterInst" {
		t.Errorf("UPDATING: message %q, want the update's progress", got)
	}
	book.deleteObject(key)
	if _, ok := book.row(key); ok {
		t.Error("a deleted object still has a row")
	}
}
