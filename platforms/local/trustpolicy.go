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

// UpdateTrustPolicyException accepts an exception with no rules and refuses
// one with rules with ErrUnsupported, like UpdateTrustPolicy.
func (p *Platform) UpdateTrustPolicyException(ctx context.Context, cloudlet *edgeproto.Cloudlet, exc *edgeproto.TrustPolicyException, clusterKey *edgeproto.ClusterKey) error {
	if len(exc.GetOutboundSecurityRules()) == 0 {
		return nil
	}
	return fmt.Errorf("trust policy exception %s: outbound rules are not enforced: %w", exc.GetKey().GetName(), ErrUnsupported)
}

// DeleteTrustPolicyException succeeds: nothing was applied.
func (p *Platform) DeleteTrustPolicyException(ctx context.Context, cloudlet *edgeproto.Cloudlet, key *edgeproto.TrustPolicyExceptionKey, clusterKey *edgeproto.ClusterKey) error {
	return nil
}
