package controller_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/hosts/controller/ui"
	"github.com/edgekit/edgekit/hosts/controller/ui/uitest"
	"github.com/edgekit/edgekit/platforms/fake"
)

// The status page's message of an object goes with its state: the
// progress of the running change while it runs, and once the object rests,
// what its state means, never the last step of a change that is over.
func TestStatusPageMessageGoesWithTheState(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := testCtx(t)
	rec := uitest.NewRecorder()
	uitest.Run(t, rec, w.env.Controller.UISources()...)

	inState := func(state, message string) func(ui.Row, bool) bool {
		return func(r ui.Row, found bool) bool {
			return found && r.State == state && (message == "" || r.Message == message)
		}
	}
	const cluster = "name=c1,organization=developer"
	if row := rec.Wait(t, "ClusterInst", cluster, 10*time.Second, "READY", inState("READY", "")); row.Message != "ready" {
		t.Errorf("the READY cluster's message is %q, want %q", row.Message, "ready")
	}
	if row := rec.Wait(t, "Cloudlet", "organization=operator,name=site1", 10*time.Second, "READY", inState("READY", "")); row.Message != "ready" {
		t.Errorf("the READY cloudlet's message is %q, want %q", row.Message, "ready")
	}

	// While a create runs, its progress; once READY, "ready".
	const inst = "name=i1,organization=developer"
	gate := w.env.Platform.Pause(fake.OpCreateAppInst, inst)
	if _, err := drain(w.dev.appInsts.CreateAppInst(ctx, &edgeproto.CreateAppInstRequest{AppInst: w.appInst("i1"), NoWait: true})); err != nil {
		t.Fatal(err)
	}
	select {
	case <-gate.Reached():
	case <-ctx.Done():
		t.Fatal("the platform never started creating the instance")
	}
	rec.Wait(t, "AppInst", inst, 10*time.Second, `CREATING with the create's progress ("Creating AppInst...")`, func(r ui.Row, found bool) bool {
		return found && r.State == "CREATING" && strings.HasPrefix(r.Message, "Creating AppInst")
	})
	gate.Release()
	rec.Wait(t, "AppInst", inst, 10*time.Second, `READY with the message "ready"`, inState("READY", "ready"))

	// A failed create: its state's message, beside the errors.
	w.env.Platform.Inject(fake.Fault{Op: fake.OpCreateAppInst, Key: "name=i2,organization=developer", Times: 1, Err: errors.New("planted failure")})
	if _, err := drain(w.dev.appInsts.CreateAppInst(ctx, &edgeproto.CreateAppInstRequest{AppInst: w.appInst("i2"), NoWait: true})); err != nil {
		t.Fatal(err)
	}
	row := rec.Wait(t, "AppInst", "name=i2,organization=developer", 10*time.Second, `CREATE_ERROR with the message "create failed"`,
		inState("CREATE_ERROR", "create failed"))
	if !strings.Contains(strings.Join(row.Errors, "; "), "planted failure") {
		t.Errorf("the failed instance's errors %q do not say why", row.Errors)
	}
}
