package fake

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
)

// InitCloudlet implements executor.CloudletPlatform.
func (p *Platform) InitCloudlet(ctx context.Context, c *edgeproto.Cloudlet, _ executor.Reservations, pr executor.Progress) error {
	key := executor.KeyString(c.GetKey())
	if err := p.enter(ctx, OpInitCloudlet, key); err != nil {
		return err
	}
	pr.Step("Checking infrastructure access")
	p.mu.Lock()
	if _, ok := p.cloudlets[key]; ok {
		p.statsOf(key).Adopted++
	} else {
		p.cloudlets[key] = &cloudletRec{}
		p.statsOf(key).Created++
	}
	p.mu.Unlock()
	p.log.LogAttrs(ctx, slog.LevelDebug, "fake: cloudlet initialised", slog.String("cloudlet", key))
	return p.fault(OpInitCloudlet, key)
}

// GatherCloudletInfo implements executor.CloudletPlatform.
func (p *Platform) GatherCloudletInfo(ctx context.Context, c *edgeproto.Cloudlet, info *edgeproto.CloudletInfo) error {
	key := executor.KeyString(c.GetKey())
	if err := p.enter(ctx, OpGatherCloudletInfo, key); err != nil {
		return err
	}
	p.mu.Lock()
	for _, f := range p.flavors {
		info.Flavors = append(info.Flavors, f.Clone())
	}
	info.ResourcesSnapshot = p.snapshotLocked(c)
	node := &edgeproto.NodeInfo{Name: "fake-node-1", Roles: []string{"control-plane", "worker"},
		Capacity: map[string]string{}, Allocatable: map[string]string{}}
	for _, r := range resourceOrder {
		v := formatUint(p.capacity[r])
		node.Capacity[r], node.Allocatable[r] = v, v
	}
	p.mu.Unlock()
	info.NodeInfos = []*edgeproto.NodeInfo{node}
	info.Properties = map[string]string{"platform": Name}
	return p.fault(OpGatherCloudletInfo, key)
}

// CleanupCloudlet implements executor.CloudletPlatform.
func (p *Platform) CleanupCloudlet(ctx context.Context, c *edgeproto.Cloudlet, pr executor.Progress) error {
	key := executor.KeyString(c.GetKey())
	if err := p.enter(ctx, OpCleanupCloudlet, key); err != nil {
		return err
	}
	pr.Step("Removing cloudlet")
	p.mu.Lock()
	if _, ok := p.cloudlets[key]; ok {
		delete(p.cloudlets, key)
		p.statsOf(key).Deleted++
	} else {
		p.statsOf(key).DeletedAbsent++
	}
	p.mu.Unlock()
	return p.fault(OpCleanupCloudlet, key)
}

// UpdateTrustPolicy implements executor.TrustPolicyPlatform.
func (p *Platform) UpdateTrustPolicy(ctx context.Context, c *edgeproto.Cloudlet, policy *edgeproto.TrustPolicy) error {
	key := executor.KeyString(c.GetKey())
	if err := p.enter(ctx, OpUpdateTrustPolicy, key); err != nil {
		return err
	}
	p.mu.Lock()
	rec := p.cloudlets[key]
	if rec == nil {
		rec = &cloudletRec{}
		p.cloudlets[key] = rec
	}
	rec.policy = policy.Clone()
	p.mu.Unlock()
	return p.fault(OpUpdateTrustPolicy, key)
}

// UpdateTrustPolicyException implements executor.TrustPolicyPlatform.
func (p *Platform) UpdateTrustPolicyException(ctx context.Context, _ *edgeproto.Cloudlet, exc *edgeproto.TrustPolicyException, clusterKey *edgeproto.ClusterKey, inst *edgeproto.AppInstKey) error {
	key := executor.KeyString(exc.GetKey())
	if err := p.enter(ctx, OpUpdateTrustPolicyException, key); err != nil {
		return err
	}
	if !p.features.SupportsTrustPolicy {
		return fmt.Errorf("fake: trust policy exception %s: trust policies are turned off (Options.NoTrustPolicy): %w", key, executor.ErrUnsupported)
	}
	ck := executor.KeyString(clusterKey)
	p.mu.Lock()
	_, ok := p.clusters[ck]
	if ok {
		p.tpes[tpeKey{exc: key, cluster: ck, inst: executor.KeyString(inst)}] = exc.Clone()
		p.statsOf(key).Updated++
	}
	p.mu.Unlock()
	if !ok {
		return &MissingError{What: "cluster", Key: ck}
	}
	return p.fault(OpUpdateTrustPolicyException, key)
}

// DeleteTrustPolicyException implements executor.TrustPolicyPlatform.
func (p *Platform) DeleteTrustPolicyException(ctx context.Context, _ *edgeproto.Cloudlet, key *edgeproto.TrustPolicyExceptionKey, clusterKey *edgeproto.ClusterKey, inst *edgeproto.AppInstKey) error {
	k := executor.KeyString(key)
	if err := p.enter(ctx, OpDeleteTrustPolicyException, k); err != nil {
		return err
	}
	p.mu.Lock()
	delete(p.tpes, tpeKey{exc: k, cluster: executor.KeyString(clusterKey), inst: executor.KeyString(inst)})
	p.mu.Unlock()
	return p.fault(OpDeleteTrustPolicyException, k)
}
