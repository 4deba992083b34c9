package controller

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/internal/store"
)

// checkOutbound refuses, read in tx, an instance of app on cloudlet cl
// when cl has a trust policy that does not allow an outbound connection
// the App requires (App.required_outbound_connections), unless an ACTIVE
// TrustPolicyException of the App on a pool holding cl allows it. The
// error names the connection, the policy and the cloudlet.
func (c *Controller) checkOutbound(tx *store.Tx, app *edgeproto.App, cl *edgeproto.Cloudlet, what string) error {
	if cl.GetTrustPolicy() == "" || len(app.GetRequiredOutboundConnections()) == 0 {
		return nil
	}
	policyKey := &edgeproto.TrustPolicyKey{Organization: cl.GetKey().GetOrganization(), Name: cl.GetTrustPolicy()}
	policy, found, err := c.trustPolicies.store.TxGet(tx, (&edgeproto.TrustPolicy{Key: policyKey}).GetKeyString())
	if err != nil {
		return err
	}
	allowed := policy.GetOutboundSecurityRules()
	if !found {
		allowed = nil
	}
	var excepted []*edgeproto.SecurityRule
	excKeys, err := c.refChildren(tx, c.apps.refOf(app), c.tpes.name)
	if err != nil {
		return err
	}
	for _, k := range excKeys {
		exc, found, err := c.tpes.store.TxGet(tx, k)
		if err != nil {
			return err
		}
		if !found || exc.Deleting || exc.State != edgeproto.TrustPolicyExceptionState_TRUST_POLICY_EXCEPTION_STATE_ACTIVE {
			continue
		}
		pool, found, err := c.cloudletPools.store.TxGet(tx, (&edgeproto.CloudletPool{Key: exc.Key.GetCloudletPoolKey()}).GetKeyString())
		if err != nil {
			return err
		}
		if found && poolHas(pool, cl.GetKey()) {
			excepted = append(excepted, exc.OutboundSecurityRules...)
		}
	}
	for _, need := range app.GetRequiredOutboundConnections() {
		if ruleCovered(need, allowed) || ruleCovered(need, excepted) {
			continue
		}
		return preconditionf("%s: App %s requires the outbound connection %s, which TrustPolicy %s of Cloudlet %s does not allow "+
			"(and no ACTIVE TrustPolicyException of the App on a pool of the cloudlet does): ask the operator for a trust policy exception",
			what, app.GetKeyString(), ruleString(need), cl.GetTrustPolicy(), cl.GetKeyString())
	}
	return nil
}

// ruleString renders a rule for errors: "tcp 10.0.0.0/8:443-443".
func ruleString(r *edgeproto.SecurityRule) string {
	lo, hi := portRange(r)
	return fmt.Sprintf("%s %s:%d-%d", r.GetProtocol(), r.GetRemoteCidr(), lo, hi)
}

// portRange is the ports a rule allows: 0 and 0 mean every port; a rule
// with only port_range_min allows that port.
func portRange(r *edgeproto.SecurityRule) (uint32, uint32) {
	lo, hi := r.GetPortRangeMin(), r.GetPortRangeMax()
	switch {
	case lo == 0 && hi == 0:
		return 1, 65535
	case hi == 0:
		return lo, lo
	case lo == 0:
		return 1, hi
	}
	return lo, hi
}

// ruleCovered reports whether one of rules allows everything need asks:
// the same protocol, its ports and its addresses. A CIDR that does not
// parse covers nothing and is covered by nothing.
func ruleCovered(need *edgeproto.SecurityRule, rules []*edgeproto.SecurityRule) bool {
	needNet, err := netip.ParsePrefix(need.GetRemoteCidr())
	if err != nil {
		return false
	}
	needLo, needHi := portRange(need)
	for _, r := range rules {
		if !strings.EqualFold(r.GetProtocol(), need.GetProtocol()) {
			continue
		}
		lo, hi := portRange(r)
		if strings.EqualFold(r.GetProtocol(), "icmp") {
			lo, hi, needLo, needHi = 0, 0, 0, 0 // ICMP has no ports
		}
		if needLo < lo || needHi > hi {
			continue
		}
		n, err := netip.ParsePrefix(r.GetRemoteCidr())
		if err != nil || n.Addr().Is4() != needNet.Addr().Is4() {
			continue
		}
		if n.Bits() <= needNet.Bits() && n.Contains(needNet.Masked().Addr()) {
			return true
		}
	}
	return false
}
