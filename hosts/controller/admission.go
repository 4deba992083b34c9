package controller

import (
	"fmt"
	"strings"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/internal/store"
)

// Admission of a ClusterInst or an AppInst against its cloudlet's quotas.
//
// A cluster create (or the create of an instance of a VM App, see
// admitAppInst) is refused, in the create's own transaction, when what
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
// The same holds for the instances of VM Apps (deployment "vm"): pending
// counts those the snapshot does not list in vm_app_insts, and a cluster
// create counts them as an instance create counts the clusters.
//
// What a cluster asks for: its node pools (num_nodes times each node's
// vcpus, ram_mb and disk_gb) or, without pools, its Flavor's vcpus, ram_mb
// and disk_gb; and one external address with ip_access DEDICATED. What a
// VM instance asks for: its Flavor's vcpus, ram_mb and disk_gb.
// Resource names are those of quotas and snapshots: "vCPUs", "RAM" (MB),
// "Disk" (GB), "External IPs".
//
// The check is atomic: the transaction lists the cloudlet's dependents
// and each of its clusters' (the refs every cluster and instance create
// writes, see refs.go) and
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
	if len(quotasOf(cl)) == 0 {
		return nil
	}
	want, err := c.clusterDemand(tx, ci)
	if err != nil {
		return err
	}
	return c.admit(tx, cl, c.clusters.refOf(ci), want)
}

// admitAppInst refuses ai, an instance of app, like admitCluster when it
// does not fit the quotas of its cloudlet cl. Only an instance of an App
// with deployment "vm" asks anything of the cloudlet (its flavor's vcpus,
// ram_mb and disk_gb: the machine the platform starts for it); the
// instances of other deployments run inside their cluster, whose
// resources were admitted with the cluster. It runs in ai's create
// transaction, after ai.Flavor was completed from the App's default.
func (c *Controller) admitAppInst(tx *store.Tx, cl *edgeproto.Cloudlet, app *edgeproto.App, ai *edgeproto.AppInst) error {
	if len(quotasOf(cl)) == 0 {
		return nil
	}
	want, err := c.appInstDemand(tx, app, ai)
	if err != nil {
		return err
	}
	return c.admit(tx, cl, c.appInsts.refOf(ai), want)
}

// DeploymentVM is the App deployment whose instances are virtual machines
// of the cloudlet, counted against its quotas.
const DeploymentVM = "vm"

// appInstDemand is what ai, an instance of app, asks of its cloudlet, read
// in tx: nothing unless app is a VM deployment.
func (c *Controller) appInstDemand(tx *store.Tx, app *edgeproto.App, ai *edgeproto.AppInst) (demand, error) {
	d := demand{}
	if app.GetDeployment() != DeploymentVM || ai.GetFlavor() == "" {
		return d, nil
	}
	key := (&edgeproto.Flavor{Key: &edgeproto.FlavorKey{Name: ai.Flavor}}).GetKeyString()
	f, found, err := c.flavors.store.TxGet(tx, key)
	if err != nil || !found {
		return d, err
	}
	d[ResourceVCPUs] += f.Vcpus
	d[ResourceRAM] += f.RamMb
	d[ResourceDisk] += f.DiskGb
	return d, nil
}

// quotasOf returns the quotas of cl that limit something (value > 0).
func quotasOf(cl *edgeproto.Cloudlet) []*edgeproto.ResourceQuota {
	var quotas []*edgeproto.ResourceQuota
	for _, q := range cl.GetResourceQuotas() {
		if q.GetValue() > 0 {
			quotas = append(quotas, q)
		}
	}
	return quotas
}

// admit refuses want, what the object self about to be created on cl
// asks, when it does not fit a quota of cl next to the snapshot's used and
// what is being created (see the rule above).
func (c *Controller) admit(tx *store.Tx, cl *edgeproto.Cloudlet, self ref, want demand) error {
	quotas := quotasOf(cl)
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
	listed := map[ref]bool{}
	for _, k := range snap.GetClusterInsts() {
		listed[c.clusters.refOf(&edgeproto.ClusterInst{Key: k})] = true
	}
	for _, k := range snap.GetVmAppInsts() {
		listed[c.appInsts.refOf(&edgeproto.AppInst{Key: k})] = true
	}
	pending, err := c.pending(tx, cl, self, listed)
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
			return preconditionf("%s %s does not fit Cloudlet %s: %s asked %d%s, free %d%s (quota %d%s, used %d%s, being created %d%s)",
				self.kind, self.key, cl.GetKeyString(), q.Name, asked, u, free, u, q.Value, u, used[q.Name], u, pending[q.Name], u)
		}
	}
	return nil
}

// pending sums what the ClusterInsts of cl, and the VM AppInsts on them,
// ask for that the snapshot does not list (listed), leaving out self. It
// lists the cloudlet's dependents and each cluster's in tx, so a cluster
// or an instance created on cl meanwhile makes the transaction run again.
func (c *Controller) pending(tx *store.Tx, cl *edgeproto.Cloudlet, self ref, listed map[ref]bool) (demand, error) {
	out := demand{}
	add := func(d demand) {
		for r, v := range d {
			out[r] += v
		}
	}
	skip := func(st edgeproto.TrackedState) bool {
		return st == edgeproto.TrackedState_TRACKED_STATE_CREATE_ERROR || st == edgeproto.TrackedState_TRACKED_STATE_DELETE_DONE
	}
	clusters, err := c.dependents(tx, c.cloudlets.refOf(cl), c.clusters.name)
	if err != nil {
		return nil, err
	}
	for _, cr := range clusters {
		insts, err := c.dependents(tx, cr, c.appInsts.name)
		if err != nil {
			return nil, err
		}
		for _, ir := range insts {
			if ir == self || listed[ir] {
				continue
			}
			ai, found, err := c.appInsts.store.TxGet(tx, ir.key)
			if err != nil {
				return nil, err
			}
			if !found || skip(ai.GetState()) {
				continue
			}
			app, found, err := c.apps.store.TxGet(tx, (&edgeproto.App{Key: ai.GetAppKey()}).GetKeyString())
			if err != nil {
				return nil, err
			}
			if !found {
				continue
			}
			d, err := c.appInstDemand(tx, app, ai)
			if err != nil {
				return nil, fmt.Errorf("demand of AppInst %s: %w", ir.key, err)
			}
			add(d)
		}
		if cr == self || listed[cr] {
			continue
		}
		other, found, err := c.clusters.store.TxGet(tx, cr.key)
		if err != nil {
			return nil, err
		}
		if !found || skip(other.GetState()) {
			continue
		}
		d, err := c.clusterDemand(tx, other)
		if err != nil {
			return nil, fmt.Errorf("demand of ClusterInst %s: %w", cr.key, err)
		}
		add(d)
	}
	return out, nil
}

// dependents lists in tx the objects of kind childKind that depend on
// parent (see refs.go).
func (c *Controller) dependents(tx *store.Tx, parent ref, childKind string) ([]ref, error) {
	kvs, err := tx.List(c.refPrefix(parent))
	if err != nil {
		return nil, err
	}
	prefix := childKind + " "
	var out []ref
	for _, kv := range kvs {
		if key, ok := strings.CutPrefix(string(kv.Value), prefix); ok && key != "" {
			out = append(out, ref{kind: childKind, key: key})
		}
	}
	return out, nil
}
