package fake

import (
	"fmt"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
)

// Resource names, as in Cloudlet.resource_quotas and the resources
// snapshot.
const (
	ResourceVCPUs       = "vCPUs"
	ResourceRAM         = "RAM"
	ResourceDisk        = "Disk"
	ResourceExternalIPs = "External IPs"
)

// resourceOrder is the order resources are checked and reported in.
var resourceOrder = []string{ResourceVCPUs, ResourceRAM, ResourceDisk, ResourceExternalIPs}

var resourceUnits = map[string]string{ResourceRAM: "MB", ResourceDisk: "GB"}

// DefaultCapacity is what a cloudlet has when Options.Capacity leaves a
// resource out.
var DefaultCapacity = map[string]uint64{
	ResourceVCPUs:       512,
	ResourceRAM:         2 * 1024 * 1024,
	ResourceDisk:        100000,
	ResourceExternalIPs: 64,
}

// DefaultFlavors are offered when Options.Flavors is empty.
func DefaultFlavors() []*edgeproto.FlavorInfo {
	return []*edgeproto.FlavorInfo{
		{Name: "fake.small", Vcpus: 1, RamMb: 1024, DiskGb: 10},
		{Name: "fake.medium", Vcpus: 2, RamMb: 4096, DiskGb: 40},
		{Name: "fake.large", Vcpus: 8, RamMb: 16384, DiskGb: 160},
	}
}

// usage is an amount per resource.
type usage map[string]uint64

// ResourceError says that an object does not fit in what a cloudlet has
// left of one resource. It matches executor.ErrInsufficientResources.
type ResourceError struct {
	Cloudlet  string
	Resource  string
	Units     string
	Requested uint64
	Available uint64
	// Limit is min(quota, capacity).
	Limit uint64
}

// Error names the resource, the requested and the available amounts.
func (e *ResourceError) Error() string {
	u := ""
	if e.Units != "" {
		u = " " + e.Units
	}
	return fmt.Sprintf("cloudlet %s: %v: %s requested %d%s, available %d%s (limit %d%s)",
		e.Cloudlet, executor.ErrInsufficientResources, e.Resource, e.Requested, u, e.Available, u, e.Limit, u)
}

// Is matches executor.ErrInsufficientResources.
func (e *ResourceError) Is(target error) bool { return target == executor.ErrInsufficientResources }

// clusterUsage is what a cluster uses of its cloudlet.
func (p *Platform) clusterUsage(ci *edgeproto.ClusterInst) (usage, error) {
	u := usage{}
	if len(ci.NodePools) > 0 {
		for _, np := range ci.NodePools {
			n := uint64(np.NumNodes)
			nr := np.NodeResources
			u[ResourceVCPUs] += n * nr.GetVcpus()
			u[ResourceRAM] += n * nr.GetRamMb()
			u[ResourceDisk] += n * nr.GetDiskGb()
		}
	} else if ci.FlavorName != "" {
		f := p.flavor(ci.FlavorName)
		if f == nil {
			return nil, fmt.Errorf("fake: flavor %q of cluster %s: %w", ci.FlavorName, executor.KeyString(ci), executor.ErrNotFound)
		}
		u[ResourceVCPUs] += f.Vcpus
		u[ResourceRAM] += f.RamMb
		u[ResourceDisk] += f.DiskGb
	}
	if ci.IpAccess == edgeproto.IpAccess_IP_ACCESS_DEDICATED {
		u[ResourceExternalIPs]++
	}
	return u, nil
}

func (p *Platform) flavor(name string) *edgeproto.FlavorInfo {
	for _, f := range p.flavors {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// limits returns min(quota, capacity) per resource for a cloudlet.
func (p *Platform) limits(c *edgeproto.Cloudlet) usage {
	l := usage{}
	for _, r := range resourceOrder {
		l[r] = p.capacity[r]
	}
	for _, q := range c.GetResourceQuotas() {
		if cur, ok := l[q.Name]; ok && q.Value > 0 && q.Value < cur {
			l[q.Name] = q.Value
		}
	}
	return l
}

// usedLocked sums what the clusters of a cloudlet use, except the cluster
// with key skip.
func (p *Platform) usedLocked(cloudlet, skip string) usage {
	u := usage{}
	for k, c := range p.clusters {
		if c.cloudlet != cloudlet || k == skip {
			continue
		}
		for r, v := range c.usage {
			u[r] += v
		}
	}
	return u
}

// checkFitLocked returns a *ResourceError when want does not fit next to
// what the other clusters of the cloudlet use.
func (p *Platform) checkFitLocked(c *edgeproto.Cloudlet, skip string, want usage) error {
	ck := executor.KeyString(c.GetKey())
	used := p.usedLocked(ck, skip)
	lim := p.limits(c)
	for _, r := range resourceOrder {
		if want[r] == 0 {
			continue
		}
		var avail uint64
		if lim[r] > used[r] {
			avail = lim[r] - used[r]
		}
		if want[r] > avail {
			return &ResourceError{Cloudlet: ck, Resource: r, Units: resourceUnits[r], Requested: want[r], Available: avail, Limit: lim[r]}
		}
	}
	return nil
}

// snapshotLocked builds the resources snapshot of a cloudlet.
func (p *Platform) snapshotLocked(c *edgeproto.Cloudlet) *edgeproto.InfraResourcesSnapshot {
	ck := executor.KeyString(c.GetKey())
	used := p.usedLocked(ck, "")
	quotas := map[string]*edgeproto.ResourceQuota{}
	for _, q := range c.GetResourceQuotas() {
		quotas[q.Name] = q
	}
	s := &edgeproto.InfraResourcesSnapshot{}
	for _, r := range resourceOrder {
		ir := &edgeproto.InfraResource{Name: r, Used: used[r], Total: p.capacity[r], Units: resourceUnits[r],
			AlertThreshold: c.GetDefaultResourceAlertThreshold()}
		if q := quotas[r]; q != nil {
			ir.Quota = q.Value
			if q.AlertThreshold != 0 {
				ir.AlertThreshold = q.AlertThreshold
			}
		}
		s.Info = append(s.Info, ir)
	}
	for _, k := range sortedKeys(p.clusters) {
		if c := p.clusters[k]; c.cloudlet == ck {
			s.ClusterInsts = append(s.ClusterInsts, c.obj.Key.Clone())
		}
	}
	return s
}
