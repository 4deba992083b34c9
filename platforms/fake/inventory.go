package fake

import (
	"context"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
)

var _ executor.InventoryPlatform = (*Platform)(nil)

// ListInsts implements executor.InventoryPlatform: the clusters and
// application instances on the cloudlet, sorted by key. A cluster carries
// its spec as last created or updated and its Resources; an instance its
// keys, power state and runtime info (container id, public ports). Both
// are READY, or CREATING when a create stopped half way (see Fault.Crash).
// The call counts as OpListInsts for faults, latency and pauses (the key
// is the cloudlet's); a failing call returns no inventory.
func (p *Platform) ListInsts(ctx context.Context, c *edgeproto.Cloudlet) (*executor.Inventory, error) {
	ck := executor.KeyString(c.GetKey())
	if err := p.enter(ctx, OpListInsts, ck); err != nil {
		return nil, err
	}
	state := func(creating bool) edgeproto.TrackedState {
		if creating {
			return edgeproto.TrackedState_TRACKED_STATE_CREATING
		}
		return edgeproto.TrackedState_TRACKED_STATE_READY
	}
	inv := &executor.Inventory{}
	p.mu.Lock()
	for _, key := range sortedKeys(p.clusters) {
		rec := p.clusters[key]
		if rec.cloudlet != ck {
			continue
		}
		ci := rec.obj.Clone()
		ci.State, ci.Errors = state(rec.creating), nil
		if ci.CloudletKey == nil {
			ci.CloudletKey = c.GetKey().Clone()
		}
		inv.Clusters = append(inv.Clusters, ci)
	}
	for _, key := range sortedKeys(p.apps) {
		rec := p.apps[key]
		if rec.cloudlet != ck {
			continue
		}
		inst := rec.obj.Clone()
		inst.State, inst.PowerState = state(rec.creating), rec.power
		if inst.CloudletKey == nil {
			inst.CloudletKey = c.GetKey().Clone()
		}
		if !rec.creating {
			inst.RuntimeInfo = runtimeOf(inst, rec)
		}
		inv.AppInsts = append(inv.AppInsts, inst)
	}
	p.mu.Unlock()
	if err := p.fault(OpListInsts, ck); err != nil {
		return nil, err
	}
	return inv, nil
}
