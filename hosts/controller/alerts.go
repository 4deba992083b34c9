package controller

import (
	"context"
	"fmt"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/fieldmap"
	"github.com/edgekit/edgekit/internal/store"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// Alerts on the resource usage of cloudlets.
//
// A quota of a cloudlet (Cloudlet.resource_quotas, value > 0) has an alert
// threshold: its alert_threshold, or when that is 0 the cloudlet's
// default_resource_alert_threshold, in percent of the quota (0 or less: no
// alert). While the cloudlet's last resources snapshot uses the resource
// at or above the threshold (used * 100 >= threshold * quota) an Alert
// named AlertCloudletResourceUsage exists for the cloudlet and the
// resource; when a snapshot falls back below, or the quota or threshold is
// removed, the alert is deleted, and the alerts of a deleted cloudlet go
// with it.
//
// The alerts are worked out in the transactions that change what they
// depend on: the one that applies a CloudletInfo report carrying a
// resources snapshot, the one that updates a cloudlet's quotas or default
// threshold, and the one that removes a cloudlet. So an alert is never out
// of step with the stored snapshot and quotas. Alerts are the controller's:
// the API only shows them (AlertService), to the cloudlet's organization
// and to admins.

// AlertCloudletResourceUsage is the name of the alert on a cloudlet's use
// of a resource.
const AlertCloudletResourceUsage = "CloudletResourceUsage"

func alertOwner(a *edgeproto.Alert) string { return a.GetKey().GetCloudletKey().GetOrganization() }

// alertThreshold is the threshold in percent of quota q of cl, 0 for none.
func alertThreshold(cl *edgeproto.Cloudlet, q *edgeproto.ResourceQuota) int32 {
	if q.GetAlertThreshold() != 0 {
		return q.GetAlertThreshold()
	}
	return cl.GetDefaultResourceAlertThreshold()
}

// alertPrefix is the store path under which the alerts of cloudlet ck are.
func (c *Controller) alertPrefix(ck *edgeproto.CloudletKey) string {
	return c.alerts.store.Path((&edgeproto.Alert{Key: &edgeproto.AlertKey{CloudletKey: ck}}).GetKeyString())
}

// wantAlerts returns the alerts that cl's quotas and snap call for, by key
// string, with their current values (no timestamps).
func wantAlerts(cl *edgeproto.Cloudlet, snap *edgeproto.InfraResourcesSnapshot) map[string]*edgeproto.Alert {
	used := map[string]*edgeproto.InfraResource{}
	for _, r := range snap.GetInfo() {
		used[r.GetName()] = r
	}
	out := map[string]*edgeproto.Alert{}
	for _, q := range quotasOf(cl) {
		th := alertThreshold(cl, q)
		r := used[q.GetName()]
		if th <= 0 || r == nil || r.GetUsed()*100 < uint64(th)*q.GetValue() {
			continue
		}
		units := r.GetUnits()
		if units == "" {
			units = resourceUnits[q.GetName()]
		}
		pct := r.GetUsed() * 100 / q.GetValue()
		a := &edgeproto.Alert{
			Key:          &edgeproto.AlertKey{CloudletKey: cl.GetKey().Clone(), Resource: q.GetName()},
			Name:         AlertCloudletResourceUsage,
			Used:         r.GetUsed(),
			Quota:        q.GetValue(),
			Units:        units,
			Threshold:    th,
			UsagePercent: uint32(min(pct, uint64(^uint32(0)))),
			Description: fmt.Sprintf("Cloudlet %s uses %d%% of its %s quota (%d of %d%s), at or above the alert threshold of %d%%",
				cl.GetKeyString(), pct, q.GetName(), r.GetUsed(), q.GetValue(), unitSuffix(units), th),
		}
		out[a.GetKeyString()] = a
	}
	return out
}

func unitSuffix(units string) string {
	if units == "" {
		return ""
	}
	return " " + units
}

// syncAlerts makes the stored alerts of cl those that its quotas and snap
// call for, in tx: it raises the missing ones, refreshes the values of
// those that stay (keeping when they were raised) and deletes the others.
func (c *Controller) syncAlerts(tx *store.Tx, cl *edgeproto.Cloudlet, snap *edgeproto.InfraResourcesSnapshot) error {
	kvs, err := tx.List(c.alertPrefix(cl.GetKey()))
	if err != nil {
		return err
	}
	want := wantAlerts(cl, snap)
	for _, kv := range kvs {
		key, ok := c.alerts.store.KeyFromPath(kv.Key)
		if !ok {
			continue
		}
		next, keep := want[key]
		if !keep {
			c.alerts.store.TxDelete(tx, key)
			continue
		}
		delete(want, key)
		cur, err := c.alerts.store.Decode(key, kv.Value)
		if err != nil {
			return err
		}
		next.ActiveAt, next.UpdatedAt = cur.GetActiveAt(), cur.GetUpdatedAt()
		if proto.Equal(next, cur) {
			continue
		}
		next.UpdatedAt = timestamppb.Now()
		if err := c.alerts.store.TxPut(tx, next); err != nil {
			return err
		}
	}
	for _, a := range want {
		a.ActiveAt = timestamppb.Now()
		a.UpdatedAt = a.ActiveAt
		if err := c.alerts.store.TxPut(tx, a); err != nil {
			return err
		}
	}
	return nil
}

// syncAlertsOf works out the alerts of cl, read in tx, against its stored
// snapshot: for a change of its quotas or default threshold.
func (c *Controller) syncAlertsOf(tx *store.Tx, cl *edgeproto.Cloudlet) error {
	info, _, err := c.cloudlets.info.TxGet(tx, cl.GetKeyString())
	if err != nil {
		return err
	}
	return c.syncAlerts(tx, cl, info.GetResourcesSnapshot())
}

// dropAlerts deletes the alerts of cl in tx, as it is removed: an alert
// exists only for a quota the cloudlet has (a change of its quotas works
// its alerts out again), so deleting those of its quotas deletes all.
func (c *Controller) dropAlerts(tx *store.Tx, cl *edgeproto.Cloudlet) {
	for _, q := range cl.GetResourceQuotas() {
		c.alerts.store.TxDelete(tx, (&edgeproto.Alert{Key: &edgeproto.AlertKey{CloudletKey: cl.GetKey(), Resource: q.GetName()}}).GetKeyString())
	}
}

type alertService struct {
	edgeproto.UnimplementedAlertServiceServer
	c *Controller
}

func (s *alertService) ShowAlerts(req *edgeproto.ShowAlertsRequest, stream grpc.ServerStreamingServer[edgeproto.ShowAlertsResponse]) error {
	return showObjects(stream.Context(), s.c, s.c.alerts, req.GetFilter(), func(o *edgeproto.Alert) error {
		return stream.Send(&edgeproto.ShowAlertsResponse{Alert: o})
	})
}

// Alerts returns the active alerts, for the status page.
func (c *Controller) Alerts(ctx context.Context) ([]*edgeproto.Alert, error) {
	return c.alerts.list(ctx, c)
}

// alertCollector exposes the active alerts as the gauge
// edgekit_controller_alerts_active (1 per active alert, labelled like
// Prometheus alerts are: alertname, organization, cloudlet, resource) and
// their usage in percent of the quota, read from the alerts' cache at
// scrape time.
type alertCollector struct {
	active, usage *prometheus.Desc
	list          func(ctx context.Context) ([]*edgeproto.Alert, error)
}

func newAlertCollector(list func(ctx context.Context) ([]*edgeproto.Alert, error)) *alertCollector {
	labels := []string{"alertname", "organization", "cloudlet", "resource"}
	return &alertCollector{
		active: prometheus.NewDesc("edgekit_controller_alerts_active",
			"Active alerts the controller raised (1 each): a cloudlet's use of a resource at or above its quota's alert threshold.", labels, nil),
		usage: prometheus.NewDesc("edgekit_controller_alert_usage_percent",
			"Use of the resource of each active alert, in percent of its quota.", labels, nil),
		list: list,
	}
}

func (a *alertCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- a.active
	ch <- a.usage
}

func (a *alertCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	alerts, err := a.list(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(a.active, err)
		return
	}
	for _, al := range alerts {
		lv := []string{al.GetName(), al.GetKey().GetCloudletKey().GetOrganization(), al.GetKey().GetCloudletKey().GetName(), al.GetKey().GetResource()}
		ch <- prometheus.MustNewConstMetric(a.active, prometheus.GaugeValue, 1, lv...)
		ch <- prometheus.MustNewConstMetric(a.usage, prometheus.GaugeValue, float64(al.GetUsagePercent()), lv...)
	}
}

// cloudletInfoApplied works out the alerts of cl when a report carries its
// resources snapshot.
func (c *Controller) cloudletInfoApplied(tx *store.Tx, cl *edgeproto.Cloudlet, info *edgeproto.CloudletInfo, fm *fieldmap.FieldMap) error {
	if !fm.HasOrHasChild(edgeproto.CloudletInfoFieldResourcesSnapshot) {
		return nil
	}
	return c.syncAlerts(tx, cl, info.GetResourcesSnapshot())
}
