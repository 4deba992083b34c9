package controller_test

import (
	"encoding/json"
	"errors"
	"fmt"
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

// An object's page, built by the controller's sources: its fields and
// Info with secrets cleared, its links, a cloudlet's location and usage,
// and its history, every state and progress step of its operations in the
// order reported, errors marked.
func TestStatusPageObjectDetailAndHistory(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := testCtx(t)
	const secret = "planted-secret-value-4411"
	if _, err := w.dev.apps.UpdateApp(ctx, &edgeproto.UpdateAppRequest{App: &edgeproto.App{Key: w.app,
		EnvVars: []*edgeproto.EnvVar{{Name: "PW", Secret: true, SecretValue: secret}}}, Fields: []string{edgeproto.AppFieldEnvVars}}); err != nil {
		t.Fatal(err)
	}
	site2 := createSite2(t, w, secret)
	rec := uitest.NewRecorder()
	uitest.Run(t, rec, w.env.Controller.UISources()...)

	site2Key := cloudletKey(site2)
	// Its quotas give a usage row before its Info arrives: wait for both.
	cl := rec.Wait(t, "Cloudlet", site2Key, 10*time.Second, "READY with a usage and its Info", func(r ui.Row, found bool) bool {
		return found && r.State == "READY" && len(r.Usage) > 0 && r.Detail != nil && len(r.Detail.Info) > 0
	})
	if cl.Location == nil || cl.Location.Latitude != 48.85 || cl.Location.Longitude != 2.35 {
		t.Errorf("site2's location %+v, want 48.85, 2.35", cl.Location)
	}
	var vcpus *ui.Usage
	for i := range cl.Usage {
		if cl.Usage[i].Name == "vCPUs" {
			vcpus = &cl.Usage[i]
		}
	}
	if vcpus == nil || vcpus.Quota != 40 {
		t.Errorf("site2's usage %+v: want vCPUs against the quota 40", cl.Usage)
	}
	if cl.Detail == nil || !strings.Contains(string(cl.Detail.Fields), "site2") || len(cl.Detail.Info) == 0 {
		t.Errorf("site2's detail %+v: want its fields and Info", cl.Detail)
	}
	appRow := rec.Wait(t, "App", (&edgeproto.App{Key: w.app}).GetKeyString(), 10*time.Second, "with its secret cleared", func(r ui.Row, found bool) bool {
		return found && r.Detail != nil && strings.Contains(string(r.Detail.Fields), "PW")
	})
	if appRow.Org != "developer" {
		t.Errorf("the App's row belongs to %q, want developer", appRow.Org)
	}

	// A create that fails: its history.
	const inst = "name=i3,organization=developer"
	w.env.Platform.Inject(fake.Fault{Op: fake.OpCreateAppInst, Key: inst, Times: 1, Err: errors.New("planted failure")})
	if _, err := drain(w.dev.appInsts.CreateAppInst(ctx, &edgeproto.CreateAppInstRequest{AppInst: w.appInst("i3"), NoWait: true})); err != nil {
		t.Fatal(err)
	}
	row := rec.Wait(t, "AppInst", inst, 10*time.Second, "CREATE_ERROR with its history", func(r ui.Row, found bool) bool {
		if !found || r.State != "CREATE_ERROR" || r.Detail == nil || len(r.Detail.History) == 0 {
			return false
		}
		var state, failure bool
		for _, s := range r.Detail.History[len(r.Detail.History)-1].Steps {
			state = state || s.State == "CREATE_ERROR"
			failure = failure || strings.Contains(s.Message, "planted failure")
		}
		return state && failure
	})
	ops := row.Detail.History
	steps := ops[len(ops)-1].Steps
	var seq []string
	for i, s := range steps {
		if i > 0 && s.Time.Before(steps[i-1].Time) {
			t.Errorf("step %d (%+v) is older than the one before it", i, s)
		}
		seq = append(seq, s.State+s.Message)
	}
	index := func(pred func(ui.Step) bool) int {
		for i, s := range steps {
			if pred(s) {
				return i
			}
		}
		return -1
	}
	requested := index(func(s ui.Step) bool { return s.State == "CREATE_REQUESTED" })
	progress := index(func(s ui.Step) bool { return strings.HasPrefix(s.Message, "Creating AppInst") })
	failure := index(func(s ui.Step) bool { return s.Error && strings.Contains(s.Message, "planted failure") })
	final := index(func(s ui.Step) bool { return s.State == "CREATE_ERROR" && s.Error })
	if requested < 0 || progress < 0 || failure < 0 || final < 0 || !(requested < progress && progress < failure && failure < final) {
		t.Errorf("the failed create's steps %q: want CREATE_REQUESTED, then the engine's progress, then the error and CREATE_ERROR, both marked", seq)
	}
	want := []ui.Link{{Rel: "cloudlet", Kind: "Cloudlet", Key: cloudletKey(w.cloudlet)},
		{Rel: "cluster", Kind: "ClusterInst", Key: "name=c1,organization=developer"},
		{Rel: "app", Kind: "App", Key: appRow.Key}}
	if fmt.Sprint(row.Links) != fmt.Sprint(want) {
		t.Errorf("the instance's links %+v, want %+v", row.Links, want)
	}
	if row.Name != "i3" || row.Cloudlet != cloudletKey(w.cloudlet) || row.Created.IsZero() {
		t.Errorf("the instance's row: name %q, cloudlet %q, created %v", row.Name, row.Cloudlet, row.Created)
	}

	for _, r := range rec.Rows() {
		data, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(data), secret) {
			t.Errorf("the row of %s %s carries a secret", r.Kind, r.Key)
		}
	}
}

func cloudletKey(k *edgeproto.CloudletKey) string {
	return (&edgeproto.Cloudlet{Key: k}).GetKeyString()
}

// createSite2 creates the operator's cloudlet site2, at 48.85, 2.35, with
// a quota of 40 vCPUs and an access variable holding secret, and waits
// until it is READY.
func createSite2(t *testing.T, w *world, secret string) *edgeproto.CloudletKey {
	t.Helper()
	site2 := &edgeproto.CloudletKey{Organization: "operator", Name: "site2"}
	if ps, err := drain(w.op.cloudlets.CreateCloudlet(testCtx(t), &edgeproto.CreateCloudletRequest{Cloudlet: &edgeproto.Cloudlet{
		Key: site2, PlatformType: "fake", Location: &edgeproto.Location{Latitude: 48.85, Longitude: 2.35},
		ResourceQuotas: []*edgeproto.ResourceQuota{{Name: "vCPUs", Value: 40}},
		AccessVars:     map[string]string{"TOKEN": secret}}})); err != nil || lastState(t, ps) != edgeproto.TrackedState_TRACKED_STATE_READY {
		t.Fatalf("create site2: %v %v", ps, err)
	}
	return site2
}
