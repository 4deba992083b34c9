package crm_test

import (
	"slices"
	"testing"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/hosts/controller/controllertest"
	"github.com/edgekit/edgekit/platforms/fake"
)

// tpeEntries renders the stored exception of key as "name=STATE" entries;
// nil when it does not exist.
func tpeEntries(t *testing.T, e *edge, key *edgeproto.TrustPolicyExceptionKey) []string {
	t.Helper()
	exc := get[*edgeproto.TrustPolicyException](t, e, &edgeproto.TrustPolicyException{Key: key})
	if !exc.ProtoReflect().IsValid() {
		return nil
	}
	out := []string{}
	for _, in := range exc.GetInstances() {
		out = append(out, in.GetAppInstKey().GetName()+"="+in.GetState().String())
	}
	return out
}

func TestCRMAppliesTrustPolicyExceptions(t *testing.T) {
	t.Parallel()
	e := newEdge(t)
	ctx := testCtx(t)
	p := fake.New(fake.Options{})
	c := e.startCRM(t, e.env.Addr, p)
	waitState[*edgeproto.Cloudlet](t, e, e.cloudlet, edgeproto.TrackedState_TRACKED_STATE_READY)

	ps, err := controllertest.Drain(e.dev.clusters.CreateClusterInst(ctx, &edgeproto.CreateClusterInstRequest{ClusterInst: e.cluster("c1")}))
	if err != nil || controllertest.Final(ps) != edgeproto.TrackedState_TRACKED_STATE_READY {
		t.Fatalf("create cluster: %v %v", ps, err)
	}
	if _, err := e.dev.apps.CreateApp(ctx, &edgeproto.CreateAppRequest{App: e.app("web")}); err != nil {
		t.Fatal(err)
	}
	ps, err = controllertest.Drain(e.dev.appInsts.CreateAppInst(ctx, &edgeproto.CreateAppInstRequest{AppInst: e.appInst("i1", "web", "c1")}))
	if err != nil || controllertest.Final(ps) != edgeproto.TrackedState_TRACKED_STATE_READY {
		t.Fatalf("create app instance: %v %v", ps, err)
	}

	opPools := edgeproto.NewCloudletPoolServiceClient(e.env.Conn(e.env.OrgToken("operator")))
	devTPEs := edgeproto.NewTrustPolicyExceptionServiceClient(e.env.Conn(e.env.OrgToken("developer")))
	adminTPEs := edgeproto.NewTrustPolicyExceptionServiceClient(e.env.Conn(e.env.AdminToken()))
	poolKey := &edgeproto.CloudletPoolKey{Organization: "operator", Name: "p1"}
	setPool := func(cloudlets ...string) {
		t.Helper()
		if _, err := opPools.UpdateCloudletPool(ctx, &edgeproto.UpdateCloudletPoolRequest{CloudletPool: &edgeproto.CloudletPool{Key: poolKey, Cloudlets: cloudlets},
			Fields: []string{edgeproto.CloudletPoolFieldCloudlets}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := opPools.CreateCloudletPool(ctx, &edgeproto.CreateCloudletPoolRequest{CloudletPool: &edgeproto.CloudletPool{
		Key: poolKey, Cloudlets: []string{e.cloudlet.Name}, DeveloperOrganizations: []string{"developer"}}}); err != nil {
		t.Fatal(err)
	}
	excKey := &edgeproto.TrustPolicyExceptionKey{AppKey: appKey("web"), CloudletPoolKey: poolKey, Name: "dns"}
	if _, err := devTPEs.CreateTrustPolicyException(ctx, &edgeproto.CreateTrustPolicyExceptionRequest{TrustPolicyException: &edgeproto.TrustPolicyException{
		Key: excKey, OutboundSecurityRules: []*edgeproto.SecurityRule{{Protocol: "udp", PortRangeMin: 53, PortRangeMax: 53, RemoteCidr: "8.8.8.8/32"}}}}); err != nil {
		t.Fatal(err)
	}
	setState := func(s edgeproto.TrustPolicyExceptionState) {
		t.Helper()
		if _, err := adminTPEs.UpdateTrustPolicyException(ctx, &edgeproto.UpdateTrustPolicyExceptionRequest{
			TrustPolicyException: &edgeproto.TrustPolicyException{Key: excKey, State: s},
			Fields:               []string{edgeproto.TrustPolicyExceptionFieldState}}); err != nil {
			t.Fatal(err)
		}
	}
	excKS, clusterKS := executor.KeyString(excKey), executor.KeyString(e.cluster("c1").Key)
	applied := func(want bool, entries ...string) {
		t.Helper()
		controllertest.WaitFor(t, 20*time.Second, "exception applied="+map[bool]string{true: "yes", false: "no"}[want], func() bool {
			got := tpeEntries(t, e, excKey)
			return p.HasTrustPolicyException(excKS, clusterKS) == want && slices.Equal(got, entries)
		})
	}

	setState(edgeproto.TrustPolicyExceptionState_TRUST_POLICY_EXCEPTION_STATE_ACTIVE)
	applied(true, "i1=TRACKED_STATE_READY")
	setState(edgeproto.TrustPolicyExceptionState_TRUST_POLICY_EXCEPTION_STATE_REJECTED)
	applied(false)

	// Approved while the CRM is down: applied once it is back.
	c.stop()
	setState(edgeproto.TrustPolicyExceptionState_TRUST_POLICY_EXCEPTION_STATE_ACTIVE)
	if got := tpeEntries(t, e, excKey); !slices.Equal(got, []string{"i1=TRACKED_STATE_CREATE_REQUESTED"}) {
		t.Fatalf("entries with the CRM down = %v", got)
	}
	e.startCRM(t, e.env.Addr, p)
	applied(true, "i1=TRACKED_STATE_READY")

	// The pool loses the cloudlet, then gets it back.
	setPool()
	applied(false)
	setPool(e.cloudlet.Name)
	applied(true, "i1=TRACKED_STATE_READY")

	// Deleted: removed from the instance, then from the store.
	if _, err := devTPEs.DeleteTrustPolicyException(ctx, &edgeproto.DeleteTrustPolicyExceptionRequest{Key: excKey}); err != nil {
		t.Fatal(err)
	}
	controllertest.WaitFor(t, 20*time.Second, "exception deleted", func() bool {
		return tpeEntries(t, e, excKey) == nil && !p.HasTrustPolicyException(excKS, clusterKS)
	})
}
