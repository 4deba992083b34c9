package crm_test

import (
	"context"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/hosts/controller/controllertest"
	"github.com/edgekit/edgekit/platforms/fake"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// imagePlatform is the fake platform that records the App image each
// instance was last updated with.
type imagePlatform struct {
	*fake.Platform
	mu      sync.Mutex
	updated map[string]string // instance key -> image_path
}

func newImagePlatform() *imagePlatform {
	return &imagePlatform{Platform: fake.New(fake.Options{}), updated: map[string]string{}}
}

func (p *imagePlatform) UpdateAppInst(ctx context.Context, cluster *edgeproto.ClusterInst, app *edgeproto.App, inst *edgeproto.AppInst, res executor.Reservations, pr executor.Progress) (*edgeproto.AppInstRuntime, error) {
	rt, err := p.Platform.UpdateAppInst(ctx, cluster, app, inst, res, pr)
	if err == nil {
		p.mu.Lock()
		p.updated[executor.KeyString(inst)] = app.GetImagePath()
		p.mu.Unlock()
	}
	return rt, err
}

func (p *imagePlatform) image(key string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.updated[key]
}

// refresh calls RefreshAppInsts and returns the progress per instance
// (the messages, in order), the final response and the call's error.
func refresh(ctx context.Context, c *clients, app string, batch uint32) (map[string][]*edgeproto.Progress, *edgeproto.Progress, error) {
	s, err := c.apps.RefreshAppInsts(ctx, &edgeproto.RefreshAppInstsRequest{Key: appKey(app), BatchSize: batch})
	if err != nil {
		return nil, nil, err
	}
	per := map[string][]*edgeproto.Progress{}
	var final *edgeproto.Progress
	for {
		r, err := s.Recv()
		if err == io.EOF {
			return per, final, nil
		}
		if err != nil {
			return per, final, err
		}
		if k := r.GetAppInstKey(); k != nil {
			per[k.GetName()] = append(per[k.GetName()], r.GetProgress())
		} else {
			final = r.GetProgress()
		}
	}
}

// A refresh of an App's instances rolls a change of the App out to its
// instances on both kinds of cloudlet, a CRM's (site1) and a CCRM's
// (offsite), batch by batch, with the progress of each instance; the
// resource managers update each instance with the App as changed. A
// refresh that meets a failure stops at that batch: the instance is
// UPDATE_ERROR, the stream ends ABORTED naming it and the instances left,
// and the later batches are not touched.
func TestRefreshAppInstsOnCRMAndCCRMCloudlets(t *testing.T) {
	t.Parallel()
	ccrmP := newImagePlatform()
	e := newEdge(t, func(o *controllertest.Options) { o.Host, o.Platform = true, ccrmP })
	ctx := testCtx(t)
	crmP := newImagePlatform()
	e.startCRM(t, e.env.Addr, crmP)
	waitState[*edgeproto.Cloudlet](t, e, e.cloudlet, edgeproto.TrackedState_TRACKED_STATE_READY)
	offsite := &edgeproto.CloudletKey{Organization: "operator", Name: "offsite"}
	ps, err := controllertest.Drain(e.op.cloudlets.CreateCloudlet(ctx, &edgeproto.CreateCloudletRequest{Cloudlet: &edgeproto.Cloudlet{
		Key: offsite, PlatformType: fake.Name}}))
	if err != nil || controllertest.Final(ps) != edgeproto.TrackedState_TRACKED_STATE_READY {
		t.Fatalf("create the CCRM cloudlet: %v %v", ps, err)
	}
	onsite, off := e.cluster("onsite"), e.cluster("offsite")
	off.CloudletKey = offsite
	for _, ci := range []*edgeproto.ClusterInst{onsite, off} {
		ps, err := controllertest.Drain(e.dev.clusters.CreateClusterInst(ctx, &edgeproto.CreateClusterInstRequest{ClusterInst: ci}))
		if err != nil || controllertest.Final(ps) != edgeproto.TrackedState_TRACKED_STATE_READY {
			t.Fatalf("create cluster %s: %v %v", ci.Key.Name, ps, err)
		}
	}
	if _, err := e.dev.apps.CreateApp(ctx, &edgeproto.CreateAppRequest{App: e.app("web")}); err != nil {
		t.Fatal(err)
	}
	// a1 and a3 on the CRM's cloudlet, a2 and a4 on the CCRM's: each batch
	// of two (in key order) has one of each.
	where := map[string]*imagePlatform{"a1": crmP, "a2": ccrmP, "a3": crmP, "a4": ccrmP}
	for _, name := range []string{"a1", "a2", "a3", "a4"} {
		cluster := "onsite"
		if where[name] == ccrmP {
			cluster = "offsite"
		}
		ps, err := controllertest.Drain(e.dev.appInsts.CreateAppInst(ctx, &edgeproto.CreateAppInstRequest{AppInst: e.appInst(name, "web", cluster)}))
		if err != nil || controllertest.Final(ps) != edgeproto.TrackedState_TRACKED_STATE_READY {
			t.Fatalf("create instance %s: %v %v", name, ps, err)
		}
	}
	changeImage := func(image string) {
		t.Helper()
		app := e.app("web")
		app.ImagePath = image
		if _, err := e.dev.apps.UpdateApp(ctx, &edgeproto.UpdateAppRequest{App: app, Fields: []string{edgeproto.AppFieldImagePath}}); err != nil {
			t.Fatal(err)
		}
	}
	instKey := func(name string) string { return "name=" + name + ",organization=developer" }

	changeImage("nginx:2")
	per, final, err := refresh(ctx, e.dev, "web", 2)
	if err != nil {
		t.Fatalf("refresh: %v", err)
	}
	if final.GetState() != edgeproto.TrackedState_TRACKED_STATE_READY || !final.GetFinal() || !strings.Contains(final.GetMessage(), "Refreshed 4") {
		t.Errorf("final step = %v, want READY, final, saying 4 instances were refreshed", final)
	}
	for name, p := range where {
		steps := per[name]
		if len(steps) < 2 || steps[0].GetState() != edgeproto.TrackedState_TRACKED_STATE_UPDATE_REQUESTED ||
			steps[len(steps)-1].GetState() != edgeproto.TrackedState_TRACKED_STATE_READY {
			t.Errorf("progress of %s = %v, want UPDATE_REQUESTED ... READY", name, steps)
		}
		if got := p.image(instKey(name)); got != "nginx:2" {
			t.Errorf("instance %s was updated with image %q, want nginx:2", name, got)
		}
		if n := p.Calls(fake.OpUpdateAppInst, instKey(name)); n != 1 {
			t.Errorf("instance %s updated %d times, want 1", name, n)
		}
	}

	// One at a time; a2's update fails: a1 done, a2 failed, a3 and a4 left.
	changeImage("nginx:3")
	ccrmP.Inject(fake.Fault{Op: fake.OpUpdateAppInst, Key: instKey("a2"), Times: 1})
	per, final, err = refresh(ctx, e.dev, "web", 1)
	if status.Code(err) != codes.Aborted || final != nil {
		t.Fatalf("refresh with a failing instance: %v (final %v), want ABORTED and no final step", err, final)
	}
	for _, want := range []string{"a2", "batch 2", "not refreshed", "a3", "a4"} {
		if !strings.Contains(status.Convert(err).Message(), want) {
			t.Errorf("refusal %q does not say %q", status.Convert(err).Message(), want)
		}
	}
	if got := crmP.image(instKey("a1")); got != "nginx:3" {
		t.Errorf("a1 (batch 1) was updated with %q, want nginx:3", got)
	}
	if steps := per["a2"]; len(steps) == 0 || steps[len(steps)-1].GetState() != edgeproto.TrackedState_TRACKED_STATE_UPDATE_ERROR {
		t.Errorf("progress of a2 = %v, want it to end UPDATE_ERROR", steps)
	}
	for _, name := range []string{"a3", "a4"} {
		if len(per[name]) != 0 || where[name].Calls(fake.OpUpdateAppInst, instKey(name)) != 1 || where[name].image(instKey(name)) != "nginx:2" {
			t.Errorf("instance %s of a later batch was touched: progress %v, %d updates, image %q",
				name, per[name], where[name].Calls(fake.OpUpdateAppInst, instKey(name)), where[name].image(instKey(name)))
		}
	}
	if ai := get[*edgeproto.AppInst](t, e, e.appInst("a2", "", "").Key); ai.GetState() != edgeproto.TrackedState_TRACKED_STATE_UPDATE_ERROR {
		t.Errorf("a2 is %v after its failed refresh, want UPDATE_ERROR", ai.GetState())
	}

	// Refreshed again, the failed instance (UPDATE_ERROR) is retried and the
	// rest done.
	per, final, err = refresh(ctx, e.dev, "web", 3)
	if err != nil || final.GetState() != edgeproto.TrackedState_TRACKED_STATE_READY {
		t.Fatalf("second refresh: %v %v", final, err)
	}
	for name, p := range where {
		if got := p.image(instKey(name)); got != "nginx:3" {
			t.Errorf("after the second refresh %s has image %q, want nginx:3", name, got)
		}
	}

	// Another organization may not refresh the App.
	other := e.clientsOf(e.env.OrgToken("intruder"))
	if _, _, err := refresh(ctx, other, "web", 1); status.Code(err) != codes.PermissionDenied {
		t.Errorf("refresh by another organization: %v, want PermissionDenied", err)
	}
}
