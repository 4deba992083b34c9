package controller_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/platforms/fake"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestAppInstOnAnotherOrganizationsClusterRevealsNothing: an organization
// that names another organization's cluster in a CreateAppInst gets one
// answer whether that cluster does not exist, is not multi-tenant or is
// not READY, so that it learns neither its existence nor its state; a
// multi-tenant READY cluster of another organization is usable, and the
// cluster's own organization still learns why its cluster is unusable.
func TestAppInstOnAnotherOrganizationsClusterRevealsNothing(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := testCtx(t)
	cluster := func(name string, multiTenant bool) *edgeproto.ClusterInst {
		return &edgeproto.ClusterInst{Key: &edgeproto.ClusterKey{Organization: "developer", Name: name}, CloudletKey: w.cloudlet,
			FlavorName: "fake.small", Deployment: "docker", MultiTenant: multiTenant}
	}
	// shared: multi-tenant and READY; broken: multi-tenant and CREATE_ERROR.
	if ps, err := drain(w.dev.clusters.CreateClusterInst(ctx, &edgeproto.CreateClusterInstRequest{ClusterInst: cluster("shared", true)})); err != nil ||
		lastState(t, ps) != edgeproto.TrackedState_TRACKED_STATE_READY {
		t.Fatalf("create shared: %v %v", ps, err)
	}
	w.env.Platform.Inject(fake.Fault{Op: fake.OpCreateCluster, Times: 1, Err: errors.New("no capacity")})
	if _, err := drain(w.dev.clusters.CreateClusterInst(ctx, &edgeproto.CreateClusterInstRequest{ClusterInst: cluster("broken", true)})); status.Code(err) != codes.Aborted {
		t.Fatalf("create broken: %v", err)
	}
	other := clientsOf(w.env.Conn(w.env.OrgToken("other")))
	appKey := &edgeproto.AppKey{Organization: "other", Name: "web", Version: "1"}
	if _, err := other.apps.CreateApp(ctx, &edgeproto.CreateAppRequest{App: &edgeproto.App{Key: appKey, Deployment: "docker",
		ImageType: edgeproto.ImageType_IMAGE_TYPE_DOCKER, ImagePath: "nginx"}}); err != nil {
		t.Fatal(err)
	}
	create := func(c *clients, org, name, clusterName string) error {
		_, err := drain(c.appInsts.CreateAppInst(ctx, &edgeproto.CreateAppInstRequest{NoWait: true, AppInst: &edgeproto.AppInst{
			Key:        &edgeproto.AppInstKey{Organization: org, Name: name},
			AppKey:     &edgeproto.AppKey{Organization: org, Name: "web", Version: "1"},
			ClusterKey: &edgeproto.ClusterKey{Organization: "developer", Name: clusterName}}}))
		return err
	}
	// The answer, with the cluster's name (which the caller chose) blanked.
	answer := func(err error, clusterName string) string {
		st := status.Convert(err)
		return st.Code().String() + " " + strings.ReplaceAll(st.Message(), "name="+clusterName, "name=<cluster>")
	}
	var first string
	for _, c := range []string{"c1" /* READY, not multi-tenant */, "nowhere" /* does not exist */, "broken" /* CREATE_ERROR */} {
		err := create(other, "other", "i1", c)
		got := answer(err, c)
		if status.Code(err) != codes.PermissionDenied {
			t.Errorf("cluster %s: got %v, want PermissionDenied", c, err)
		}
		for _, leak := range []string{"exist", "CREATE_ERROR", "belongs to"} {
			if strings.Contains(got, leak) {
				t.Errorf("cluster %s: the answer %q says %q", c, got, leak)
			}
		}
		if first == "" {
			first = got
		} else if got != first {
			t.Errorf("cluster %s: answer %q differs from %q", c, got, first)
		}
	}
	if err := create(other, "other", "i-shared", "shared"); err != nil {
		t.Errorf("on a multi-tenant READY cluster of another organization: %v", err)
	}
	// The cluster's organization learns why its own cluster is unusable.
	if err := create(w.dev, "developer", "i-broken", "broken"); status.Code(err) != codes.FailedPrecondition ||
		!strings.Contains(err.Error(), "CREATE_ERROR, not READY") {
		t.Errorf("owner on its broken cluster: %v", err)
	}
}
