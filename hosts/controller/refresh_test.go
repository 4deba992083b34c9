package controller_test

import (
	"io"
	"strings"
	"testing"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/platforms/fake"
	"google.golang.org/grpc/codes"
)

// A refresh skips the instances that are not READY (a failed create here),
// saying so in their progress, refreshes the others and counts both; an
// App that does not exist is NotFound, a request without a key
// InvalidArgument.
func TestRefreshAppInstsSkipsInstancesNotReady(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := testCtx(t)
	w.env.Platform.Inject(fake.Fault{Op: fake.OpCreateAppInst, Key: "name=broken,organization=developer", Times: 1})
	for _, name := range []string{"broken", "ok"} {
		if _, err := drain(w.dev.appInsts.CreateAppInst(ctx, &edgeproto.CreateAppInstRequest{AppInst: w.appInst(name)})); err != nil && name == "ok" {
			t.Fatalf("create %s: %v", name, err)
		}
	}
	s, err := w.dev.apps.RefreshAppInsts(ctx, &edgeproto.RefreshAppInstsRequest{Key: w.app})
	if err != nil {
		t.Fatal(err)
	}
	per := map[string][]string{}
	var final *edgeproto.Progress
	for {
		r, err := s.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("refresh: %v", err)
		}
		if k := r.GetAppInstKey(); k != nil {
			per[k.GetName()] = append(per[k.GetName()], r.GetProgress().GetState().String()+" "+r.GetProgress().GetMessage())
		} else {
			final = r.GetProgress()
		}
	}
	if got := per["broken"]; len(got) != 1 || !strings.Contains(got[0], "Skipped: it is CREATE_ERROR") {
		t.Errorf("progress of the failed instance = %q, want one step saying it was skipped", got)
	}
	if got := per["ok"]; len(got) < 2 || !strings.HasPrefix(got[len(got)-1], "TRACKED_STATE_READY") {
		t.Errorf("progress of the READY instance = %q, want it to end READY", got)
	}
	if !strings.Contains(final.GetMessage(), "Refreshed 1 instances") || !strings.Contains(final.GetMessage(), "1 skipped") || !final.GetFinal() {
		t.Errorf("final step = %v", final)
	}
	if n := w.env.Platform.Calls(fake.OpUpdateAppInst, "name=broken,organization=developer"); n != 0 {
		t.Errorf("the skipped instance was updated %d times", n)
	}

	missing := &edgeproto.AppKey{Organization: "developer", Name: "nope", Version: "1"}
	_, err = recvAll(w.dev.apps.RefreshAppInsts(ctx, &edgeproto.RefreshAppInstsRequest{Key: missing}))
	wantCode(t, err, codes.NotFound, "refresh of a missing App")
	_, err = recvAll(w.dev.apps.RefreshAppInsts(ctx, &edgeproto.RefreshAppInstsRequest{}))
	wantCode(t, err, codes.InvalidArgument, "refresh without a key")
}
