package controller

import (
	"context"
	"fmt"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/hosts/controller/ui"
	"github.com/edgekit/edgekit/internal/store"
)

// alertUISource follows the alerts through a watch-fed cache and emits one
// row per active alert (kind Alert, state ACTIVE, where: the cloudlet,
// message: the use against the threshold), seen by the cloudlet's
// organization and admins; a cleared alert's row is deleted.
func (c *Controller) alertUISource() ui.Source {
	return ui.SourceFunc(func(ctx context.Context, out ui.Emitter) error {
		cache := store.NewCache(c.alerts.store, store.OnEvent(func(ev store.Event[*edgeproto.Alert]) {
			switch ev.Type {
			case store.EventPut:
				out.Put(alertRow(ev.Key, ev.Object))
			case store.EventDelete:
				out.Delete(c.alerts.name, ev.Key)
			}
		}))
		return cache.Start(ctx)
	})
}

func alertRow(key string, a *edgeproto.Alert) ui.Row {
	cloudlet := cloudletKeyString(a.GetKey().GetCloudletKey())
	row := ui.Row{Kind: "Alert", Key: key, Org: alertOwner(a), State: "ACTIVE",
		Name: a.GetKey().GetResource(), Where: cloudlet, Cloudlet: cloudlet,
		Links:  []ui.Link{{Rel: "cloudlet", Kind: "Cloudlet", Key: cloudlet}},
		Detail: &ui.Detail{Fields: redactedJSON(a)},
		Message: fmt.Sprintf("%s: %s at %d%% of its quota (%d of %d%s; threshold %d%%)", a.GetName(), a.GetKey().GetResource(),
			a.GetUsagePercent(), a.GetUsed(), a.GetQuota(), unitSuffix(a.GetUnits()), a.GetThreshold())}
	if t := a.GetUpdatedAt(); t != nil {
		row.Updated = t.AsTime()
	}
	return row
}
