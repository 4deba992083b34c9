package allocator

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/internal/store"
)

// maxRestartFailures is how many restarts in a row may fail before a
// service's allocation fails.
const maxRestartFailures = 3

// provisionService deploys a Service: the blueprint's App (rendered once
// and kept), a cluster of its own, and an instance of the App in it; once
// the instance runs, the buyer gets the credentials rendered for it. A
// service that stopped is restarted, up to MaxRestarts times.
func (a *Allocator) provisionService(ctx context.Context, al *fluidos.Allocation, c *fluidos.Contract) error {
	sc := c.GetConfiguration().GetService()
	if al.GetStatus().GetState() == fluidos.AllocationState_ALLOCATION_STATE_INACTIVE {
		if _, err := a.phase(ctx, al.GetId(), fluidos.AllocationState_ALLOCATION_STATE_PROVISIONING,
			"rendering blueprint "+c.GetFlavor().GetService().GetBlueprintId()); err != nil {
			return err
		}
	}
	app, err := a.serviceApp(ctx, al, c, sc)
	if err != nil {
		return err
	}
	cluster := a.ownCluster(al, nil)
	if _, err := ensureReady(ctx, a, a.clusterKind(), cluster); err != nil {
		return err
	}
	if s := al.GetStatus().GetState(); s != fluidos.AllocationState_ALLOCATION_STATE_ACTIVE && s != fluidos.AllocationState_ALLOCATION_STATE_DEGRADED {
		if _, err := a.phase(ctx, al.GetId(), fluidos.AllocationState_ALLOCATION_STATE_RESOURCE_CREATION, "starting the service"); err != nil {
			return err
		}
	}
	want := &edgeproto.AppInst{
		Key:         &edgeproto.AppInstKey{Organization: al.GetBuyer().GetNodeId(), Name: al.GetId()},
		AppKey:      app.GetKey(),
		ClusterKey:  cluster.GetKey(),
		CloudletKey: a.cloudlet.GetKey(),
		PowerState:  edgeproto.PowerState_POWER_STATE_POWER_ON,
	}
	for range 2 { // a restart, then a look at its outcome
		inst, err := ensureReady(ctx, a, a.instKind(), want)
		if err != nil {
			return err
		}
		info, _, err := a.objs.instInfos.Get(ctx, inst.GetKeyString())
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		host, port := endpointOf(inst, info)
		manifest := app.GetDeploymentManifest() != ""
		var why string
		if manifest {
			why = manifestUnhealthy(app, inst, info)
		} else {
			why = a.unhealthy(ctx, inst, info, host, port)
		}
		if why == "" {
			a.mu.Lock()
			delete(a.failures, al.GetId())
			a.mu.Unlock()
			r, err := newRenderer(credentialsBlueprint(c, app), sc, al, a.catalog)
			if err != nil {
				return permanent("%v", err)
			}
			var creds *fluidos.PeeringTargetCredentials
			if manifest {
				if creds, err = r.manifestCredentials(app, info, c.GetFlavor().GetService().GetCategory()); err != nil {
					return err // the platform has not reported it yet
				}
			} else if creds, err = r.credentials(host, port); err != nil {
				return permanent("%v", err)
			}
			if manifest {
				a.shareCredentials(ctx, al, c, creds)
			}
			res := &fluidos.AllocationResources{Cluster: cluster.GetKeyString(), App: app.GetKeyString(), AppInst: inst.GetKeyString()}
			return a.activate(ctx, al, creds, res, "service running at "+creds.GetEndpoint())
		}
		if err := a.restart(ctx, al, inst, why, manifest); err != nil {
			return err
		}
		if al, _, err = a.ledger.Allocations().Get(ctx, al.GetId()); err != nil {
			return err
		}
	}
	return fmt.Errorf("the service of %s is still unhealthy after a restart", al.GetId())
}

// serviceApp returns the App of a service allocation, rendering it from
// its blueprint and storing it the first time.
func (a *Allocator) serviceApp(ctx context.Context, al *fluidos.Allocation, c *fluidos.Contract, sc *fluidos.ServiceConfiguration) (*edgeproto.App, error) {
	key := (&edgeproto.App{Key: &edgeproto.AppKey{Organization: al.GetBuyer().GetNodeId(), Name: al.GetId(), Version: "1"}}).GetKeyString()
	app, _, err := a.objs.apps.Get(ctx, key)
	if err == nil || !errors.Is(err, store.ErrNotFound) {
		return app, err
	}
	bpID := c.GetFlavor().GetService().GetBlueprintId()
	bp, _, err := store.NewKind[*fluidos.ServiceBlueprint](a.cfg.Store).Get(ctx, bpID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, permanent("blueprint %q of the service sold is gone", bpID)
	}
	if err != nil {
		return nil, err
	}
	r, err := newRenderer(bp, sc, al, a.catalog)
	if err != nil {
		return nil, permanent("%v", err)
	}
	if IsManifestBlueprint(bp) {
		if err := a.CheckBlueprint(bp); err != nil {
			return nil, permanent("%v", err)
		}
		app, err = r.manifestApp(al)
	} else {
		app, err = r.app(al)
	}
	if err != nil {
		return nil, permanent("%v", err)
	}
	if _, err := a.objs.apps.Create(ctx, app); err != nil && !errors.Is(err, store.ErrAlreadyExists) {
		return nil, err
	}
	app, _, err = a.objs.apps.Get(ctx, key)
	return app, err
}

// ownCluster is the cluster an allocation makes: in the buyer's
// organization, named after the allocation, sized by pools (none for a
// service's).
func (a *Allocator) ownCluster(al *fluidos.Allocation, pools []*edgeproto.NodePool) *edgeproto.ClusterInst {
	c := clusterKey(al)
	c.CloudletKey = a.cloudlet.GetKey()
	c.Deployment = a.clusterDeployment()
	c.NodePools = pools
	return c
}

// endpointOf is where an instance is reached: its URI and the first port
// the platform gave it.
func endpointOf(inst *edgeproto.AppInst, info *edgeproto.AppInstInfo) (string, int) {
	host := info.GetUri()
	if host == "" {
		host = inst.GetUri()
	}
	port := 0
	if ps := info.GetRuntimeInfo().GetPorts(); len(ps) > 0 {
		port = int(ps[0])
	}
	return host, port
}

// unhealthy says why a service instance is not healthy, or "".
func (a *Allocator) unhealthy(ctx context.Context, inst *edgeproto.AppInst, info *edgeproto.AppInstInfo, host string, port int) string {
	rt := info.GetRuntimeInfo()
	switch {
	case inst.GetState() == edgeproto.TrackedState_TRACKED_STATE_UPDATE_ERROR:
		return "its last restart failed: " + strings.Join(inst.GetErrors(), "; ")
	case len(rt.GetPids()) == 0 && len(rt.GetContainerIds()) == 0:
		return "its process is not running"
	case a.cfg.Probe != nil && port > 0:
		endpoint := fmt.Sprintf("%s:%d", host, port)
		if err := a.cfg.Probe(ctx, endpoint); err != nil {
			return fmt.Sprintf("it does not answer at %s: %v", endpoint, err)
		}
	}
	return ""
}

// manifestUnhealthy says why an instance of an App given as Kubernetes
// manifests is not healthy, or "": the platform reported it ready once
// its Deployments and StatefulSets were available, and at every health
// check reports its runtime again (the Kubernetes platform lists the
// containers of its ready pods only while all its Deployments and
// StatefulSets are available); it is unhealthy when its last restart
// failed or when its runtime lists no running container.
func manifestUnhealthy(app *edgeproto.App, inst *edgeproto.AppInst, info *edgeproto.AppInstInfo) string {
	if inst.GetState() == edgeproto.TrackedState_TRACKED_STATE_UPDATE_ERROR {
		return "its last restart failed: " + strings.Join(inst.GetErrors(), "; ")
	}
	_, workloads, err := manifestShape(app)
	if err != nil {
		return "its manifest does not decode: " + err.Error()
	}
	if workloads && len(info.GetRuntimeInfo().GetContainerIds()) == 0 {
		return "its Deployments and StatefulSets are not all available"
	}
	return ""
}

// restart reports a service DEGRADED and restarts its instance through
// the engine: an update asking for a reboot, or, for an App given as
// manifests (which the platform does not reboot), an update that applies
// them again and waits for them. A service restarted MaxRestarts times
// already, or whose restarts keep failing, fails.
func (a *Allocator) restart(ctx context.Context, al *fluidos.Allocation, inst *edgeproto.AppInst, why string, manifest bool) error {
	if n := al.GetStatus().GetRestarts(); int(n) >= a.cfg.MaxRestarts {
		return permanent("the service became unhealthy after %d restarts: %s", n, why)
	}
	a.log.WarnContext(ctx, "service unhealthy; restarting it", "allocation", al.GetId(), "why", why)
	if _, err := a.setStatus(ctx, al.GetId(), func(cur *fluidos.Allocation) bool {
		if cur.GetReleaseRequested() {
			return false
		}
		cur.Status.State = fluidos.AllocationState_ALLOCATION_STATE_DEGRADED
		cur.Status.Message = "unhealthy: " + why + "; restarting it"
		cur.Status.Restarts++
		return true
	}); err != nil {
		return err
	}
	a.cfg.Metrics.restarted(al.GetFlavorType())
	key := inst.GetKeyString()
	power := edgeproto.PowerState_POWER_STATE_REBOOT_REQUESTED
	if manifest {
		power = edgeproto.PowerState_POWER_STATE_POWER_ON
	}
	if _, _, err := a.objs.insts.Modify(ctx, key, func(cur *edgeproto.AppInst) (bool, error) {
		cur.State, cur.PowerState = edgeproto.TrackedState_TRACKED_STATE_UPDATE_REQUESTED, power
		return true, nil
	}); err != nil {
		return err
	}
	up := inst.Clone()
	up.State, up.PowerState = edgeproto.TrackedState_TRACKED_STATE_UPDATE_REQUESTED, power
	if err := a.run(ctx, key, up); err != nil {
		return err
	}
	cur, _, err := a.objs.insts.Get(ctx, key)
	if err != nil {
		return err
	}
	if cur.GetState() != edgeproto.TrackedState_TRACKED_STATE_UPDATE_ERROR {
		return nil
	}
	a.mu.Lock()
	a.failures[al.GetId()]++
	n := a.failures[al.GetId()]
	a.mu.Unlock()
	cause := strings.Join(cur.GetErrors(), "; ")
	if n >= maxRestartFailures {
		return permanent("restarting the service failed %d times: %s", n, cause)
	}
	return fmt.Errorf("restarting the service failed: %s", cause)
}
