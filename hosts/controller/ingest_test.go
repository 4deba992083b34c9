package controller_test

import (
	"errors"
	"testing"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/fieldmap"
	"github.com/edgekit/edgekit/hosts/controller"
	"github.com/edgekit/edgekit/hosts/controller/controllertest"
	"github.com/edgekit/edgekit/internal/store"
)

// noHost is a controller without a resource manager, a READY cloudlet
// (created with crm_override) and a cluster requested on it.
func noHost(t *testing.T, crmOnEdge bool) (*controllertest.Env, *edgeproto.ClusterKey, *edgeproto.CloudletKey) {
	t.Helper()
	env := controllertest.Start(t, controllertest.Options{})
	ctx := testCtx(t)
	admin := clientsOf(env.Conn(env.AdminToken()))
	cl := &edgeproto.CloudletKey{Organization: "op", Name: "edge"}
	if _, err := admin.flavors.CreateFlavor(ctx, &edgeproto.CreateFlavorRequest{Flavor: &edgeproto.Flavor{Key: &edgeproto.FlavorKey{Name: "fake.small"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := drain(admin.cloudlets.CreateCloudlet(ctx, &edgeproto.CreateCloudletRequest{Cloudlet: &edgeproto.Cloudlet{
		Key: cl, PlatformType: "fake", CrmOnEdge: crmOnEdge, CrmOverride: edgeproto.CRMOverride_CRM_OVERRIDE_IGNORE_CRM}})); err != nil {
		t.Fatal(err)
	}
	ck := &edgeproto.ClusterKey{Organization: "dev", Name: "c"}
	ps, err := drain(admin.clusters.CreateClusterInst(ctx, &edgeproto.CreateClusterInstRequest{NoWait: true, ClusterInst: &edgeproto.ClusterInst{
		Key: ck, CloudletKey: cl, FlavorName: "fake.small"}}))
	if err != nil || lastState(t, ps) != edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED {
		t.Fatalf("create cluster: %v %v", ps, err)
	}
	return env, ck, cl
}

func stateReport(key *edgeproto.ClusterKey, s edgeproto.TrackedState) (*edgeproto.ClusterInstInfo, *fieldmap.FieldMap) {
	fm, _ := edgeproto.NewClusterInstInfoFieldMap(edgeproto.ClusterInstInfoFieldKey, edgeproto.ClusterInstInfoFieldState)
	return &edgeproto.ClusterInstInfo{Key: key, State: s}, fm
}

func clusterState(t *testing.T, env *controllertest.Env, key *edgeproto.ClusterKey) edgeproto.TrackedState {
	t.Helper()
	ci, _, err := store.NewKind[*edgeproto.ClusterInst](env.Store).Get(testCtx(t), (&edgeproto.ClusterInst{Key: key}).GetKeyString())
	if err != nil {
		t.Fatal(err)
	}
	return ci.State
}

func TestReportsFollowTheTransitionTable(t *testing.T) {
	t.Parallel()
	env, ck, _ := noHost(t, false)
	ctx := testCtx(t)
	apply := func(s edgeproto.TrackedState) error {
		info, fm := stateReport(ck, s)
		return env.Controller.ApplyInfo(ctx, controller.Reporter{}, info, fm)
	}
	steps := []struct {
		report, want edgeproto.TrackedState
		rejected     bool
	}{
		{edgeproto.TrackedState_TRACKED_STATE_DELETE_DONE, edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED, true},
		{edgeproto.TrackedState_TRACKED_STATE_CREATING, edgeproto.TrackedState_TRACKED_STATE_CREATING, false},
		{edgeproto.TrackedState_TRACKED_STATE_CREATING, edgeproto.TrackedState_TRACKED_STATE_CREATING, false}, // duplicate
		{edgeproto.TrackedState_TRACKED_STATE_READY, edgeproto.TrackedState_TRACKED_STATE_READY, false},
		{edgeproto.TrackedState_TRACKED_STATE_CREATING, edgeproto.TrackedState_TRACKED_STATE_READY, true}, // stale
		{edgeproto.TrackedState_TRACKED_STATE_READY, edgeproto.TrackedState_TRACKED_STATE_READY, false},   // re-sent
		{edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED, edgeproto.TrackedState_TRACKED_STATE_READY, true},
		// A reconciliation found it missing and could not create it again.
		{edgeproto.TrackedState_TRACKED_STATE_CREATE_ERROR, edgeproto.TrackedState_TRACKED_STATE_CREATE_ERROR, false},
		{edgeproto.TrackedState_TRACKED_STATE_READY, edgeproto.TrackedState_TRACKED_STATE_CREATE_ERROR, true},
	}
	for i, s := range steps {
		err := apply(s.report)
		if got := errors.Is(err, edgeproto.ErrInfoStateRejected); got != s.rejected {
			t.Fatalf("step %d: report %v: error %v, want rejected=%v", i, s.report, err, s.rejected)
		}
		if got := clusterState(t, env, ck); got != s.want {
			t.Fatalf("step %d: report %v: object in %v, want %v", i, s.report, got, s.want)
		}
	}
}

func TestReportersMayReportOnlyWhatIsTheirs(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	t.Run("crm of another cloudlet", func(t *testing.T) {
		env, ck, _ := noHost(t, true)
		info, fm := stateReport(ck, edgeproto.TrackedState_TRACKED_STATE_CREATING)
		err := env.Controller.ApplyInfo(ctx, controller.Reporter{Cloudlet: &edgeproto.CloudletKey{Organization: "op", Name: "other"}}, info, fm)
		if !errors.Is(err, controller.ErrReportRefused) {
			t.Fatalf("got %v, want ErrReportRefused", err)
		}
		if got := clusterState(t, env, ck); got != edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED {
			t.Fatalf("refused report changed the object to %v", got)
		}
	})
	t.Run("ccrm on a crm_on_edge cloudlet", func(t *testing.T) {
		env, ck, _ := noHost(t, true)
		info, fm := stateReport(ck, edgeproto.TrackedState_TRACKED_STATE_CREATING)
		err := env.Controller.ApplyInfo(ctx, controller.Reporter{CCRM: true}, info, fm)
		if !errors.Is(err, controller.ErrReportRefused) {
			t.Fatalf("got %v, want ErrReportRefused", err)
		}
	})
	t.Run("the cloudlet's own crm", func(t *testing.T) {
		env, ck, cl := noHost(t, true)
		info, fm := stateReport(ck, edgeproto.TrackedState_TRACKED_STATE_CREATING)
		if err := env.Controller.ApplyInfo(ctx, controller.Reporter{Cloudlet: cl}, info, fm); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("reports without a key or with unknown flags", func(t *testing.T) {
		env, ck, _ := noHost(t, false)
		info, _ := stateReport(ck, edgeproto.TrackedState_TRACKED_STATE_CREATING)
		for _, fm := range []*fieldmap.FieldMap{nil, fieldmap.Of(edgeproto.ClusterInstInfoFieldState), fieldmap.Of("1", "2", "77")} {
			if err := env.Controller.ApplyInfo(ctx, controller.Reporter{}, info, fm); !errors.Is(err, controller.ErrReportRefused) {
				t.Errorf("fields %v: got %v, want ErrReportRefused", fm, err)
			}
		}
	})
	t.Run("a deleted object", func(t *testing.T) {
		env, _, _ := noHost(t, false)
		info, fm := stateReport(&edgeproto.ClusterKey{Organization: "dev", Name: "gone"}, edgeproto.TrackedState_TRACKED_STATE_CREATING)
		if err := env.Controller.ApplyInfo(ctx, controller.Reporter{}, info, fm); !errors.Is(err, controller.ErrStaleReport) {
			t.Fatalf("got %v, want ErrStaleReport", err)
		}
	})
}

func TestFencedReportsNeedTheCurrentClaim(t *testing.T) {
	t.Parallel()
	env, ck, _ := noHost(t, false)
	ctx := testCtx(t)
	cli := env.Store.Client()
	claim := env.Store.Prefix() + "claims/test"
	put, err := cli.Put(ctx, claim, "replica-1")
	if err != nil {
		t.Fatal(err)
	}
	token := put.Header.Revision
	info, fm := stateReport(ck, edgeproto.TrackedState_TRACKED_STATE_CREATING)
	fence := &controller.Fence{Key: claim, Revision: token}
	if err := env.Controller.ApplyInfo(ctx, controller.Reporter{Fence: fence}, info, fm); err != nil {
		t.Fatalf("report under the current claim: %v", err)
	}
	// The claim is lost and taken again by someone else: the old token is stale.
	if _, err := cli.Delete(ctx, claim); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Put(ctx, claim, "replica-2"); err != nil {
		t.Fatal(err)
	}
	info, fm = stateReport(ck, edgeproto.TrackedState_TRACKED_STATE_READY)
	if err := env.Controller.ApplyInfo(ctx, controller.Reporter{Fence: fence}, info, fm); !errors.Is(err, controller.ErrStaleReport) {
		t.Fatalf("report under a lost claim: got %v, want ErrStaleReport", err)
	}
	if got := clusterState(t, env, ck); got != edgeproto.TrackedState_TRACKED_STATE_CREATING {
		t.Fatalf("a stale holder's report was applied: %v", got)
	}
}

// A CCRM reports only under the claim of the object it reports on: a
// report without a fence, or fenced by another key, is refused.
func TestCCRMReportsNeedTheObjectsClaim(t *testing.T) {
	t.Parallel()
	env, ck, _ := noHost(t, false)
	ctx := testCtx(t)
	cli := env.Store.Client()
	key := (&edgeproto.ClusterInst{Key: ck}).GetKeyString()
	other := controller.ClaimKey(env.Store.Prefix(), "ClusterInst", "name=other,organization=dev")
	own := controller.ClaimKey(env.Store.Prefix(), "ClusterInst", key)
	var revs []int64
	for _, k := range []string{other, own} {
		put, err := cli.Put(ctx, k, "replica-1")
		if err != nil {
			t.Fatal(err)
		}
		revs = append(revs, put.Header.Revision)
	}
	info, fm := stateReport(ck, edgeproto.TrackedState_TRACKED_STATE_CREATING)
	for _, rep := range []controller.Reporter{
		{CCRM: true},
		{CCRM: true, Fence: &controller.Fence{Key: other, Revision: revs[0]}},
	} {
		if err := env.Controller.ApplyInfo(ctx, rep, info, fm); !errors.Is(err, controller.ErrReportRefused) {
			t.Errorf("fence %v: got %v, want ErrReportRefused", rep.Fence, err)
		}
	}
	if got := clusterState(t, env, ck); got != edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED {
		t.Fatalf("a refused report changed the object to %v", got)
	}
	if err := env.Controller.ApplyInfo(ctx, controller.Reporter{CCRM: true, Fence: &controller.Fence{Key: own, Revision: revs[1]}}, info, fm); err != nil {
		t.Fatalf("report under the object's claim: %v", err)
	}
}
