package executor

import (
	"context"

	"github.com/edgekit/edgekit/edgeproto"
)

// Inventory is what a platform finds on a cloudlet when asked, whatever the
// engine or its host remember: the input of start-up reconciliation.
//
// Every entry carries at least its key (and, for an AppInst, its
// ClusterKey and CloudletKey); platforms fill what else they know
// (Resources of a cluster; AppKey, RuntimeInfo, Uri and MappedPorts of an
// instance). State is READY for what the platform finished creating and
// CREATING for what it started and did not finish (a create interrupted by
// a crash: recorded intent, partial directories, a process not yet
// healthy); the engine resolves the latter by adopting or undoing it.
type Inventory struct {
	Clusters []*edgeproto.ClusterInst
	AppInsts []*edgeproto.AppInst
}

// InventoryPlatform is the listing role of a platform: it reports what
// exists on a cloudlet, so that an engine restarted after a crash or an
// outage converges to what its host wants. ListInsts on a cloudlet the
// platform never initialised returns an empty inventory, not an error; an
// error means the platform could not tell (an unreadable record, an
// unreachable back end), and the engine then deletes nothing.
type InventoryPlatform interface {
	ListInsts(ctx context.Context, cloudlet *edgeproto.Cloudlet) (*Inventory, error)
}
