package kubernetes

import (
	"errors"
	"testing"

	netv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
)

// TestTrustPolicyIsEgressNetworkPolicies: a trust policy becomes an egress
// NetworkPolicy of every namespace of the cloudlet, a cluster created
// later gets it too, an exception adds one to its cluster's namespace for
// each instance, selecting that instance's pods (removed one instance at a
// time), which allows everything while the namespace has no trust policy,
// and a nil policy removes them.
func TestTrustPolicyIsEgressNetworkPolicies(t *testing.T) {
	env := testEnv(t)
	cs := admin(t, env)
	ctx := testCtx(t)
	p := newPlatform(t)
	if !p.Features().SupportsTrustPolicy {
		t.Fatal("SupportsTrustPolicy is false")
	}
	cl := testCloudlet("trust", env.AdminKubeconfig())
	first, second := testCluster(cl, "first"), testCluster(cl, "second")
	for _, ci := range []*edgeproto.ClusterInst{first, second} {
		t.Cleanup(func() { _ = p.DeleteCluster(testCtx(t), cl, ci, nil, &steps{}) })
	}
	if err := p.CreateCluster(ctx, cl, first, nil, &steps{}); err != nil {
		t.Fatal(err)
	}
	policy := &edgeproto.TrustPolicy{Key: &edgeproto.TrustPolicyKey{Organization: "operator", Name: "tp"},
		OutboundSecurityRules: []*edgeproto.SecurityRule{{Protocol: "tcp", PortRangeMin: 443, PortRangeMax: 443, RemoteCidr: "10.1.0.0/16"},
			{Protocol: "udp", PortRangeMin: 1000, PortRangeMax: 2000, RemoteCidr: "192.168.0.0/24"}}}
	if err := p.UpdateTrustPolicy(ctx, cl, policy); err != nil {
		t.Fatal(err)
	}
	if err := p.CreateCluster(ctx, cl, second, nil, &steps{}); err != nil {
		t.Fatal(err)
	}
	for _, ci := range []*edgeproto.ClusterInst{first, second} {
		ns := namespaceName(cl.GetKey(), ci.GetKey())
		np, err := cs.NetworkingV1().NetworkPolicies(ns).Get(ctx, trustPolicyName, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("trust policy of %s: %v", ci.GetKey().GetName(), err)
		}
		eg := np.Spec.Egress
		if len(eg) != 3 || eg[1].To[0].IPBlock.CIDR != "10.1.0.0/16" || eg[1].Ports[0].Port.IntVal != 443 ||
			eg[2].Ports[0].Port.IntVal != 1000 || *eg[2].Ports[0].EndPort != 2000 {
			t.Errorf("egress of %s: %+v", ci.GetKey().GetName(), eg)
		}
	}
	exc := &edgeproto.TrustPolicyException{Key: &edgeproto.TrustPolicyExceptionKey{Name: "exc", AppKey: testApp().GetKey()},
		OutboundSecurityRules: []*edgeproto.SecurityRule{{Protocol: "tcp", PortRangeMin: 5432, PortRangeMax: 5432, RemoteCidr: "10.2.0.0/16"}}}
	i1, i2 := &edgeproto.AppInstKey{Organization: "dev", Name: "i1"}, &edgeproto.AppInstKey{Organization: "dev", Name: "i2"}
	for _, ik := range []*edgeproto.AppInstKey{i1, i2} {
		if err := p.UpdateTrustPolicyException(ctx, cl, exc, first.GetKey(), ik); err != nil {
			t.Fatal(err)
		}
	}
	nsFirst := namespaceName(cl.GetKey(), first.GetKey())
	// One NetworkPolicy an instance, on that instance's pods only.
	for _, ik := range []*edgeproto.AppInstKey{i1, i2} {
		np, err := cs.NetworkingV1().NetworkPolicies(nsFirst).Get(ctx, exceptionName(exc.GetKey(), ik), metav1.GetOptions{})
		if err != nil {
			t.Fatalf("exception's policy of %s: %v", ik.Name, err)
		}
		if want := appInstID(cl.GetKey(), first.GetKey(), ik); len(np.Spec.PodSelector.MatchLabels) != 1 || np.Spec.PodSelector.MatchLabels[LabelAppInst] != want {
			t.Errorf("exception's policy of %s selects %v, want the instance's pods (%s=%s)", ik.Name, np.Spec.PodSelector, LabelAppInst, want)
		}
		if eg := np.Spec.Egress; len(eg) != 2 || eg[1].To[0].IPBlock.CIDR != "10.2.0.0/16" || eg[1].Ports[0].Port.IntVal != 5432 {
			t.Errorf("egress of the exception's policy of %s (the namespace has the trust policy): %+v", ik.Name, eg)
		}
	}
	for range 2 {
		if err := p.DeleteTrustPolicyException(ctx, cl, exc.GetKey(), first.GetKey(), i1); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := cs.NetworkingV1().NetworkPolicies(nsFirst).Get(ctx, exceptionName(exc.GetKey(), i1), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("exception's policy of i1 after its delete: %v", err)
	}
	if _, err := cs.NetworkingV1().NetworkPolicies(nsFirst).Get(ctx, exceptionName(exc.GetKey(), i2), metav1.GetOptions{}); err != nil {
		t.Errorf("exception's policy of i2 after the delete of i1's: %v", err)
	}
	// Without a trust policy the exception allows everything too (it
	// must not restrict pods that nothing restricts); the policy's return
	// closes it again.
	egressOfI2 := func() []netv1.NetworkPolicyEgressRule {
		t.Helper()
		np, err := cs.NetworkingV1().NetworkPolicies(nsFirst).Get(ctx, exceptionName(exc.GetKey(), i2), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return np.Spec.Egress
	}
	if err := p.UpdateTrustPolicy(ctx, cl, nil); err != nil {
		t.Fatal(err)
	}
	if eg := egressOfI2(); len(eg) != 3 || !allowAll(eg[2]) {
		t.Errorf("egress of the exception without a trust policy: %+v, want its rules and an allow-all rule", eg)
	}
	if err := p.UpdateTrustPolicyException(ctx, cl, exc, first.GetKey(), i1); err != nil {
		t.Fatal(err)
	}
	np, err := cs.NetworkingV1().NetworkPolicies(nsFirst).Get(ctx, exceptionName(exc.GetKey(), i1), metav1.GetOptions{})
	if err != nil || len(np.Spec.Egress) != 3 || !allowAll(np.Spec.Egress[2]) {
		t.Errorf("an exception applied without a trust policy: %+v, %v; want its rules and an allow-all rule", np, err)
	}
	if err := p.UpdateTrustPolicy(ctx, cl, policy); err != nil {
		t.Fatal(err)
	}
	if eg := egressOfI2(); len(eg) != 2 || allowAll(eg[1]) {
		t.Errorf("egress of the exception with the trust policy back: %+v, want its rules only", eg)
	}
	if err := p.DeleteTrustPolicyException(ctx, cl, exc.GetKey(), first.GetKey(), i1); err != nil {
		t.Fatal(err)
	}
	if err := p.DeleteTrustPolicyException(ctx, cl, exc.GetKey(), first.GetKey(), i2); err != nil {
		t.Fatal(err)
	}
	bad := &edgeproto.TrustPolicy{Key: policy.Key, OutboundSecurityRules: []*edgeproto.SecurityRule{{Protocol: "icmp", RemoteCidr: "0.0.0.0/0"}}}
	if err := p.UpdateTrustPolicy(ctx, cl, bad); !errors.Is(err, executor.ErrUnsupported) {
		t.Errorf("an icmp rule: %v, want ErrUnsupported", err)
	}
	if err := p.UpdateTrustPolicy(ctx, cl, nil); err != nil {
		t.Fatal(err)
	}
	for _, ci := range []*edgeproto.ClusterInst{first, second} {
		ns := namespaceName(cl.GetKey(), ci.GetKey())
		if _, err := cs.NetworkingV1().NetworkPolicies(ns).Get(ctx, trustPolicyName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("trust policy of %s after removing it: %v", ci.GetKey().GetName(), err)
		}
	}
}
