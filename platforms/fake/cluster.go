package fake

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
)

// MissingError says that an object an operation needs does not exist on
// the fake. It matches executor.ErrNotFound.
type MissingError struct {
	What, Key string
}

// Error names the object.
func (e *MissingError) Error() string {
	return fmt.Sprintf("fake: %s %s does not exist on the platform", e.What, e.Key)
}

// Is matches executor.ErrNotFound.
func (e *MissingError) Is(target error) bool { return target == executor.ErrNotFound }

// CreateCluster implements executor.ClusterPlatform.
func (p *Platform) CreateCluster(ctx context.Context, c *edgeproto.Cloudlet, ci *edgeproto.ClusterInst, res executor.Reservations, pr executor.Progress) error {
	key := executor.KeyString(ci)
	if err := p.enter(ctx, OpCreateCluster, key); err != nil {
		return err
	}
	ck := executor.KeyString(c.GetKey())
	owner := executor.OwnerOf(ci)
	p.mu.Lock()
	if rec, ok := p.clusters[key]; ok {
		p.statsOf(key).Adopted++
		subnet, creating := rec.subnet, rec.creating
		ci.Resources = rec.obj.Resources.Clone()
		p.mu.Unlock()
		pr.Step("Adopting existing cluster")
		// Make sure the subnet is still held (a crash may have lost it).
		if err := res.Update(ctx, ck, func(set executor.ReservationSet) error {
			return set.Reserve(executor.ReserveSubnet, subnet, owner)
		}); err != nil {
			return fmt.Errorf("fake: cluster %s: %w", key, err)
		}
		if creating {
			pr.Step("Finishing an interrupted create")
			ci.Resources = clusterResources(ci, subnet)
			p.mu.Lock()
			rec.obj, rec.creating = ci.Clone(), false
			p.mu.Unlock()
		}
		return p.fault(OpCreateCluster, key)
	}
	want, err := p.clusterUsage(ci)
	if err == nil {
		err = p.checkFitLocked(c, key, want)
	}
	if err != nil {
		p.mu.Unlock()
		return err
	}
	// Record the cluster before reserving so that concurrent creates on
	// the same cloudlet count it; remove it again if reserving fails.
	rec := &clusterRec{cloudlet: ck, usage: want, obj: ci.Clone(), creating: true}
	p.clusters[key] = rec
	p.mu.Unlock()

	pr.Step("Reserving subnet")
	var subnet string
	err = res.Update(ctx, ck, func(set executor.ReservationSet) error {
		subnet = ""
		if held := set.Values(executor.ReserveSubnet, owner); len(held) > 0 {
			subnet = held[0]
			return nil
		}
		for i := range subnetCount {
			v := subnetName(i)
			if set.Owner(executor.ReserveSubnet, v) == "" {
				subnet = v
				return set.Reserve(executor.ReserveSubnet, v, owner)
			}
		}
		return fmt.Errorf("fake: no free subnet on cloudlet %s: %w", ck, executor.ErrInsufficientResources)
	})
	if err != nil {
		p.mu.Lock()
		delete(p.clusters, key)
		p.mu.Unlock()
		return err
	}
	p.mu.Lock()
	rec.subnet = subnet
	p.mu.Unlock()
	if err := p.faultAt(OpCreateCluster, key, midway); err != nil {
		return err // crashed half way: the record stays CREATING
	}
	pr.Step("Creating nodes")
	ci.Resources = clusterResources(ci, subnet)
	p.mu.Lock()
	rec.obj, rec.creating = ci.Clone(), false
	p.statsOf(key).Created++
	p.mu.Unlock()
	pr.Step("Cluster ready")
	return p.fault(OpCreateCluster, key)
}

// UpdateCluster implements executor.ClusterPlatform.
func (p *Platform) UpdateCluster(ctx context.Context, c *edgeproto.Cloudlet, ci *edgeproto.ClusterInst, _ executor.Reservations, pr executor.Progress) error {
	key := executor.KeyString(ci)
	if err := p.enter(ctx, OpUpdateCluster, key); err != nil {
		return err
	}
	p.mu.Lock()
	rec, ok := p.clusters[key]
	if !ok {
		p.mu.Unlock()
		return &MissingError{What: "cluster", Key: key}
	}
	want, err := p.clusterUsage(ci)
	if err == nil {
		err = p.checkFitLocked(c, key, want)
	}
	if err != nil {
		p.mu.Unlock()
		return err
	}
	rec.usage = want
	ci.Resources = clusterResources(ci, rec.subnet)
	rec.obj = ci.Clone()
	p.statsOf(key).Updated++
	p.mu.Unlock()
	pr.Step("Resized node pools")
	return p.fault(OpUpdateCluster, key)
}

// DeleteCluster implements executor.ClusterPlatform.
func (p *Platform) DeleteCluster(ctx context.Context, c *edgeproto.Cloudlet, ci *edgeproto.ClusterInst, res executor.Reservations, pr executor.Progress) error {
	key := executor.KeyString(ci)
	if err := p.enter(ctx, OpDeleteCluster, key); err != nil {
		return err
	}
	ck := executor.KeyString(c.GetKey())
	if ck == "" {
		ck = executor.KeyString(ci.GetCloudletKey())
	}
	p.mu.Lock()
	rec, ok := p.clusters[key]
	if ok {
		ck = rec.cloudlet
	}
	p.mu.Unlock()
	pr.Step("Releasing subnet")
	owner := executor.OwnerOf(ci)
	if err := res.Update(ctx, ck, func(set executor.ReservationSet) error {
		set.Release("", owner)
		return nil
	}); err != nil {
		return fmt.Errorf("fake: cluster %s: %w", key, err)
	}
	p.mu.Lock()
	if _, ok := p.clusters[key]; ok {
		delete(p.clusters, key)
		p.statsOf(key).Deleted++
	} else {
		p.statsOf(key).DeletedAbsent++
	}
	p.mu.Unlock()
	pr.Step("Cluster deleted")
	return p.fault(OpDeleteCluster, key)
}

// clusterResources describes the fake machines of a cluster.
func clusterResources(ci *edgeproto.ClusterInst, subnet string) *edgeproto.InfraResources {
	ir := &edgeproto.InfraResources{}
	base := strings.TrimSuffix(subnet, ".0/24") // "10.101.3.0/24" -> "10.101.3"
	add := func(pool, flavor string, n uint32) {
		for i := range n {
			idx := len(ir.Vms) + 1
			ir.Vms = append(ir.Vms, &edgeproto.VmInfo{
				Name:        ci.GetKey().GetName() + "-" + pool + "-" + strconv.Itoa(int(i)+1),
				Type:        "cluster-node",
				Status:      "ACTIVE",
				InfraFlavor: flavor,
				Ipaddresses: []*edgeproto.IpAddr{{InternalIp: base + "." + strconv.Itoa(idx+1)}},
			})
		}
	}
	if len(ci.NodePools) > 0 {
		for _, np := range ci.NodePools {
			add(np.Name, np.GetNodeResources().GetInfraNodeFlavor(), np.NumNodes)
		}
	} else {
		add("node", ci.FlavorName, 1)
	}
	return ir
}

// subnetCount is how many /24 subnets a cloudlet has: 10.100.0.0/24 to
// 10.163.255.0/24.
const subnetCount = 64 * 256

var subnetNames = sync.OnceValue(func() []string {
	names := make([]string, subnetCount)
	for i := range names {
		names[i] = "10." + strconv.Itoa(100+i/256) + "." + strconv.Itoa(i%256) + ".0/24"
	}
	return names
})

func subnetName(i int) string { return subnetNames()[i] }

func formatUint(v uint64) string { return strconv.FormatUint(v, 10) }
