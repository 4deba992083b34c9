package local

import (
	"context"
	"fmt"

	"github.com/edgekit/edgekit/edgeproto"
)

// UpdateTrustPolicy accepts a policy with no rules (nothing to enforce)
// and refuses one with rules with ErrUnsupported: the local platform does
// not filter outbound traffic.
func (p *Platform) UpdateTrustPolicy(ctx context.Context, cloudlet *edgeproto.Cloudlet, policy *edgeproto.TrustPolicy) error {
	if len(policy.GetOutboundSecurityRules()) == 0 {
		return nil
	}
	return fmt.Errorf("trust policy %s/%s: outbound rules are not enforced: %w",
		policy.GetKey().GetOrganization(), policy.GetKey().GetName(), ErrUnsupported)
}

// UpdateTrustPolicyException refuses every exception with
// ErrNoNetworkRules: the platform has no network rules to add it to.
func (p *Platform) UpdateTrustPolicyException(ctx context.Context, cloudlet *edgeproto.Cloudlet, exc *edgeproto.TrustPolicyException, clusterKey *edgeproto.ClusterKey, inst *edgeproto.AppInstKey) error {
	return fmt.Errorf("trust policy exception %s: %w", exc.GetKey().GetName(), ErrNoNetworkRules)
}

// DeleteTrustPolicyException succeeds: nothing was applied.
func (p *Platform) DeleteTrustPolicyException(ctx context.Context, cloudlet *edgeproto.Cloudlet, key *edgeproto.TrustPolicyExceptionKey, clusterKey *edgeproto.ClusterKey, inst *edgeproto.AppInstKey) error {
	return nil
}
