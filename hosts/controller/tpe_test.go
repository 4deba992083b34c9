package controller_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/hosts/controller"
	"github.com/edgekit/edgekit/hosts/controller/controllertest"
	"github.com/edgekit/edgekit/internal/store"
	"github.com/edgekit/edgekit/platforms/local"
	"google.golang.org/grpc/codes"
)

// tpeWorld is a controller without a resource manager: an operator "op"
// with READY cloudlets edge1 and edge2 (created with crm_override), a
// developer "dev" with a READY cluster on each, an App and a READY
// instance of it in each cluster.
type tpeWorld struct {
	env            *controllertest.Env
	admin, op, dev *clients
	edge1, edge2   *edgeproto.CloudletKey
	app            *edgeproto.AppKey
}

func newTPEWorld(t *testing.T, policy *edgeproto.TrustPolicy, app *edgeproto.App) *tpeWorld {
	t.Helper()
	env := controllertest.Start(t, controllertest.Options{})
	ctx := testCtx(t)
	w := &tpeWorld{env: env, admin: clientsOf(env.Conn(env.AdminToken())), op: clientsOf(env.Conn(env.OrgToken("op"))),
		dev:   clientsOf(env.Conn(env.OrgToken("dev"))),
		edge1: &edgeproto.CloudletKey{Organization: "op", Name: "edge1"}, edge2: &edgeproto.CloudletKey{Organization: "op", Name: "edge2"},
		app: &edgeproto.AppKey{Organization: "dev", Name: "web", Version: "1"}}
	if _, err := w.admin.flavors.CreateFlavor(ctx, &edgeproto.CreateFlavorRequest{Flavor: &edgeproto.Flavor{Key: &edgeproto.FlavorKey{Name: "fake.small"}}}); err != nil {
		t.Fatal(err)
	}
	policyName := ""
	if policy != nil {
		if _, err := w.op.policies.CreateTrustPolicy(ctx, &edgeproto.CreateTrustPolicyRequest{TrustPolicy: policy}); err != nil {
			t.Fatal(err)
		}
		policyName = policy.Key.Name
	}
	for _, cl := range []*edgeproto.CloudletKey{w.edge1, w.edge2} {
		if _, err := drain(w.op.cloudlets.CreateCloudlet(ctx, &edgeproto.CreateCloudletRequest{Cloudlet: &edgeproto.Cloudlet{
			Key: cl, PlatformType: "fake", TrustPolicy: policyName, CrmOverride: edgeproto.CRMOverride_CRM_OVERRIDE_IGNORE_CRM}})); err != nil {
			t.Fatal(err)
		}
		if _, err := drain(w.dev.clusters.CreateClusterInst(ctx, &edgeproto.CreateClusterInstRequest{ClusterInst: &edgeproto.ClusterInst{
			Key: &edgeproto.ClusterKey{Organization: "dev", Name: "c-" + cl.Name}, CloudletKey: cl, FlavorName: "fake.small",
			CrmOverride: edgeproto.CRMOverride_CRM_OVERRIDE_IGNORE_CRM}})); err != nil {
			t.Fatal(err)
		}
	}
	if app == nil {
		app = &edgeproto.App{}
	}
	app.Key, app.Deployment = w.app, "docker"
	if _, err := w.dev.apps.CreateApp(ctx, &edgeproto.CreateAppRequest{App: app}); err != nil {
		t.Fatal(err)
	}
	return w
}

// createInst creates a READY instance of the App on the cluster of cloudlet
// cl, without a resource manager.
func (w *tpeWorld) createInst(t *testing.T, name string, cl *edgeproto.CloudletKey) error {
	t.Helper()
	ps, err := drain(w.dev.appInsts.CreateAppInst(testCtx(t), &edgeproto.CreateAppInstRequest{AppInst: &edgeproto.AppInst{
		Key: &edgeproto.AppInstKey{Organization: "dev", Name: name}, AppKey: w.app,
		ClusterKey:  &edgeproto.ClusterKey{Organization: "dev", Name: "c-" + cl.Name},
		CrmOverride: edgeproto.CRMOverride_CRM_OVERRIDE_IGNORE_CRM}}))
	if err == nil && lastState(t, ps) != edgeproto.TrackedState_TRACKED_STATE_READY {
		t.Fatalf("create instance %s: %v", name, ps)
	}
	return err
}

func (w *tpeWorld) pool(cloudlets ...string) *edgeproto.CloudletPool {
	return &edgeproto.CloudletPool{Key: &edgeproto.CloudletPoolKey{Organization: "op", Name: "p1"}, Cloudlets: cloudlets,
		DeveloperOrganizations: []string{"dev"}}
}

func (w *tpeWorld) excKey() *edgeproto.TrustPolicyExceptionKey {
	return &edgeproto.TrustPolicyExceptionKey{AppKey: w.app, CloudletPoolKey: &edgeproto.CloudletPoolKey{Organization: "op", Name: "p1"}, Name: "dns"}
}

func (w *tpeWorld) setPool(t *testing.T, cloudlets ...string) {
	t.Helper()
	if _, err := w.op.pools.UpdateCloudletPool(testCtx(t), &edgeproto.UpdateCloudletPoolRequest{CloudletPool: w.pool(cloudlets...),
		Fields: []string{edgeproto.CloudletPoolFieldCloudlets}}); err != nil {
		t.Fatal(err)
	}
}

func (w *tpeWorld) setState(t *testing.T, s edgeproto.TrustPolicyExceptionState) {
	t.Helper()
	if _, err := w.admin.tpes.UpdateTrustPolicyException(testCtx(t), &edgeproto.UpdateTrustPolicyExceptionRequest{
		TrustPolicyException: &edgeproto.TrustPolicyException{Key: w.excKey(), State: s},
		Fields:               []string{edgeproto.TrustPolicyExceptionFieldState}}); err != nil {
		t.Fatal(err)
	}
}

// exc reads the exception from the store; nil when it does not exist.
func (w *tpeWorld) exc(t *testing.T) *edgeproto.TrustPolicyException {
	t.Helper()
	e, _, err := store.NewKind[*edgeproto.TrustPolicyException](w.env.Store).Get(testCtx(t),
		(&edgeproto.TrustPolicyException{Key: w.excKey()}).GetKeyString())
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// entries renders the exception's instances as "name=STATE" in order.
func entries(e *edgeproto.TrustPolicyException) []string {
	var out []string
	for _, in := range e.GetInstances() {
		out = append(out, in.GetAppInstKey().GetName()+"="+strings.TrimPrefix(in.GetState().String(), "TRACKED_STATE_"))
	}
	return out
}

func (w *tpeWorld) wantEntries(t *testing.T, want ...string) {
	t.Helper()
	if got := entries(w.exc(t)); !slices.Equal(got, want) {
		t.Fatalf("instances = %v, want %v", got, want)
	}
}

// report sends, as the CRM of cloudlet cl, the state of the entry of
// instance name.
func (w *tpeWorld) report(t *testing.T, cl *edgeproto.CloudletKey, name string, s edgeproto.TrackedState, errs ...string) error {
	t.Helper()
	fm, err := edgeproto.NewTrustPolicyExceptionFieldMap(edgeproto.TrustPolicyExceptionFieldKey, edgeproto.TrustPolicyExceptionFieldInstances)
	if err != nil {
		t.Fatal(err)
	}
	info := &edgeproto.TrustPolicyException{Key: w.excKey(), Instances: []*edgeproto.TrustPolicyExceptionInstance{{
		AppInstKey: &edgeproto.AppInstKey{Organization: "dev", Name: name}, CloudletKey: cl, State: s, Errors: errs}}}
	return w.env.Controller.ApplyInfo(testCtx(t), controller.Reporter{Cloudlet: cl}, info, fm)
}

func TestCloudletPoolIntegrityAndAccess(t *testing.T) {
	t.Parallel()
	w := newTPEWorld(t, nil, nil)
	ctx := testCtx(t)
	other := clientsOf(w.env.Conn(w.env.OrgToken("other")))

	_, err := w.op.pools.CreateCloudletPool(ctx, &edgeproto.CreateCloudletPoolRequest{CloudletPool: w.pool("edge1", "nowhere")})
	wantCode(t, err, codes.FailedPrecondition, "pool of a missing cloudlet")
	_, err = w.op.pools.CreateCloudletPool(ctx, &edgeproto.CreateCloudletPoolRequest{CloudletPool: w.pool("edge1", "edge1")})
	wantCode(t, err, codes.InvalidArgument, "pool naming a cloudlet twice")
	_, err = w.dev.pools.CreateCloudletPool(ctx, &edgeproto.CreateCloudletPoolRequest{CloudletPool: w.pool("edge2")})
	wantCode(t, err, codes.PermissionDenied, "developer creating an operator's pool")
	edge3 := &edgeproto.CloudletKey{Organization: "op", Name: "edge3"}
	if _, err := drain(w.op.cloudlets.CreateCloudlet(ctx, &edgeproto.CreateCloudletRequest{Cloudlet: &edgeproto.Cloudlet{
		Key: edge3, PlatformType: "fake", CrmOverride: edgeproto.CRMOverride_CRM_OVERRIDE_IGNORE_CRM}})); err != nil {
		t.Fatal(err)
	}
	if _, err := w.op.pools.CreateCloudletPool(ctx, &edgeproto.CreateCloudletPoolRequest{CloudletPool: w.pool("edge2", "edge3")}); err != nil {
		t.Fatal(err)
	}

	// The operator and the developers it is offered to see it; others do not.
	for who, c := range map[string]*clients{"op": w.op, "dev": w.dev, "other": other} {
		got, err := recvAll(c.pools.ShowCloudletPools(ctx, &edgeproto.ShowCloudletPoolsRequest{}))
		if err != nil {
			t.Fatal(err)
		}
		if want := map[string]int{"op": 1, "dev": 1, "other": 0}[who]; len(got) != want {
			t.Fatalf("%s sees %d pools, want %d", who, len(got), want)
		}
	}
	_, err = w.dev.pools.UpdateCloudletPool(ctx, &edgeproto.UpdateCloudletPoolRequest{CloudletPool: w.pool("edge1", "edge2"),
		Fields: []string{edgeproto.CloudletPoolFieldCloudlets}})
	wantCode(t, err, codes.PermissionDenied, "developer changing the pool")
	_, err = w.op.pools.UpdateCloudletPool(ctx, &edgeproto.UpdateCloudletPoolRequest{CloudletPool: w.pool("edge2", "gone"),
		Fields: []string{edgeproto.CloudletPoolFieldCloudlets}})
	wantCode(t, err, codes.FailedPrecondition, "adding a missing cloudlet")

	// A member cloudlet cannot be deleted.
	_, err = drain(w.op.cloudlets.DeleteCloudlet(ctx, &edgeproto.DeleteCloudletRequest{Key: edge3}))
	wantCode(t, err, codes.FailedPrecondition, "deleting a cloudlet of a pool")
	if !strings.Contains(err.Error(), "CloudletPool") {
		t.Fatalf("refused delete %v does not name the pool", err)
	}

	// An exception names an existing pool offered to the App's organization.
	excOn := func(pool string) *edgeproto.CreateTrustPolicyExceptionRequest {
		k := w.excKey()
		k.CloudletPoolKey.Name = pool
		return &edgeproto.CreateTrustPolicyExceptionRequest{TrustPolicyException: &edgeproto.TrustPolicyException{Key: k}}
	}
	_, err = w.dev.tpes.CreateTrustPolicyException(ctx, excOn("nopool"))
	wantCode(t, err, codes.FailedPrecondition, "exception on a missing pool")
	if _, err := w.op.pools.CreateCloudletPool(ctx, &edgeproto.CreateCloudletPoolRequest{CloudletPool: &edgeproto.CloudletPool{
		Key: &edgeproto.CloudletPoolKey{Organization: "op", Name: "private"}}}); err != nil {
		t.Fatal(err)
	}
	_, err = w.dev.tpes.CreateTrustPolicyException(ctx, excOn("private"))
	wantCode(t, err, codes.FailedPrecondition, "exception on a pool not offered to the developer")
	if _, err := w.dev.tpes.CreateTrustPolicyException(ctx, excOn("p1")); err != nil {
		t.Fatal(err)
	}
	_, err = w.op.pools.DeleteCloudletPool(ctx, &edgeproto.DeleteCloudletPoolRequest{Key: w.excKey().CloudletPoolKey})
	wantCode(t, err, codes.FailedPrecondition, "deleting a pool an exception names")
	_, err = w.dev.apps.DeleteApp(ctx, &edgeproto.DeleteAppRequest{Key: w.app})
	wantCode(t, err, codes.FailedPrecondition, "deleting the App of an exception")

	if _, err := w.dev.tpes.DeleteTrustPolicyException(ctx, &edgeproto.DeleteTrustPolicyExceptionRequest{Key: w.excKey()}); err != nil {
		t.Fatal(err)
	}
	if w.exc(t) != nil {
		t.Fatal("an exception applied nowhere is still stored after its delete")
	}
	if _, err := w.op.pools.DeleteCloudletPool(ctx, &edgeproto.DeleteCloudletPoolRequest{Key: w.excKey().CloudletPoolKey}); err != nil {
		t.Fatal(err)
	}
}

func TestTrustPolicyExceptionFollowsApprovalPoolAndInstances(t *testing.T) {
	t.Parallel()
	w := newTPEWorld(t, nil, nil)
	ctx := testCtx(t)
	const (
		creq  = edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED
		ready = edgeproto.TrackedState_TRACKED_STATE_READY
		ddone = edgeproto.TrackedState_TRACKED_STATE_DELETE_DONE
	)
	for name, cl := range map[string]*edgeproto.CloudletKey{"i1": w.edge1, "i2": w.edge2} {
		if err := w.createInst(t, name, cl); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.op.pools.CreateCloudletPool(ctx, &edgeproto.CreateCloudletPoolRequest{CloudletPool: w.pool("edge1")}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.dev.tpes.CreateTrustPolicyException(ctx, &edgeproto.CreateTrustPolicyExceptionRequest{TrustPolicyException: &edgeproto.TrustPolicyException{
		Key: w.excKey(), OutboundSecurityRules: []*edgeproto.SecurityRule{{Protocol: "udp", PortRangeMin: 53, PortRangeMax: 53, RemoteCidr: "8.8.8.8/32"}}}}); err != nil {
		t.Fatal(err)
	}
	w.wantEntries(t) // not approved: applied nowhere

	// Approval applies it to the instance on the pool's cloudlet.
	w.setState(t, edgeproto.TrustPolicyExceptionState_TRUST_POLICY_EXCEPTION_STATE_ACTIVE)
	w.wantEntries(t, "i1=CREATE_REQUESTED")
	if err := w.report(t, w.edge2, "i1", ready); !errors.Is(err, controller.ErrReportRefused) {
		t.Fatalf("report by another cloudlet's CRM: %v, want ErrReportRefused", err)
	}
	// A CCRM reports only under the claim of the exception on the entry's
	// cloudlet, while that claim exists.
	ccrmReport := func(fence *controller.Fence) error {
		fm, _ := edgeproto.NewTrustPolicyExceptionFieldMap(edgeproto.TrustPolicyExceptionFieldKey, edgeproto.TrustPolicyExceptionFieldInstances)
		info := &edgeproto.TrustPolicyException{Key: w.excKey(), Instances: []*edgeproto.TrustPolicyExceptionInstance{{
			AppInstKey: &edgeproto.AppInstKey{Organization: "dev", Name: "i1"}, CloudletKey: w.edge1, State: ready}}}
		return w.env.Controller.ApplyInfo(ctx, controller.Reporter{CCRM: true, Fence: fence}, info, fm)
	}
	excKS := (&edgeproto.TrustPolicyException{Key: w.excKey()}).GetKeyString()
	if err := ccrmReport(nil); !errors.Is(err, controller.ErrReportRefused) {
		t.Fatalf("CCRM report without a fence: %v, want ErrReportRefused", err)
	}
	if err := ccrmReport(&controller.Fence{Key: controller.TPEClaimKey(w.env.Store.Prefix(), excKS, w.edge2), Revision: 1}); !errors.Is(err, controller.ErrReportRefused) {
		t.Fatalf("CCRM report under another cloudlet's claim: %v, want ErrReportRefused", err)
	}
	if err := ccrmReport(&controller.Fence{Key: controller.TPEClaimKey(w.env.Store.Prefix(), excKS, w.edge1), Revision: 1}); !errors.Is(err, controller.ErrStaleReport) {
		t.Fatalf("CCRM report under a claim that does not exist: %v, want ErrStaleReport", err)
	}
	w.wantEntries(t, "i1=CREATE_REQUESTED")
	if err := w.report(t, w.edge1, "i1", ready); err != nil {
		t.Fatal(err)
	}
	w.wantEntries(t, "i1=READY")
	if err := w.report(t, w.edge1, "i1", edgeproto.TrackedState_TRACKED_STATE_CREATING); !errors.Is(err, edgeproto.ErrInfoStateRejected) {
		t.Fatalf("stale report: %v, want ErrInfoStateRejected", err)
	}

	// The pool grows, then loses edge1.
	w.setPool(t, "edge1", "edge2")
	w.wantEntries(t, "i1=READY", "i2=CREATE_REQUESTED")
	if err := w.report(t, w.edge2, "i2", edgeproto.TrackedState_TRACKED_STATE_CREATE_ERROR, "boom"); err != nil {
		t.Fatal(err)
	}
	if e := w.exc(t); e.Instances[1].State != edgeproto.TrackedState_TRACKED_STATE_CREATE_ERROR || !slices.Equal(e.Instances[1].Errors, []string{"boom"}) {
		t.Fatalf("error entry = %v", e.Instances[1])
	}
	w.setPool(t, "edge2")
	w.wantEntries(t, "i1=DELETE_REQUESTED", "i2=CREATE_ERROR")
	if err := w.report(t, w.edge1, "i1", ddone); err != nil {
		t.Fatal(err)
	}
	w.wantEntries(t, "i2=CREATE_ERROR")

	// A new instance on the pool gets it; a deleted one loses it.
	if err := w.createInst(t, "i3", w.edge2); err != nil {
		t.Fatal(err)
	}
	w.wantEntries(t, "i2=CREATE_ERROR", "i3=CREATE_REQUESTED")
	if err := w.report(t, w.edge2, "i3", ready); err != nil {
		t.Fatal(err)
	}
	if _, err := drain(w.dev.appInsts.DeleteAppInst(ctx, &edgeproto.DeleteAppInstRequest{
		Key: &edgeproto.AppInstKey{Organization: "dev", Name: "i3"}, CrmOverride: edgeproto.CRMOverride_CRM_OVERRIDE_IGNORE_CRM})); err != nil {
		t.Fatal(err)
	}
	w.wantEntries(t, "i2=CREATE_ERROR", "i3=DELETE_REQUESTED")
	if err := w.report(t, w.edge2, "i3", ddone); err != nil {
		t.Fatal(err)
	}

	// New rules are applied again; rejection removes it everywhere.
	if _, err := w.dev.tpes.UpdateTrustPolicyException(ctx, &edgeproto.UpdateTrustPolicyExceptionRequest{TrustPolicyException: &edgeproto.TrustPolicyException{
		Key: w.excKey(), OutboundSecurityRules: []*edgeproto.SecurityRule{{Protocol: "tcp", PortRangeMin: 53, PortRangeMax: 53, RemoteCidr: "8.8.8.8/32"}}},
		Fields: []string{edgeproto.TrustPolicyExceptionFieldOutboundSecurityRules}}); err != nil {
		t.Fatal(err)
	}
	w.wantEntries(t, "i2=CREATE_REQUESTED")
	if err := w.report(t, w.edge2, "i2", ready); err != nil {
		t.Fatal(err)
	}
	w.setState(t, edgeproto.TrustPolicyExceptionState_TRUST_POLICY_EXCEPTION_STATE_REJECTED)
	w.wantEntries(t, "i2=DELETE_REQUESTED")
	// A removal that failed is applied again when approved again.
	if err := w.report(t, w.edge2, "i2", edgeproto.TrackedState_TRACKED_STATE_DELETE_ERROR, "unreachable"); err != nil {
		t.Fatal(err)
	}
	w.setState(t, edgeproto.TrustPolicyExceptionState_TRUST_POLICY_EXCEPTION_STATE_ACTIVE)
	w.wantEntries(t, "i2=CREATE_REQUESTED")
	if err := w.report(t, w.edge2, "i2", ready); err != nil {
		t.Fatal(err)
	}
	w.setState(t, edgeproto.TrustPolicyExceptionState_TRUST_POLICY_EXCEPTION_STATE_REJECTED)
	w.wantEntries(t, "i2=DELETE_REQUESTED")
	if err := w.report(t, w.edge2, "i2", ddone); err != nil {
		t.Fatal(err)
	}
	w.wantEntries(t)

	// Approved again, then deleted: it stays, deleting, until removed.
	w.setState(t, edgeproto.TrustPolicyExceptionState_TRUST_POLICY_EXCEPTION_STATE_ACTIVE)
	w.wantEntries(t, "i2=CREATE_REQUESTED")
	if err := w.report(t, w.edge2, "i2", ready); err != nil {
		t.Fatal(err)
	}
	if _, err := w.dev.tpes.DeleteTrustPolicyException(ctx, &edgeproto.DeleteTrustPolicyExceptionRequest{Key: w.excKey()}); err != nil {
		t.Fatal(err)
	}
	if e := w.exc(t); e == nil || !e.Deleting {
		t.Fatalf("exception after delete = %v, want it deleting", e)
	}
	w.wantEntries(t, "i2=DELETE_REQUESTED")
	_, err := w.dev.tpes.UpdateTrustPolicyException(ctx, &edgeproto.UpdateTrustPolicyExceptionRequest{TrustPolicyException: &edgeproto.TrustPolicyException{
		Key: w.excKey()}, Fields: []string{edgeproto.TrustPolicyExceptionFieldOutboundSecurityRules}})
	wantCode(t, err, codes.FailedPrecondition, "update of a deleting exception")
	// A removal that failed is asked for again by another delete.
	if err := w.report(t, w.edge2, "i2", edgeproto.TrackedState_TRACKED_STATE_DELETE_ERROR, "unreachable"); err != nil {
		t.Fatal(err)
	}
	w.wantEntries(t, "i2=DELETE_ERROR")
	if _, err := w.dev.tpes.DeleteTrustPolicyException(ctx, &edgeproto.DeleteTrustPolicyExceptionRequest{Key: w.excKey()}); err != nil {
		t.Fatal(err)
	}
	w.wantEntries(t, "i2=DELETE_REQUESTED")
	if err := w.report(t, w.edge2, "i2", ddone); err != nil {
		t.Fatal(err)
	}
	if e := w.exc(t); e != nil {
		t.Fatalf("exception after its last removal = %v, want it gone", e)
	}
}

func TestRequiredOutboundConnectionsCheckedAgainstTrustPolicy(t *testing.T) {
	t.Parallel()
	policy := &edgeproto.TrustPolicy{Key: &edgeproto.TrustPolicyKey{Organization: "op", Name: "strict"},
		OutboundSecurityRules: []*edgeproto.SecurityRule{{Protocol: "tcp", PortRangeMin: 443, PortRangeMax: 443, RemoteCidr: "10.0.0.0/8"}}}
	app := &edgeproto.App{RequiredOutboundConnections: []*edgeproto.SecurityRule{
		{Protocol: "tcp", PortRangeMin: 443, PortRangeMax: 443, RemoteCidr: "10.1.0.0/16"},
		{Protocol: "udp", PortRangeMin: 53, PortRangeMax: 53, RemoteCidr: "8.8.8.8/32"},
	}}
	w := newTPEWorld(t, policy, app)
	ctx := testCtx(t)
	err := w.createInst(t, "i1", w.edge1)
	wantCode(t, err, codes.FailedPrecondition, "instance needing a connection the policy does not allow")
	if !strings.Contains(err.Error(), "udp 8.8.8.8/32:53-53") || !strings.Contains(err.Error(), "strict") {
		t.Fatalf("error %v does not name the connection and the policy", err)
	}

	// An ACTIVE exception on a pool holding the cloudlet allows it there.
	if _, err := w.op.pools.CreateCloudletPool(ctx, &edgeproto.CreateCloudletPoolRequest{CloudletPool: w.pool("edge1")}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.dev.tpes.CreateTrustPolicyException(ctx, &edgeproto.CreateTrustPolicyExceptionRequest{TrustPolicyException: &edgeproto.TrustPolicyException{
		Key: w.excKey(), OutboundSecurityRules: []*edgeproto.SecurityRule{{Protocol: "udp", PortRangeMin: 53, PortRangeMax: 53, RemoteCidr: "8.8.0.0/16"}}}}); err != nil {
		t.Fatal(err)
	}
	err = w.createInst(t, "i1", w.edge1)
	wantCode(t, err, codes.FailedPrecondition, "exception not approved yet")
	w.setState(t, edgeproto.TrustPolicyExceptionState_TRUST_POLICY_EXCEPTION_STATE_ACTIVE)
	if err := w.createInst(t, "i1", w.edge1); err != nil {
		t.Fatal(err)
	}
	w.wantEntries(t, "i1=CREATE_REQUESTED")
	err = w.createInst(t, "i2", w.edge2)
	wantCode(t, err, codes.FailedPrecondition, "instance on a cloudlet outside the exception's pool")
}

func TestCCRMAppliesTrustPolicyExceptions(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := testCtx(t)
	ps, err := drain(w.dev.appInsts.CreateAppInst(ctx, &edgeproto.CreateAppInstRequest{AppInst: w.appInst("i1")}))
	if err != nil || lastState(t, ps) != edgeproto.TrackedState_TRACKED_STATE_READY {
		t.Fatalf("create instance: %v %v", ps, err)
	}
	poolKey := &edgeproto.CloudletPoolKey{Organization: "operator", Name: "p1"}
	setPool := func(cloudlets ...string) {
		t.Helper()
		if _, err := w.op.pools.UpdateCloudletPool(ctx, &edgeproto.UpdateCloudletPoolRequest{CloudletPool: &edgeproto.CloudletPool{Key: poolKey, Cloudlets: cloudlets},
			Fields: []string{edgeproto.CloudletPoolFieldCloudlets}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.op.pools.CreateCloudletPool(ctx, &edgeproto.CreateCloudletPoolRequest{CloudletPool: &edgeproto.CloudletPool{
		Key: poolKey, Cloudlets: []string{w.cloudlet.Name}, DeveloperOrganizations: []string{"developer"}}}); err != nil {
		t.Fatal(err)
	}
	excKey := &edgeproto.TrustPolicyExceptionKey{AppKey: w.app, CloudletPoolKey: poolKey, Name: "dns"}
	if _, err := w.dev.tpes.CreateTrustPolicyException(ctx, &edgeproto.CreateTrustPolicyExceptionRequest{TrustPolicyException: &edgeproto.TrustPolicyException{
		Key: excKey, OutboundSecurityRules: []*edgeproto.SecurityRule{{Protocol: "udp", PortRangeMin: 53, PortRangeMax: 53, RemoteCidr: "8.8.8.8/32"}}}}); err != nil {
		t.Fatal(err)
	}
	setState := func(s edgeproto.TrustPolicyExceptionState) {
		t.Helper()
		if _, err := w.admin.tpes.UpdateTrustPolicyException(ctx, &edgeproto.UpdateTrustPolicyExceptionRequest{
			TrustPolicyException: &edgeproto.TrustPolicyException{Key: excKey, State: s},
			Fields:               []string{edgeproto.TrustPolicyExceptionFieldState}}); err != nil {
			t.Fatal(err)
		}
	}
	tpes := store.NewKind[*edgeproto.TrustPolicyException](w.env.Store)
	excKS := (&edgeproto.TrustPolicyException{Key: excKey}).GetKeyString()
	clusterKS := (&edgeproto.ClusterInst{Key: w.cluster}).GetKeyString()
	stored := func() (*edgeproto.TrustPolicyException, bool) {
		e, _, err := tpes.Get(ctx, excKS)
		if errors.Is(err, store.ErrNotFound) {
			return nil, false
		}
		if err != nil {
			t.Fatal(err)
		}
		return e, true
	}
	applied := func(want bool, want_ ...string) {
		t.Helper()
		controllertest.WaitFor(t, 20*time.Second, fmt.Sprintf("exception applied=%v with entries %v", want, want_), func() bool {
			e, _ := stored()
			return w.env.Platform.HasTrustPolicyException(excKS, clusterKS) == want && slices.Equal(entries(e), want_)
		})
	}

	setState(edgeproto.TrustPolicyExceptionState_TRUST_POLICY_EXCEPTION_STATE_ACTIVE)
	applied(true, "i1=READY")
	setPool()
	applied(false)
	setPool(w.cloudlet.Name)
	applied(true, "i1=READY")
	setState(edgeproto.TrustPolicyExceptionState_TRUST_POLICY_EXCEPTION_STATE_REJECTED)
	applied(false)
	setState(edgeproto.TrustPolicyExceptionState_TRUST_POLICY_EXCEPTION_STATE_ACTIVE)
	applied(true, "i1=READY")

	// Deleting the instance removes the exception from it first.
	ps, err = drain(w.dev.appInsts.DeleteAppInst(ctx, &edgeproto.DeleteAppInstRequest{Key: w.appInst("i1").Key}))
	if err != nil || lastState(t, ps) != edgeproto.TrackedState_TRACKED_STATE_DELETE_DONE {
		t.Fatalf("delete instance: %v %v", ps, err)
	}
	applied(false)
	ps, err = drain(w.dev.appInsts.CreateAppInst(ctx, &edgeproto.CreateAppInstRequest{AppInst: w.appInst("i2")}))
	if err != nil || lastState(t, ps) != edgeproto.TrackedState_TRACKED_STATE_READY {
		t.Fatalf("create instance: %v %v", ps, err)
	}
	applied(true, "i2=READY")

	if _, err := w.dev.tpes.DeleteTrustPolicyException(ctx, &edgeproto.DeleteTrustPolicyExceptionRequest{Key: excKey}); err != nil {
		t.Fatal(err)
	}
	controllertest.WaitFor(t, 20*time.Second, "exception deleted", func() bool {
		_, found := stored()
		return !found && !w.env.Platform.HasTrustPolicyException(excKS, clusterKS)
	})
	if r := w.env.Host.Rejected(); len(r) > 0 {
		t.Errorf("reports rejected: %q", r)
	}
}

func TestExceptionOnLocalCloudletShowsItsErrorPerInstance(t *testing.T) {
	t.Parallel()
	p, err := local.New(local.Config{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	env := controllertest.Start(t, controllertest.Options{Host: true, Platform: p})
	ctx := testCtx(t)
	admin, op, dev := clientsOf(env.Conn(env.AdminToken())), clientsOf(env.Conn(env.OrgToken("op"))), clientsOf(env.Conn(env.OrgToken("dev")))
	cl := &edgeproto.CloudletKey{Organization: "op", Name: "host1"}
	ck := &edgeproto.ClusterKey{Organization: "dev", Name: "c1"}
	app := &edgeproto.AppKey{Organization: "dev", Name: "web", Version: "1"}
	if _, err := admin.flavors.CreateFlavor(ctx, &edgeproto.CreateFlavorRequest{Flavor: &edgeproto.Flavor{Key: &edgeproto.FlavorKey{Name: "small"}}}); err != nil {
		t.Fatal(err)
	}
	// The cloudlet, cluster and instance are placed without the resource
	// manager: only the exception goes to the local platform.
	if _, err := drain(op.cloudlets.CreateCloudlet(ctx, &edgeproto.CreateCloudletRequest{Cloudlet: &edgeproto.Cloudlet{
		Key: cl, PlatformType: local.PlatformType, CrmOverride: edgeproto.CRMOverride_CRM_OVERRIDE_IGNORE_CRM}})); err != nil {
		t.Fatal(err)
	}
	if _, err := drain(dev.clusters.CreateClusterInst(ctx, &edgeproto.CreateClusterInstRequest{ClusterInst: &edgeproto.ClusterInst{
		Key: ck, CloudletKey: cl, FlavorName: "small", CrmOverride: edgeproto.CRMOverride_CRM_OVERRIDE_IGNORE_CRM}})); err != nil {
		t.Fatal(err)
	}
	if _, err := dev.apps.CreateApp(ctx, &edgeproto.CreateAppRequest{App: &edgeproto.App{Key: app, Deployment: local.PlatformType}}); err != nil {
		t.Fatal(err)
	}
	if _, err := drain(dev.appInsts.CreateAppInst(ctx, &edgeproto.CreateAppInstRequest{AppInst: &edgeproto.AppInst{
		Key: &edgeproto.AppInstKey{Organization: "dev", Name: "i1"}, AppKey: app, ClusterKey: ck,
		CrmOverride: edgeproto.CRMOverride_CRM_OVERRIDE_IGNORE_CRM}})); err != nil {
		t.Fatal(err)
	}
	poolKey := &edgeproto.CloudletPoolKey{Organization: "op", Name: "p1"}
	if _, err := op.pools.CreateCloudletPool(ctx, &edgeproto.CreateCloudletPoolRequest{CloudletPool: &edgeproto.CloudletPool{
		Key: poolKey, Cloudlets: []string{cl.Name}, DeveloperOrganizations: []string{"dev"}}}); err != nil {
		t.Fatal(err)
	}
	excKey := &edgeproto.TrustPolicyExceptionKey{AppKey: app, CloudletPoolKey: poolKey, Name: "dns"}
	if _, err := dev.tpes.CreateTrustPolicyException(ctx, &edgeproto.CreateTrustPolicyExceptionRequest{TrustPolicyException: &edgeproto.TrustPolicyException{
		Key: excKey, OutboundSecurityRules: []*edgeproto.SecurityRule{{Protocol: "udp", PortRangeMin: 53, PortRangeMax: 53, RemoteCidr: "8.8.8.8/32"}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.tpes.UpdateTrustPolicyException(ctx, &edgeproto.UpdateTrustPolicyExceptionRequest{
		TrustPolicyException: &edgeproto.TrustPolicyException{Key: excKey, State: edgeproto.TrustPolicyExceptionState_TRUST_POLICY_EXCEPTION_STATE_ACTIVE},
		Fields:               []string{edgeproto.TrustPolicyExceptionFieldState}}); err != nil {
		t.Fatal(err)
	}
	var shown *edgeproto.TrustPolicyException
	controllertest.WaitFor(t, 20*time.Second, "the exception's entry in CREATE_ERROR", func() bool {
		got, err := recvAll(dev.tpes.ShowTrustPolicyExceptions(ctx, &edgeproto.ShowTrustPolicyExceptionsRequest{}))
		if err != nil || len(got) != 1 {
			return false
		}
		shown = got[0].(*edgeproto.TrustPolicyException)
		return slices.Equal(entries(shown), []string{"i1=CREATE_ERROR"})
	})
	// The local platform's own answer: it cannot enforce network rules
	// (not the engine's generic "not supported on platform").
	if errs := shown.Instances[0].Errors; len(errs) != 1 || !strings.Contains(errs[0], local.ErrNoNetworkRules.Error()) {
		t.Fatalf("errors of the entry = %q, want one saying %q", errs, local.ErrNoNetworkRules)
	}

	// Nothing was applied, so the delete ends: the exception leaves the store.
	if _, err := dev.tpes.DeleteTrustPolicyException(ctx, &edgeproto.DeleteTrustPolicyExceptionRequest{Key: excKey}); err != nil {
		t.Fatal(err)
	}
	controllertest.WaitFor(t, 20*time.Second, "the exception deleted", func() bool {
		got, err := recvAll(dev.tpes.ShowTrustPolicyExceptions(ctx, &edgeproto.ShowTrustPolicyExceptionsRequest{}))
		return err == nil && len(got) == 0
	})
}
