package kubernetes

import (
	"context"
	"fmt"
	"net"
	"strings"

	corev1 "k8s.io/api/core/v1"
	netv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
)

const (
	trustPolicyName = "edgekit-trust-policy"
	// LabelTrust marks the egress NetworkPolicies of trust policies
	// ("policy") and of their exceptions ("exception").
	LabelTrust = "edgekit.io/trust"
	// LabelException is the hash of an exception's key.
	LabelException = "edgekit.io/trust-exception"
)

// egressRules turns security rules into NetworkPolicy egress rules. DNS
// (port 53) stays allowed so that names resolve under any policy.
func egressRules(rules []*edgeproto.SecurityRule) ([]netv1.NetworkPolicyEgressRule, error) {
	udp, tcp := corev1.ProtocolUDP, corev1.ProtocolTCP
	dns := intstr.FromInt32(53)
	out := []netv1.NetworkPolicyEgressRule{{Ports: []netv1.NetworkPolicyPort{{Protocol: &udp, Port: &dns}, {Protocol: &tcp, Port: &dns}}}}
	for i, r := range rules {
		var proto corev1.Protocol
		switch strings.ToLower(r.GetProtocol()) {
		case "tcp":
			proto = corev1.ProtocolTCP
		case "udp":
			proto = corev1.ProtocolUDP
		default:
			return nil, fmt.Errorf("%w: rule %d: protocol %q (NetworkPolicies enforce tcp and udp)", executor.ErrUnsupported, i+1, r.GetProtocol())
		}
		cidr := r.GetRemoteCidr()
		if _, _, err := net.ParseCIDR(cidr); err != nil {
			return nil, fmt.Errorf("%w: rule %d: remote_cidr %q is not a CIDR", executor.ErrBadObject, i+1, cidr)
		}
		lo, hi := r.GetPortRangeMin(), r.GetPortRangeMax()
		if lo > 65535 || hi > 65535 || (hi != 0 && hi < lo) {
			return nil, fmt.Errorf("%w: rule %d: port range %d-%d", executor.ErrBadObject, i+1, lo, hi)
		}
		np := netv1.NetworkPolicyPort{Protocol: &proto}
		if lo != 0 || hi != 0 {
			if lo == 0 {
				lo = 1
			}
			port := intstr.FromInt32(int32(lo))
			np.Port = &port
			if hi > lo {
				end := int32(hi)
				np.EndPort = &end
			}
		}
		out = append(out, netv1.NetworkPolicyEgressRule{
			To:    []netv1.NetworkPolicyPeer{{IPBlock: &netv1.IPBlock{CIDR: cidr}}},
			Ports: []netv1.NetworkPolicyPort{np},
		})
	}
	return out, nil
}

func egressPolicy(labels map[string]string, egress []netv1.NetworkPolicyEgressRule) *netv1.NetworkPolicy {
	return &netv1.NetworkPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "NetworkPolicy"},
		ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec: netv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{},
			PolicyTypes: []netv1.PolicyType{netv1.PolicyTypeEgress},
			Egress:      egress,
		},
	}
}

// UpdateTrustPolicy writes the policy as an egress NetworkPolicy into every
// namespace of the cloudlet (and CreateCluster copies it into new ones); a
// nil policy deletes them.
func (p *Platform) UpdateTrustPolicy(ctx context.Context, cloudlet *edgeproto.Cloudlet, policy *edgeproto.TrustPolicy) error {
	c, err := p.connFor(cloudlet)
	if err != nil {
		return err
	}
	var egress []netv1.NetworkPolicyEgressRule
	if policy != nil {
		if egress, err = egressRules(policy.GetOutboundSecurityRules()); err != nil {
			return fmt.Errorf("trust policy %s: %w", executor.KeyString(policy), err)
		}
	}
	nss, err := c.cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: cloudletSelector(cloudlet.GetKey()) + "," + LabelKind + "=" + kindNS})
	if err != nil {
		return apiErr(ctx, "listing", gvrNamespace, "", "", err)
	}
	for _, ns := range nss.Items {
		if ns.DeletionTimestamp != nil {
			continue
		}
		if policy == nil {
			err = deleteFenced(ctx, c, gvrNetworkPolicy, ns.Name, trustPolicyName)
		} else {
			labels := mergeLabels(trustLabels(ns.Labels), map[string]string{LabelTrust: "policy"})
			_, err = apply(ctx, c, gvrNetworkPolicy, ns.Name, trustPolicyName, fixed(egressPolicy(labels, egress)))
		}
		if err == nil {
			// The exceptions allow everything exactly while no policy
			// restricts the namespace.
			err = openExceptions(ctx, c, ns.Name, policy == nil)
		}
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("trust policy of cloudlet %s: %w", executor.KeyString(cloudlet), err)
		}
	}
	return nil
}

func trustLabels(nsLabels map[string]string) map[string]string {
	return map[string]string{LabelManagedBy: managedBy, LabelCloudlet: nsLabels[LabelCloudlet], LabelCluster: nsLabels[LabelCluster]}
}

// copyTrustPolicy gives a new namespace the cloudlet's trust policy, read
// from another namespace of the cloudlet that has it.
func (p *Platform) copyTrustPolicy(ctx context.Context, c *conn, cloudlet *edgeproto.Cloudlet, ns string, labels map[string]string) error {
	l, err := c.cs.NetworkingV1().NetworkPolicies("").List(ctx, metav1.ListOptions{
		LabelSelector: cloudletSelector(cloudlet.GetKey()) + "," + LabelTrust + "=policy", Limit: 1})
	if err != nil {
		return apiErr(ctx, "listing", gvrNetworkPolicy, "", "", err)
	}
	if len(l.Items) == 0 || l.Items[0].Namespace == ns {
		return nil
	}
	pol := egressPolicy(mergeLabels(labels, map[string]string{LabelTrust: "policy"}), l.Items[0].Spec.Egress)
	_, err = apply(ctx, c, gvrNetworkPolicy, ns, trustPolicyName, fixed(pol))
	return err
}

func exceptionName(key *edgeproto.TrustPolicyExceptionKey, inst *edgeproto.AppInstKey) string {
	return "edgekit-tpe-" + hash(key, inst)[:16]
}

// allowAll is the egress rule that allows everything: an exception's
// NetworkPolicy carries it while its namespace has no trust policy, so
// that the exception never restricts pods that nothing else restricts (a
// pod that any egress NetworkPolicy selects may send only what one of
// them allows).
func allowAll(r netv1.NetworkPolicyEgressRule) bool { return len(r.To) == 0 && len(r.Ports) == 0 }

// withOpen returns egress without its allow-all rule, with one at the end
// when open.
func withOpen(egress []netv1.NetworkPolicyEgressRule, open bool) []netv1.NetworkPolicyEgressRule {
	out := make([]netv1.NetworkPolicyEgressRule, 0, len(egress)+1)
	for _, r := range egress {
		if !allowAll(r) {
			out = append(out, r)
		}
	}
	if open {
		out = append(out, netv1.NetworkPolicyEgressRule{})
	}
	return out
}

// hasTrustPolicy reports whether namespace ns holds the cloudlet's trust
// policy.
func hasTrustPolicy(ctx context.Context, c *conn, ns string) (bool, error) {
	_, err := c.cs.NetworkingV1().NetworkPolicies(ns).Get(ctx, trustPolicyName, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, apiErr(ctx, "reading", gvrNetworkPolicy, ns, trustPolicyName, err)
	}
	return true, nil
}

// openExceptions rewrites the exceptions' NetworkPolicies of namespace ns
// for a namespace with (open false) or without (open true) the trust
// policy.
func openExceptions(ctx context.Context, c *conn, ns string, open bool) error {
	l, err := c.cs.NetworkingV1().NetworkPolicies(ns).List(ctx, metav1.ListOptions{LabelSelector: LabelTrust + "=exception"})
	if err != nil {
		return apiErr(ctx, "listing", gvrNetworkPolicy, ns, "", err)
	}
	for _, np := range l.Items {
		if np.DeletionTimestamp != nil {
			continue
		}
		has := len(np.Spec.Egress) > 0 && allowAll(np.Spec.Egress[len(np.Spec.Egress)-1])
		if has == open {
			continue
		}
		pol := exceptionPolicy(np.Labels, np.Spec.PodSelector.MatchLabels, withOpen(np.Spec.Egress, open))
		if _, err := apply(ctx, c, gvrNetworkPolicy, ns, np.Name, fixed(pol)); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}

// exceptionPolicy is the egress NetworkPolicy of an exception on the pods
// that pods selects.
func exceptionPolicy(labels, pods map[string]string, egress []netv1.NetworkPolicyEgressRule) *netv1.NetworkPolicy {
	np := egressPolicy(labels, egress)
	np.Spec.PodSelector = metav1.LabelSelector{MatchLabels: pods}
	return np
}

// UpdateTrustPolicyException writes the exception as an egress
// NetworkPolicy of the instance's pods, in its cluster's namespace:
// NetworkPolicies add up, so it allows what the trust policy does not.
// While the namespace has no trust policy it also allows everything (the
// pods are not restricted; see allowAll), and UpdateTrustPolicy closes it
// when a policy comes.
func (p *Platform) UpdateTrustPolicyException(ctx context.Context, cloudlet *edgeproto.Cloudlet, exc *edgeproto.TrustPolicyException, ck *edgeproto.ClusterKey, inst *edgeproto.AppInstKey) error {
	if inst.GetName() == "" || inst.GetOrganization() == "" {
		return fmt.Errorf("trust policy exception %s: %w: no application instance key", executor.KeyString(exc), executor.ErrBadObject)
	}
	c, err := p.connFor(cloudlet)
	if err != nil {
		return err
	}
	egress, err := egressRules(exc.GetOutboundSecurityRules())
	if err != nil {
		return fmt.Errorf("trust policy exception %s: %w", executor.KeyString(exc), err)
	}
	ns := namespaceName(cloudlet.GetKey(), ck)
	if _, err := c.cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); apierrors.IsNotFound(err) {
		return fmt.Errorf("cluster %s: %w", executor.KeyString(ck), executor.ErrNotFound)
	}
	guarded, err := hasTrustPolicy(ctx, c, ns)
	if err != nil {
		return fmt.Errorf("trust policy exception %s: %w", executor.KeyString(exc), err)
	}
	id := appInstID(cloudlet.GetKey(), ck, inst)
	labels := mergeLabels(clusterLabels(cloudlet.GetKey(), ck), map[string]string{
		LabelTrust: "exception", LabelException: hash(exc.GetKey()), LabelAppInst: id})
	pol := exceptionPolicy(labels, map[string]string{LabelAppInst: id}, withOpen(egress, !guarded))
	if _, err := apply(ctx, c, gvrNetworkPolicy, ns, exceptionName(exc.GetKey(), inst), fixed(pol)); err != nil {
		return fmt.Errorf("trust policy exception %s: %w", executor.KeyString(exc), err)
	}
	// A trust policy written or removed meanwhile may have missed this
	// exception: look again.
	now, err := hasTrustPolicy(ctx, c, ns)
	if err == nil && now != guarded {
		err = openExceptions(ctx, c, ns, !now)
	}
	if err != nil {
		return fmt.Errorf("trust policy exception %s: %w", executor.KeyString(exc), err)
	}
	return nil
}

// DeleteTrustPolicyException deletes the NetworkPolicy of the exception on
// the instance; an absent one is deleted already.
func (p *Platform) DeleteTrustPolicyException(ctx context.Context, cloudlet *edgeproto.Cloudlet, key *edgeproto.TrustPolicyExceptionKey, ck *edgeproto.ClusterKey, inst *edgeproto.AppInstKey) error {
	c, err := p.connFor(cloudlet)
	if err != nil {
		return err
	}
	return deleteFenced(ctx, c, gvrNetworkPolicy, namespaceName(cloudlet.GetKey(), ck), exceptionName(key, inst))
}
