package controller_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/platforms/fake"
	"google.golang.org/grpc/codes"
)

func TestLifecycleThroughTheAPI(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := testCtx(t)

	// Create streams every task and step the engine reports, then READY.
	ps, err := drain(w.dev.appInsts.CreateAppInst(ctx, &edgeproto.CreateAppInstRequest{AppInst: w.appInst("i1")}))
	if err != nil {
		t.Fatal(err)
	}
	if got := lastState(t, ps); got != edgeproto.TrackedState_TRACKED_STATE_READY {
		t.Fatalf("create ended in %v", got)
	}
	var msgs []string
	for _, p := range ps {
		msgs = append(msgs, p.Message)
	}
	if !slices.Contains(msgs, "Create requested") || !slices.Contains(msgs, "Creating AppInst") {
		t.Errorf("progress messages %q lack the request and the engine's task", msgs)
	}
	shown := showAppInsts(t, w.dev, nil)
	if len(shown) != 1 || shown[0].State != edgeproto.TrackedState_TRACKED_STATE_READY || shown[0].CloudletKey.GetName() != "site1" {
		t.Fatalf("show after create: %v", shown)
	}
	if shown[0].RuntimeInfo == nil {
		t.Errorf("runtime info of the engine not mirrored onto the AppInst: %v", shown[0])
	}

	// Update: the fields named change, the engine runs an update.
	upd := w.appInst("i1")
	upd.Annotations = map[string]string{"team": "blue"}
	ps, err = drain(w.dev.appInsts.UpdateAppInst(ctx, &edgeproto.UpdateAppInstRequest{AppInst: upd,
		Fields: []string{edgeproto.AppInstFieldAnnotations}}))
	if err != nil || lastState(t, ps) != edgeproto.TrackedState_TRACKED_STATE_READY {
		t.Fatalf("update: %v %v", ps, err)
	}
	if got := showAppInsts(t, w.dev, nil)[0].Annotations["team"]; got != "blue" {
		t.Errorf("annotation after update = %q", got)
	}
	// An update that changes nothing ends at once.
	ps, err = drain(w.dev.appInsts.UpdateAppInst(ctx, &edgeproto.UpdateAppInstRequest{AppInst: upd,
		Fields: []string{edgeproto.AppInstFieldAnnotations}}))
	if err != nil || len(ps) != 1 || ps[0].Message != "Nothing to change" {
		t.Fatalf("no-op update: %v %v", ps, err)
	}

	// Delete: the object is gone at DELETE_DONE, and so is its Info.
	ps, err = drain(w.dev.appInsts.DeleteAppInst(ctx, &edgeproto.DeleteAppInstRequest{Key: upd.Key}))
	if err != nil || lastState(t, ps) != edgeproto.TrackedState_TRACKED_STATE_DELETE_DONE {
		t.Fatalf("delete: %v %v", ps, err)
	}
	if got := showAppInsts(t, w.dev, nil); len(got) != 0 {
		t.Fatalf("after delete: %v", got)
	}
	if n := w.env.Platform.Calls(fake.OpCreateAppInst, "name=i1,organization=developer"); n != 1 {
		t.Errorf("the platform created the instance %d times, want 1", n)
	}

	// Everything else goes away in order.
	_, err = w.dev.apps.DeleteApp(ctx, &edgeproto.DeleteAppRequest{Key: w.app})
	if err != nil {
		t.Fatal(err)
	}
	ps, err = drain(w.dev.clusters.DeleteClusterInst(ctx, &edgeproto.DeleteClusterInstRequest{Key: w.cluster}))
	if err != nil || lastState(t, ps) != edgeproto.TrackedState_TRACKED_STATE_DELETE_DONE {
		t.Fatalf("delete cluster: %v %v", ps, err)
	}
	ps, err = drain(w.op.cloudlets.DeleteCloudlet(ctx, &edgeproto.DeleteCloudletRequest{Key: w.cloudlet}))
	if err != nil || lastState(t, ps) != edgeproto.TrackedState_TRACKED_STATE_DELETE_DONE {
		t.Fatalf("delete cloudlet: %v %v", ps, err)
	}
	if rej := w.env.Host.Rejected(); len(rej) > 0 {
		t.Errorf("the controller rejected reports of a plain lifecycle: %q", rej)
	}
}

func TestNoWaitReturnsAfterTheRequestIsStored(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := testCtx(t)
	ps, err := drain(w.dev.appInsts.CreateAppInst(ctx, &edgeproto.CreateAppInstRequest{AppInst: w.appInst("i1"), NoWait: true}))
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 1 || !ps[0].Final || ps[0].State != edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED {
		t.Fatalf("no-wait create answered %v", ps)
	}
	waitState(t, w, "i1", edgeproto.TrackedState_TRACKED_STATE_READY)
}

func TestFailedCreateEndsWithAbortedAndTheErrors(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := testCtx(t)
	w.env.Platform.Inject(fake.Fault{Op: fake.OpCreateAppInst, Times: 1, Err: errors.New("disk on fire")})
	ps, err := drain(w.dev.appInsts.CreateAppInst(ctx, &edgeproto.CreateAppInstRequest{AppInst: w.appInst("bad")}))
	wantCode(t, err, codes.Aborted, "failed create")
	if !strings.Contains(err.Error(), "disk on fire") {
		t.Errorf("error %q does not name the platform's error", err)
	}
	if len(ps) == 0 || ps[len(ps)-1].State != edgeproto.TrackedState_TRACKED_STATE_CREATE_ERROR || len(ps[len(ps)-1].Errors) == 0 {
		t.Fatalf("last progress of a failed create: %v", ps)
	}
	// The object stays, in CREATE_ERROR, and can be deleted.
	got := showAppInsts(t, w.dev, &edgeproto.AppInst{Key: &edgeproto.AppInstKey{Name: "bad"}})
	if len(got) != 1 || got[0].State != edgeproto.TrackedState_TRACKED_STATE_CREATE_ERROR {
		t.Fatalf("show: %v", got)
	}
	ps, err = drain(w.dev.appInsts.DeleteAppInst(ctx, &edgeproto.DeleteAppInstRequest{Key: got[0].Key}))
	if err != nil || lastState(t, ps) != edgeproto.TrackedState_TRACKED_STATE_DELETE_DONE {
		t.Fatalf("delete after failed create: %v %v", ps, err)
	}
}

func showAppInsts(t *testing.T, c *clients, filter *edgeproto.AppInst) []*edgeproto.AppInst {
	t.Helper()
	s, err := c.appInsts.ShowAppInsts(testCtx(t), &edgeproto.ShowAppInstsRequest{Filter: filter})
	if err != nil {
		t.Fatal(err)
	}
	var out []*edgeproto.AppInst
	for {
		r, err := s.Recv()
		if err != nil {
			break
		}
		out = append(out, r.AppInst)
	}
	return out
}

func waitState(t *testing.T, w *world, name string, want edgeproto.TrackedState) {
	t.Helper()
	var last []*edgeproto.AppInst
	deadline := time.Now().Add(30 * time.Second)
	for {
		last = showAppInsts(t, w.dev, &edgeproto.AppInst{Key: &edgeproto.AppInstKey{Name: name}})
		if len(last) == 1 && last[0].State == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("AppInst %s not in %v after 30s: %v; reports the controller refused: %q", name, want, last, w.env.Host.Rejected())
		}
		time.Sleep(5 * time.Millisecond)
	}
}
