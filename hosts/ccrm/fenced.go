package ccrm

import (
	"context"
	"fmt"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
)

// fencedPlatform makes no platform call outside a valid claim: once a
// claim is released, handed back or lost with the lease, the operation
// still running under it (cancelled, about to undo a create) does not
// touch the platform again, so it cannot undo what the claim's next
// holder is doing. The calls that go through carry the claim in their
// context (see FenceFrom) for platforms that fence at their back end.
type fencedPlatform struct {
	p executor.Platform
}

var _ executor.Platform = fencedPlatform{}

// fencedInventoryPlatform is a fencedPlatform whose platform lists what it
// has (executor.InventoryPlatform): listing is a read and needs no claim.
type fencedInventoryPlatform struct {
	fencedPlatform
	inv executor.InventoryPlatform
}

var _ executor.InventoryPlatform = fencedInventoryPlatform{}

func (f fencedInventoryPlatform) ListInsts(ctx context.Context, c *edgeproto.Cloudlet) (*executor.Inventory, error) {
	return f.inv.ListInsts(ctx, c)
}

// fence wraps p in a fencedPlatform that keeps p's listing role.
func fence(p executor.Platform) executor.Platform {
	if inv, ok := p.(executor.InventoryPlatform); ok {
		return fencedInventoryPlatform{fencedPlatform: fencedPlatform{p: p}, inv: inv}
	}
	return fencedPlatform{p: p}
}

func check(ctx context.Context, op string) error {
	c, ok := ClaimFrom(ctx)
	if !ok || !c.Valid() {
		return fmt.Errorf("%w: platform call %s not made", ErrNoClaim, op)
	}
	return nil
}

func (f fencedPlatform) Features() executor.Features { return f.p.Features() }

func (f fencedPlatform) InitCloudlet(ctx context.Context, c *edgeproto.Cloudlet, res executor.Reservations, p executor.Progress) error {
	if err := check(ctx, "InitCloudlet"); err != nil {
		return err
	}
	return f.p.InitCloudlet(ctx, c, res, p)
}

func (f fencedPlatform) GatherCloudletInfo(ctx context.Context, c *edgeproto.Cloudlet, info *edgeproto.CloudletInfo) error {
	if err := check(ctx, "GatherCloudletInfo"); err != nil {
		return err
	}
	return f.p.GatherCloudletInfo(ctx, c, info)
}

func (f fencedPlatform) CleanupCloudlet(ctx context.Context, c *edgeproto.Cloudlet, p executor.Progress) error {
	if err := check(ctx, "CleanupCloudlet"); err != nil {
		return err
	}
	return f.p.CleanupCloudlet(ctx, c, p)
}

func (f fencedPlatform) CreateCluster(ctx context.Context, c *edgeproto.Cloudlet, ci *edgeproto.ClusterInst, res executor.Reservations, p executor.Progress) error {
	if err := check(ctx, "CreateCluster"); err != nil {
		return err
	}
	return f.p.CreateCluster(ctx, c, ci, res, p)
}

func (f fencedPlatform) UpdateCluster(ctx context.Context, c *edgeproto.Cloudlet, ci *edgeproto.ClusterInst, res executor.Reservations, p executor.Progress) error {
	if err := check(ctx, "UpdateCluster"); err != nil {
		return err
	}
	return f.p.UpdateCluster(ctx, c, ci, res, p)
}

func (f fencedPlatform) DeleteCluster(ctx context.Context, c *edgeproto.Cloudlet, ci *edgeproto.ClusterInst, res executor.Reservations, p executor.Progress) error {
	if err := check(ctx, "DeleteCluster"); err != nil {
		return err
	}
	return f.p.DeleteCluster(ctx, c, ci, res, p)
}

func (f fencedPlatform) CreateAppInst(ctx context.Context, ci *edgeproto.ClusterInst, app *edgeproto.App, ai *edgeproto.AppInst, res executor.Reservations, p executor.Progress) (*edgeproto.AppInstRuntime, error) {
	if err := check(ctx, "CreateAppInst"); err != nil {
		return nil, err
	}
	return f.p.CreateAppInst(ctx, ci, app, ai, res, p)
}

func (f fencedPlatform) UpdateAppInst(ctx context.Context, ci *edgeproto.ClusterInst, app *edgeproto.App, ai *edgeproto.AppInst, res executor.Reservations, p executor.Progress) (*edgeproto.AppInstRuntime, error) {
	if err := check(ctx, "UpdateAppInst"); err != nil {
		return nil, err
	}
	return f.p.UpdateAppInst(ctx, ci, app, ai, res, p)
}

func (f fencedPlatform) DeleteAppInst(ctx context.Context, ci *edgeproto.ClusterInst, app *edgeproto.App, ai *edgeproto.AppInst, res executor.Reservations, p executor.Progress) error {
	if err := check(ctx, "DeleteAppInst"); err != nil {
		return err
	}
	return f.p.DeleteAppInst(ctx, ci, app, ai, res, p)
}

func (f fencedPlatform) UpdateTrustPolicy(ctx context.Context, c *edgeproto.Cloudlet, policy *edgeproto.TrustPolicy) error {
	if err := check(ctx, "UpdateTrustPolicy"); err != nil {
		return err
	}
	return f.p.UpdateTrustPolicy(ctx, c, policy)
}

func (f fencedPlatform) UpdateTrustPolicyException(ctx context.Context, c *edgeproto.Cloudlet, exc *edgeproto.TrustPolicyException, ck *edgeproto.ClusterKey, inst *edgeproto.AppInstKey) error {
	if err := check(ctx, "UpdateTrustPolicyException"); err != nil {
		return err
	}
	return f.p.UpdateTrustPolicyException(ctx, c, exc, ck, inst)
}

func (f fencedPlatform) DeleteTrustPolicyException(ctx context.Context, c *edgeproto.Cloudlet, key *edgeproto.TrustPolicyExceptionKey, ck *edgeproto.ClusterKey, inst *edgeproto.AppInstKey) error {
	if err := check(ctx, "DeleteTrustPolicyException"); err != nil {
		return err
	}
	return f.p.DeleteTrustPolicyException(ctx, c, key, ck, inst)
}
