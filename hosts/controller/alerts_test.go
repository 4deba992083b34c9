package controller_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/hosts/controller/controllertest"
	"github.com/edgekit/edgekit/hosts/controller/ui"
	"github.com/edgekit/edgekit/hosts/controller/ui/uitest"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// showAlerts returns the alerts token may see.
func showAlerts(t *testing.T, env *controllertest.Env, token string) []*edgeproto.Alert {
	t.Helper()
	s, err := edgeproto.NewAlertServiceClient(env.Conn(token)).ShowAlerts(testCtx(t), &edgeproto.ShowAlertsRequest{})
	msgs, err := recvAll(s, err)
	if err != nil {
		t.Fatal(err)
	}
	var out []*edgeproto.Alert
	for _, m := range msgs {
		out = append(out, m.(*edgeproto.Alert))
	}
	return out
}

// alertGauges returns the edgekit_controller_alerts_active series of g by
// "organization/cloudlet/resource".
func alertGauges(t *testing.T, g prometheus.Gatherer) map[string]float64 {
	t.Helper()
	families, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range families {
		if f.GetName() != "edgekit_controller_alerts_active" {
			continue
		}
		for _, m := range f.GetMetric() {
			l := labelsOf(m)
			out[l["organization"]+"/"+l["cloudlet"]+"/"+l["resource"]] = m.GetGauge().GetValue()
		}
	}
	return out
}

func labelsOf(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

// A cloudlet's use of vCPUs, as the resources snapshots its resource
// manager reports after each change, raises an Alert when it reaches the
// quota's alert threshold and clears it when it falls back: shown to the
// cloudlet's organization and to admins (not to a developer), and
// exported as a metric. Lowering the cloudlet's default threshold (for a
// quota without its own) raises an alert on the stored snapshot at once;
// removing the quota clears it.
func TestQuotaAlertThresholdRaisesAndClearsAlert(t *testing.T) {
	t.Parallel()
	env := controllertest.Start(t, controllertest.Options{Host: true})
	admin := clientsOf(env.Conn(env.AdminToken()))
	ctx := testCtx(t)
	if _, err := admin.flavors.CreateFlavor(ctx, &edgeproto.CreateFlavorRequest{Flavor: &edgeproto.Flavor{
		Key: &edgeproto.FlavorKey{Name: "fake.medium"}, Vcpus: 2, RamMb: 4096, DiskGb: 40}}); err != nil {
		t.Fatal(err)
	}
	cl := &edgeproto.CloudletKey{Organization: "operator", Name: "site1"}
	ps, err := drain(admin.cloudlets.CreateCloudlet(ctx, &edgeproto.CreateCloudletRequest{Cloudlet: &edgeproto.Cloudlet{
		Key: cl, PlatformType: "fake", ResourceQuotas: []*edgeproto.ResourceQuota{
			{Name: "vCPUs", Value: 8, AlertThreshold: 50},
			{Name: "RAM", Value: 1 << 20},
		}}}))
	if err != nil || lastState(t, ps) != edgeproto.TrackedState_TRACKED_STATE_READY {
		t.Fatalf("create cloudlet: %v %v", ps, err)
	}
	opTok, devTok := env.OrgToken("operator"), env.OrgToken("developer")
	page := uitest.NewRecorder()
	uitest.Run(t, page, env.Controller.UISources()...)
	const alertKey = "cloudlet_key.organization=operator,cloudlet_key.name=site1,resource=vCPUs"
	wantAlert := func(resource string, used uint64) {
		t.Helper()
		controllertest.WaitFor(t, 20*time.Second, fmt.Sprintf("a %s alert at %d used", resource, used), func() bool {
			for _, a := range showAlerts(t, env, opTok) {
				if a.GetKey().GetResource() == resource && a.GetUsed() == used {
					return true
				}
			}
			return false
		})
	}
	noAlerts := func(what string) {
		t.Helper()
		controllertest.WaitFor(t, 20*time.Second, what, func() bool { return len(showAlerts(t, env, env.AdminToken())) == 0 })
	}
	create := func(name string) {
		t.Helper()
		if ps, err := drain(admin.clusters.CreateClusterInst(ctx, &edgeproto.CreateClusterInstRequest{ClusterInst: mediumCluster(cl, name)})); err != nil ||
			lastState(t, ps) != edgeproto.TrackedState_TRACKED_STATE_READY {
			t.Fatalf("cluster %s: %v %v", name, ps, err)
		}
	}

	create("a") // 2 of 8 vCPUs: 25%, below 50%
	waitSnapshotClusters(t, admin, cl, 1)
	if got := showAlerts(t, env, env.AdminToken()); len(got) != 0 {
		t.Fatalf("alerts at 25%% of the quota: %v", got)
	}
	create("b") // 4 of 8: 50%
	wantAlert("vCPUs", 4)
	a := showAlerts(t, env, opTok)[0]
	if a.GetName() != "CloudletResourceUsage" || a.GetQuota() != 8 || a.GetThreshold() != 50 || a.GetUsagePercent() != 50 ||
		a.GetKey().GetCloudletKey().GetName() != "site1" || a.GetActiveAt() == nil || !strings.Contains(a.GetDescription(), "vCPUs") {
		t.Errorf("alert = %v", a)
	}
	page.Wait(t, "Alert", alertKey, 10*time.Second, "the operator's ACTIVE vCPUs alert on the status page", func(r ui.Row, found bool) bool {
		return found && r.State == "ACTIVE" && r.Org == "operator" && strings.Contains(r.Message, "vCPUs at 50%")
	})
	if got := showAlerts(t, env, devTok); len(got) != 0 {
		t.Errorf("a developer sees the operator's alerts: %v", got)
	}
	if g := alertGauges(t, env.Controller.Gatherer()); g["operator/site1/vCPUs"] != 1 || len(g) != 1 {
		t.Errorf("alert gauges = %v, want operator/site1/vCPUs at 1", g)
	}
	create("c") // 6 of 8: the alert follows the use
	wantAlert("vCPUs", 6)
	if got := showAlerts(t, env, opTok); len(got) != 1 || !got[0].GetActiveAt().AsTime().Equal(a.GetActiveAt().AsTime()) || got[0].GetUsagePercent() != 75 {
		t.Errorf("alert after a third cluster = %v, want one at 75%% raised when the first was", got)
	}

	for _, name := range []string{"b", "c"} {
		if _, err := drain(admin.clusters.DeleteClusterInst(ctx, &edgeproto.DeleteClusterInstRequest{Key: mediumCluster(cl, name).Key})); err != nil {
			t.Fatal(err)
		}
	}
	noAlerts("the vCPUs alert to clear at 25% of the quota")
	if g := alertGauges(t, env.Controller.Gatherer()); len(g) != 0 {
		t.Errorf("alert gauges after the alert cleared = %v", g)
	}
	page.Wait(t, "Alert", alertKey, 10*time.Second, "the cleared alert gone from the status page", func(_ ui.Row, found bool) bool { return !found })

	// The quota's own threshold is gone: the cloudlet's default applies.
	update := func(cloudlet *edgeproto.Cloudlet, fields ...string) {
		t.Helper()
		if _, err := drain(admin.cloudlets.UpdateCloudlet(ctx, &edgeproto.UpdateCloudletRequest{Cloudlet: cloudlet, Fields: fields})); err != nil {
			t.Fatal(err)
		}
	}
	update(&edgeproto.Cloudlet{Key: cl, DefaultResourceAlertThreshold: 20, ResourceQuotas: []*edgeproto.ResourceQuota{
		{Name: "vCPUs", Value: 8}, {Name: "RAM", Value: 1 << 20}}},
		edgeproto.CloudletFieldDefaultResourceAlertThreshold, edgeproto.CloudletFieldResourceQuotas)
	wantAlert("vCPUs", 2)
	if got := showAlerts(t, env, opTok); len(got) != 1 || got[0].GetThreshold() != 20 {
		t.Errorf("alerts at the default threshold = %v, want one vCPUs alert at 20%%", got)
	}
	update(&edgeproto.Cloudlet{Key: cl, ResourceQuotas: []*edgeproto.ResourceQuota{{Name: "RAM", Value: 1 << 20}}},
		edgeproto.CloudletFieldResourceQuotas)
	noAlerts("the vCPUs alert to clear with its quota")
}
