package controller

import (
	"fmt"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/internal/store"
)

// Admission of a ClusterInst against its cloudlet's quotas.
//
// A cluster create is refused, in the create's own transaction, when what
// the cluster asks for does not fit a quota of its cloudlet
// (Cloudlet.resource_quotas, value > 0) next to what the cloudlet uses:
//
//	free = quota - used - pending
//
//   - used is the resource's used amount in the cloudlet's last resources
//     snapshot (CloudletInfo.resources_snapshot; 0 before the first);
//   - pending is what the cloudlet's other ClusterInsts in the store ask
//     for, counting only those the snapshot does not list in
//     cluster_insts: the snapshot's used already holds the ones it lists,
//     so listing decides, and nothing is counted twice. A cluster is
//     pending from its create request until a snapshot lists it,
//     whatever its state (CREATE_REQUESTED, CREATING, READY before the
//     refresh, ...), except CREATE_ERROR (the engine undid the create) and
//     DELETE_DONE. A deleted cluster still listed by the snapshot stays in
//     used until the next snapshot: freeing lags, admitting never runs
//     ahead.
//
// What a cluster asks for: its node pools (num_nodes times each node's
// vcpus, ram_mb and disk_gb) or, without pools, its Flavor's vcpus, ram_mb
// and disk_gb; and one external address with ip_access DEDICATED.
// Resource names are those of quotas and snapshots: "vCPUs", "RAM" (MB),
// "Disk" (GB), "External IPs".
//
// The check is atomic: the transaction lists the cloudlet's dependents
// (the refs every cluster create on the cloudlet writes, see refs.go) and
// reads the cloudlet and its CloudletInfo, so two creates on one cloudlet
// racing for the last vCPUs conflict and the second one runs again and
// sees the first.

// Resource names of quotas and snapshots that admission computes demand
// for.
const (
	ResourceVCPUs       = "vCPUs"
	ResourceRAM         = "RAM"
	ResourceDisk        = "Disk"
	ResourceExternalIPs = "External IPs"
)

var resourceUnits = map[string]string{ResourceRAM: "MB", ResourceDisk: "GB"}

// demand is an amount per resource name.
type demand map[string]uint64

// clusterDemand is what ci asks of its cloudlet, read in tx.
func (c *Controller) clusterDemand(tx *store.Tx, ci *edgeproto.ClusterInst) (demand, error) {
	d := demand{}
	if len(ci.GetNodePools()) > 0 {
		for _, np := range ci.NodePools {
			n := uint64(np.GetNumNodes())
			d[ResourceVCPUs] += n * np.GetNodeResources().GetVcpus()
			d[ResourceRAM] += n * np.GetNodeResources().GetRamMb()
			d[ResourceDisk] += n * np.GetNodeResources().GetDiskGb()
		}
	} else if ci.GetFlavorName() != "" {
		key := (&edgeproto.Flavor{Key: &edgeproto.FlavorKey{Name: ci.FlavorName}}).GetKeyString()
		f, found, err := c.flavors.store.TxGet(tx, key)
		if err != nil {
			return nil, err
		}
		if found {
			d[ResourceVCPUs] += f.Vcpus
			d[ResourceRAM] += f.RamMb
			d[ResourceDisk] += f.DiskGb
		}
	}
	if ci.GetIpAccess() == edgeproto.IpAccess_IP_ACCESS_DEDICATED {
		d[ResourceExternalIPs]++
	}
	return d, nil
}

// admitCluster refuses ci, with a FailedPrecondition naming the resource,
// what is asked and what is free, when it does not fit the quotas of its
// cloudlet cl (see the rule above). It runs in ci's create transaction.
func (c *Controller) admitCluster(tx *store.Tx, cl *edgeproto.Cloudlet, ci *edgeproto.ClusterInst) error {
	var quotas []*edgeproto.ResourceQuota
	for _, q := range cl.GetResourceQuotas() {
		if q.GetValue() > 0 {
			quotas = append(quotas, q)
		}
	}
	if len(quotas) == 0 {
		return nil
	}
	want, err := c.clusterDemand(tx, ci)
	if err != nil {
		return err
	}
	asks := false
	for _, q := range quotas {
		asks = asks || want[q.Name] > 0
	}
	if !asks {
		return nil
	}
	info, _, err := c.cloudlets.info.TxGet(tx, cl.GetKeyString())
	if err != nil {
		return err
	}
	snap := info.GetResourcesSnapshot()
	used := demand{}
	for _, r := range snap.GetInfo() {
		used[r.GetName()] = r.GetUsed()
	}
	listed := map[string]bool{}
	for _, k := range snap.GetClusterInsts() {
		listed[(&edgeproto.ClusterInst{Key: k}).GetKeyString()] = true
	}
	pending, err := c.pendingClusters(tx, cl, ci, listed)
	if err != nil {
		return err
	}
	for _, q := range quotas {
		asked := want[q.Name]
		if asked == 0 {
			continue
		}
		taken := used[q.Name] + pending[q.Name]
		var free uint64
		if q.Value > taken {
			free = q.Value - taken
		}
		if asked > free {
			u := ""
			if units := resourceUnits[q.Name]; units != "" {
				u = " " + units
			}
			return preconditionf("ClusterInst %s does not fit Cloudlet %s: %s asked %d%s, free %d%s (quota %d%s, used %d%s, being created %d%s)",
				ci.GetKeyString(), cl.GetKeyString(), q.Name, asked, u, free, u, q.Value, u, used[q.Name], u, pending[q.Name], u)
		}
	}
	return nil
}

// pendingClusters sums what the ClusterInsts of cl ask for that the
// snapshot does not list (listed, by key string), leaving out self. It
// lists the cloudlet's dependents in tx, so a cluster created on cl
// meanwhile makes the transaction run again.
func (c *Controller) pendingClusters(tx *store.Tx, cl *edgeproto.Cloudlet, self *edgeproto.ClusterInst, listed map[string]bool) (demand, error) {
	kvs, err := tx.List(c.refPrefix(c.cloudlets.refOf(cl)))
	if err != nil {
		return nil, err
	}
	prefix := c.clusters.name + " "
	out := demand{}
	for _, kv := range kvs {
		v := string(kv.Value)
		if len(v) <= len(prefix) || v[:len(prefix)] != prefix {
			continue
		}
		key := v[len(prefix):]
		if key == self.GetKeyString() || listed[key] {
			continue
		}
		other, found, err := c.clusters.store.TxGet(tx, key)
		if err != nil {
			return nil, err
		}
		if !found {
			continue
		}
		switch other.GetState() {
		case edgeproto.TrackedState_TRACKED_STATE_CREATE_ERROR, edgeproto.TrackedState_TRACKED_STATE_DELETE_DONE:
			continue
		}
		d, err := c.clusterDemand(tx, other)
		if err != nil {
			return nil, fmt.Errorf("demand of ClusterInst %s: %w", key, err)
		}
		for r, v := range d {
			out[r] += v
		}
	}
	return out, nil
}
