package k8s_test

import (
	"testing"
	"time"

	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/fluidos/rear"
	"github.com/edgekit/edgekit/hosts/fluidos/node"
	"github.com/edgekit/edgekit/hosts/fluidos/nodetest"
	"github.com/edgekit/edgekit/hosts/fluidos/provider"
)

// BenchmarkK8Slice measures, per K8Slice sold by a node whose cloudlet is
// the simulated cluster, the time from the purchase request to its
// allocation ACTIVE (the namespace, its quota, limits and
// NetworkPolicies, the tenant's ServiceAccount, Role and RoleBinding, a
// token; the purchase answer carries the kubeconfig), and from the
// buyer's release to RELEASED (tokens revoked, the namespace deleted, the
// capacity back on sale). The buyer speaks REAR over mutual TLS; the
// reservation is not timed.
func BenchmarkK8Slice(b *testing.B) {
	env := testEnv(b)
	ctx := ctxT(b)
	nw := nodetest.NewNetwork(b)
	seller := startSeller(b, env, nw, node.Options{NodeID: "erin"})
	c := rear.NewClient(buyerTLS(b, nw, "frank"), 2*time.Minute)
	b.Cleanup(c.Close)
	buyer := &fluidos.NodeIdentity{NodeId: "frank", Ip: "127.0.0.1:1", Domain: "test",
		AdditionalInformation: &fluidos.NodeAdditionalInformation{LiqoId: "frank-cluster"}}
	cfg := &fluidos.Configuration{Spec: &fluidos.Configuration_K8Slice{K8Slice: &fluidos.K8SliceConfiguration{Cpu: 1000, Memory: 1 << 30, Pods: 4}}}
	var up, answer, down time.Duration
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		tx, err := c.Reserve(ctx, seller.RearAddr(), "erin", &fluidos.ReserveRequest{FlavorId: provider.K8SliceFlavorID("erin"), Buyer: buyer, Configuration: cfg}, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		ct, err := c.Purchase(ctx, seller.RearAddr(), "erin", tx.GetId(), &fluidos.PurchaseRequest{})
		if err != nil {
			b.Fatal(err)
		}
		answered := time.Now()
		if ct.GetPeeringTargetCredentials().GetKubeconfig() == "" {
			b.Fatalf("the purchase answer of %s carries no kubeconfig", ct.GetId())
		}
		aid := provider.AllocationID(ct.GetId())
		seller.WaitAllocation(aid, fluidos.ContractRole_CONTRACT_ROLE_SOLD, 2*time.Minute, "ACTIVE",
			nodetest.InState(fluidos.AllocationState_ALLOCATION_STATE_ACTIVE))
		mid := time.Now()
		if _, err := c.ReleaseContract(ctx, seller.RearAddr(), "erin", ct.GetId(), ""); err != nil {
			b.Fatal(err)
		}
		seller.WaitAllocation(aid, fluidos.ContractRole_CONTRACT_ROLE_SOLD, 2*time.Minute, "RELEASED",
			nodetest.InState(fluidos.AllocationState_ALLOCATION_STATE_RELEASED))
		up, answer, down = up+mid.Sub(start), answer+answered.Sub(start), down+time.Since(mid)
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) / float64(b.N) }
	b.ReportMetric(ms(up), "active-ms/op")
	b.ReportMetric(ms(answer), "answer-ms/op")
	b.ReportMetric(ms(down), "released-ms/op")
}
