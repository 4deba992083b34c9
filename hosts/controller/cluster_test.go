package controller_test

import (
	"fmt"
	"testing"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/hosts/controller/controllertest"
)

// On a 3-member etcd cluster the controller keeps working when one member
// stops: what was written before is there, and new lifecycles complete.
func TestThreeMemberClusterSurvivesAMemberStop(t *testing.T) {
	t.Parallel()
	env := controllertest.Start(t, controllertest.Options{Host: true, Members: 3})
	ctx := testCtx(t)
	admin := clientsOf(env.Conn(env.AdminToken()))
	if _, err := admin.flavors.CreateFlavor(ctx, &edgeproto.CreateFlavorRequest{Flavor: &edgeproto.Flavor{Key: &edgeproto.FlavorKey{Name: "fake.small"}}}); err != nil {
		t.Fatal(err)
	}
	cl := &edgeproto.CloudletKey{Organization: "op", Name: "s"}
	if ps, err := drain(admin.cloudlets.CreateCloudlet(ctx, &edgeproto.CreateCloudletRequest{Cloudlet: &edgeproto.Cloudlet{Key: cl, PlatformType: "fake"}})); err != nil {
		t.Fatalf("cloudlet: %v %v", ps, err)
	}
	create := func(name string) {
		t.Helper()
		ps, err := drain(admin.clusters.CreateClusterInst(ctx, &edgeproto.CreateClusterInstRequest{ClusterInst: &edgeproto.ClusterInst{
			Key: &edgeproto.ClusterKey{Organization: "dev", Name: name}, CloudletKey: cl, FlavorName: "fake.small"}}))
		if err != nil || lastState(t, ps) != edgeproto.TrackedState_TRACKED_STATE_READY {
			t.Fatalf("cluster %s: %v %v", name, ps, err)
		}
	}
	create("before")
	env.Cluster.StopMember(0)
	for i := range 3 {
		create(fmt.Sprintf("after%d", i))
	}
	got, err := recvAll(admin.clusters.ShowClusterInsts(ctx, &edgeproto.ShowClusterInstsRequest{}))
	if err != nil || len(got) != 4 {
		t.Fatalf("clusters after a member stopped: %d (%v), want 4", len(got), err)
	}
}
