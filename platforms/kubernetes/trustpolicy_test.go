package kubernetes

import (
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
)

// TestTrustPolicyIsEgressNetworkPolicies: a trust policy becomes an egress
// NetworkPolicy of every namespace of the cloudlet, a cluster created
// later gets it too, an exception adds one to its cluster, and a nil
// policy removes them.
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
	if err := p.UpdateTrustPolicyException(ctx, cl, exc, first.GetKey()); err != nil {
		t.Fatal(err)
	}
	nsFirst := namespaceName(cl.GetKey(), first.GetKey())
	if _, err := cs.NetworkingV1().NetworkPolicies(nsFirst).Get(ctx, exceptionName(exc.GetKey()), metav1.GetOptions{}); err != nil {
		t.Fatalf("exception's policy: %v", err)
	}
	for range 2 {
		if err := p.DeleteTrustPolicyException(ctx, cl, exc.GetKey(), first.GetKey()); err != nil {
			t.Fatal(err)
		}
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
