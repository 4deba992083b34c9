package crm_test

import (
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/hosts/controller/controllertest"
	"github.com/edgekit/edgekit/hosts/controller/notify"
	"github.com/edgekit/edgekit/internal/store"
	"github.com/edgekit/edgekit/platforms/fake"
	notifyv1 "github.com/edgekit/edgekit/proto/edgekit/notify/v1"
	"google.golang.org/protobuf/proto"
)

// fanoutRegion is a controller serving notify and three edge cloudlets:
// two of the organization "operator", one of "other", each with a raw
// notify stream past its initial sync.
type fanoutRegion struct {
	env     *controllertest.Env
	sites   []*edgeproto.CloudletKey
	streams []rawStream
}

func startFanoutRegion(t *testing.T, cfg notify.Config) *fanoutRegion {
	t.Helper()
	cfg.KeepaliveInterval = time.Hour
	env := controllertest.Start(t, controllertest.Options{Notify: true, Logger: testLogger(), NotifyConfig: cfg})
	r := &fanoutRegion{env: env, sites: []*edgeproto.CloudletKey{
		{Organization: "operator", Name: "site1"}, {Organization: "operator", Name: "site2"}, {Organization: "other", Name: "site3"}}}
	e := &edge{env: env}
	ctx := testCtx(t)
	for _, cl := range r.sites {
		key := env.CreateEdgeCloudlet(ctx, &edgeproto.Cloudlet{Key: cl, PlatformType: fake.Name})
		st := e.rawConnect(t, cl, key)
		readUntil(t, st, isSyncEnd)
		r.streams = append(r.streams, st)
	}
	return r
}

// barrier creates a flavor, which every CRM receives, and returns what
// each stream was sent up to it (streams are in revision order).
func (r *fanoutRegion) barrier(t *testing.T, name string) []map[string]proto.Message {
	t.Helper()
	flavors := store.NewKind[*edgeproto.Flavor](r.env.Store)
	if _, err := flavors.Put(testCtx(t), &edgeproto.Flavor{Key: &edgeproto.FlavorKey{Name: name}, Vcpus: 1, RamMb: 1, DiskGb: 1}); err != nil {
		t.Fatal(err)
	}
	var out []map[string]proto.Message
	for _, st := range r.streams {
		out = append(out, readUntil(t, st, func(m *notifyv1.ConnectResponse) bool {
			return m.GetUpdate().GetFlavor().GetKey().GetName() == name
		}))
	}
	return out
}

// ids lists what a stream was sent, but the barrier flavors.
func ids(got map[string]proto.Message) []string {
	var out []string
	for _, id := range keys(got) {
		if _, isFlavor := got[id].(*edgeproto.Flavor); !isFlavor {
			verb := "put "
			if got[id] == nil {
				verb = "del "
			}
			out = append(out, verb+id)
		}
	}
	return out
}

// The controller watches the region once for every connected CRM, and
// each change reaches the CRMs it concerns only: an instance the CRM of
// its cloudlet (and, when it moves, a delete to the CRM of the cloudlet
// it left), a trust policy the CRMs of its organization's cloudlets.
func TestOneWatchServesEveryCRM(t *testing.T) {
	t.Parallel()
	r := startFanoutRegion(t, notify.Config{})
	if got := r.env.Notify.Watches(); got != 1 {
		t.Fatalf("%d watches of the region for 3 CRMs, want 1", got)
	}
	ctx := testCtx(t)
	insts := store.NewKind[*edgeproto.AppInst](r.env.Store)
	ai := &edgeproto.AppInst{Key: &edgeproto.AppInstKey{Organization: "developer", Name: "i1"}, AppKey: appKey("web"),
		CloudletKey: r.sites[0], State: edgeproto.TrackedState_TRACKED_STATE_READY}
	if _, err := insts.Put(ctx, ai); err != nil {
		t.Fatal(err)
	}
	policies := store.NewKind[*edgeproto.TrustPolicy](r.env.Store)
	if _, err := policies.Put(ctx, &edgeproto.TrustPolicy{Key: &edgeproto.TrustPolicyKey{Organization: "operator", Name: "p1"}}); err != nil {
		t.Fatal(err)
	}
	got := r.barrier(t, "b1")
	want := [][]string{
		{"put AppInst/name=i1,organization=developer", "put TrustPolicy/organization=operator,name=p1"},
		{"put TrustPolicy/organization=operator,name=p1"},
		nil,
	}
	for i := range got {
		if !slices.Equal(ids(got[i]), want[i]) {
			t.Errorf("%s was sent %v, want %v", r.sites[i].GetName(), ids(got[i]), want[i])
		}
	}

	// The instance moves to site2: site1 is sent its delete, site2 the
	// instance, site3 nothing; then it is deleted.
	ai.CloudletKey = r.sites[1]
	if _, err := insts.Put(ctx, ai); err != nil {
		t.Fatal(err)
	}
	got = r.barrier(t, "b2")
	want = [][]string{{"del AppInst/name=i1,organization=developer"}, {"put AppInst/name=i1,organization=developer"}, nil}
	for i := range got {
		if !slices.Equal(ids(got[i]), want[i]) {
			t.Errorf("after the move %s was sent %v, want %v", r.sites[i].GetName(), ids(got[i]), want[i])
		}
	}
	if _, err := r.env.Store.Client().Delete(ctx, insts.Path(ai.GetKeyString())); err != nil {
		t.Fatal(err)
	}
	got = r.barrier(t, "b3")
	want = [][]string{nil, {"del AppInst/name=i1,organization=developer"}, nil}
	for i := range got {
		if !slices.Equal(ids(got[i]), want[i]) {
			t.Errorf("after the delete %s was sent %v, want %v", r.sites[i].GetName(), ids(got[i]), want[i])
		}
	}
	for _, st := range r.streams {
		_ = st.CloseSend()
	}
	controllertest.WaitFor(t, 20*time.Second, "the watch to stop with the last CRM", func() bool { return r.env.Notify.Watches() == 0 })
}

// With Config.WatchPerSession (the design before the shared watch, kept
// for benchmarks) every CRM has a watch of its own, and gets the same.
func TestWatchPerSessionRunsAWatchPerCRM(t *testing.T) {
	t.Parallel()
	r := startFanoutRegion(t, notify.Config{WatchPerSession: true})
	if got := r.env.Notify.Watches(); got != 3 {
		t.Fatalf("%d watches of the region for 3 CRMs, want 3", got)
	}
	ai := &edgeproto.AppInst{Key: &edgeproto.AppInstKey{Organization: "developer", Name: "i1"}, AppKey: appKey("web"),
		CloudletKey: r.sites[2], State: edgeproto.TrackedState_TRACKED_STATE_READY}
	if _, err := store.NewKind[*edgeproto.AppInst](r.env.Store).Put(context.Background(), ai); err != nil {
		t.Fatal(err)
	}
	got := r.barrier(t, "b1")
	want := [][]string{nil, nil, {"put AppInst/name=i1,organization=developer"}}
	for i := range got {
		if !slices.Equal(ids(got[i]), want[i]) {
			t.Errorf("%s was sent %v, want %v", r.sites[i].GetName(), ids(got[i]), want[i])
		}
	}
}

// A CRM's initial sync reads only the objects on its cloudlet: an object
// of another cloudlet that cannot be decoded (here a value that is not an
// AppInst at all) does not keep every CRM of the region from
// synchronising.
func TestASyncReadsOnlyWhatIsOnItsCloudlet(t *testing.T) {
	t.Parallel()
	env := controllertest.Start(t, controllertest.Options{Notify: true, Logger: testLogger()})
	e := &edge{env: env, cloudlet: &edgeproto.CloudletKey{Organization: "operator", Name: "site1"}}
	ctx := testCtx(t)
	e.key = env.CreateEdgeCloudlet(ctx, &edgeproto.Cloudlet{Key: e.cloudlet, PlatformType: fake.Name})
	kind := store.NewKind[*edgeproto.AppInst](env.Store)
	mine := e.appInst("mine", "web", "c1")
	mine.CloudletKey, mine.State = e.cloudlet, edgeproto.TrackedState_TRACKED_STATE_READY
	if _, err := kind.Put(ctx, mine); err != nil {
		t.Fatal(err)
	}
	broken := e.appInst("broken", "web", "c2").GetKeyString()
	if _, err := env.Store.Client().Put(ctx, kind.Path(broken), "not an AppInst"); err != nil {
		t.Fatal(err)
	}
	st := e.rawConnect(t, e.cloudlet, e.key)
	got := readUntil(t, st, isSyncEnd)
	if got["AppInst/"+mine.GetKeyString()] == nil {
		t.Fatalf("the sync lacks the instance on the cloudlet; got %v", slices.Collect(maps.Keys(got)))
	}
	if _, ok := got["AppInst/"+broken]; ok {
		t.Fatalf("the sync holds the undecodable instance of no cloudlet")
	}
}

// A trust policy exception reaches the CRMs of the cloudlets of its
// entries only (each with its own entries): a CRM of a cloudlet it has no
// entry on receives nothing of it, and a CRM whose last entry went is sent
// its delete.
func TestExceptionReachesOnlyTheCRMsOfItsCloudlets(t *testing.T) {
	t.Parallel()
	r := startFanoutRegion(t, notify.Config{})
	ctx := testCtx(t)
	tpes := store.NewKind[*edgeproto.TrustPolicyException](r.env.Store)
	key := &edgeproto.TrustPolicyExceptionKey{AppKey: appKey("web"),
		CloudletPoolKey: &edgeproto.CloudletPoolKey{Organization: "operator", Name: "p1"}, Name: "dns"}
	id := "TrustPolicyException/" + (&edgeproto.TrustPolicyException{Key: key}).GetKeyString()
	put := func(cl *edgeproto.CloudletKey) {
		t.Helper()
		if _, err := tpes.Put(ctx, &edgeproto.TrustPolicyException{Key: key,
			State: edgeproto.TrustPolicyExceptionState_TRUST_POLICY_EXCEPTION_STATE_ACTIVE,
			Instances: []*edgeproto.TrustPolicyExceptionInstance{{AppInstKey: &edgeproto.AppInstKey{Organization: "developer", Name: "i1"},
				CloudletKey: cl, State: edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED}}}); err != nil {
			t.Fatal(err)
		}
	}
	check := func(what string, got []map[string]proto.Message, want ...[]string) {
		t.Helper()
		for i := range got {
			if !slices.Equal(ids(got[i]), want[i]) {
				t.Errorf("%s: %s was sent %v, want %v", what, r.sites[i].GetName(), ids(got[i]), want[i])
			}
		}
	}
	put(r.sites[0])
	check("an entry on site1", r.barrier(t, "b1"), []string{"put " + id}, nil, nil)
	put(r.sites[1])
	check("the entry moved to site2", r.barrier(t, "b2"), []string{"del " + id}, []string{"put " + id}, nil)
	if _, err := r.env.Store.Client().Delete(ctx, tpes.Path((&edgeproto.TrustPolicyException{Key: key}).GetKeyString())); err != nil {
		t.Fatal(err)
	}
	check("the exception deleted", r.barrier(t, "b3"), nil, []string{"del " + id}, nil)
}
