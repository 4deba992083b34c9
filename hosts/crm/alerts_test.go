package crm_test

import (
	"io"
	"testing"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/hosts/controller/controllertest"
	"github.com/edgekit/edgekit/platforms/fake"
)

// The resources snapshots a CRM reports after each change raise an Alert
// at the controller when the cloudlet's vCPUs use reaches its quota's
// alert threshold, and clear it when the use falls back.
func TestCRMResourceReportsRaiseAndClearAlerts(t *testing.T) {
	t.Parallel()
	e := newEdge(t)
	ctx := testCtx(t)
	e.startCRM(t, e.env.Addr, fake.New(fake.Options{}))
	waitState[*edgeproto.Cloudlet](t, e, e.cloudlet, edgeproto.TrackedState_TRACKED_STATE_READY)
	ps, err := controllertest.Drain(e.op.cloudlets.UpdateCloudlet(ctx, &edgeproto.UpdateCloudletRequest{Cloudlet: &edgeproto.Cloudlet{
		Key: e.cloudlet, ResourceQuotas: []*edgeproto.ResourceQuota{{Name: "vCPUs", Value: 2, AlertThreshold: 50}}},
		Fields: []string{edgeproto.CloudletFieldResourceQuotas}}))
	if err != nil || controllertest.Final(ps) != edgeproto.TrackedState_TRACKED_STATE_READY {
		t.Fatalf("set the quota: %v %v", ps, err)
	}
	alerts := edgeproto.NewAlertServiceClient(e.env.Conn(e.env.OrgToken("operator")))
	vcpuAlert := func() *edgeproto.Alert {
		s, err := alerts.ShowAlerts(ctx, &edgeproto.ShowAlertsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		var found *edgeproto.Alert
		for {
			r, err := s.Recv()
			if err == io.EOF {
				return found
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.GetAlert().GetKey().GetResource() == "vCPUs" {
				found = r.GetAlert()
			}
		}
	}
	if a := vcpuAlert(); a != nil {
		t.Fatalf("an alert with no cluster: %v", a)
	}
	ps, err = controllertest.Drain(e.dev.clusters.CreateClusterInst(ctx, &edgeproto.CreateClusterInstRequest{ClusterInst: e.cluster("c1")}))
	if err != nil || controllertest.Final(ps) != edgeproto.TrackedState_TRACKED_STATE_READY {
		t.Fatalf("create cluster: %v %v", ps, err)
	}
	controllertest.WaitFor(t, 20*time.Second, "the vCPUs alert at 1 of 2", func() bool {
		a := vcpuAlert()
		return a != nil && a.GetUsed() == 1 && a.GetUsagePercent() == 50
	})
	ps, err = controllertest.Drain(e.dev.clusters.DeleteClusterInst(ctx, &edgeproto.DeleteClusterInstRequest{Key: e.cluster("c1").Key}))
	if err != nil || controllertest.Final(ps) != edgeproto.TrackedState_TRACKED_STATE_DELETE_DONE {
		t.Fatalf("delete cluster: %v %v", ps, err)
	}
	controllertest.WaitFor(t, 20*time.Second, "the vCPUs alert to clear", func() bool { return vcpuAlert() == nil })
}
