package k8s_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/hosts/fluidos/node"
	"github.com/edgekit/edgekit/hosts/fluidos/nodetest"
)

// BenchmarkReferenceServiceAllocation measures, for the database-like
// blueprint in the FLUIDOS reference's format (nodetest.RefDatabaseBlueprint)
// on a node whose cloudlet is the test environment's Kubernetes cluster,
// the time from the purchase (the allocation's creation, on the seller's
// clock) to the allocation ACTIVE (its first healthy time: the objects
// applied, the Deployment available, the credentials handed over), and
// from the buyer's release to the seller's allocation RELEASED (the
// namespace deleted and gone, the service back on sale), observed every
// 20 ms. Each iteration is one purchase and one release; the medians over
// the iterations are reported (run with -benchtime 6x or more).
func BenchmarkReferenceServiceAllocation(b *testing.B) {
	env := testEnv(b)
	nw := nodetest.NewNetwork(b)
	bob := startSeller(b, env, nw, node.Options{NodeID: "bob",
		Blueprints: []*fluidos.ServiceBlueprint{nodetest.RefDatabaseBlueprint("mysql", 0)}})
	alice := nw.Start(node.Options{NodeID: "alice", Peers: []string{bob.RearAddr()}})
	var active, released []time.Duration
	b.ResetTimer()
	for i := range b.N {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		created, err := alice.Solvers().CreateSolver(ctx, &fluidos.CreateSolverRequest{Solver: &fluidos.Solver{
			Selector: &fluidos.Selector{Filter: &fluidos.Selector_Service{Service: &fluidos.ServiceSelector{Tags: []string{"mysql"}}}},
			Configuration: &fluidos.Configuration{Spec: &fluidos.Configuration_Service{Service: &fluidos.ServiceConfiguration{
				Parameters: map[string]string{"username": "alice", "password": fmt.Sprintf("pw-%d&<x>", i)}}}},
			FindCandidate: true, ReserveAndBuy: true, EstablishPeering: true,
		}})
		if err != nil {
			b.Fatal(err)
		}
		st := alice.WaitSolver(created.GetSolver().GetId(), 2*time.Minute).GetStatus()
		if st.GetSolverPhase() != fluidos.Phase_PHASE_SOLVED {
			b.Fatalf("solver ended %v", st)
		}
		aid := st.GetAllocationId()
		a := bob.WaitAllocation(aid, fluidos.ContractRole_CONTRACT_ROLE_SOLD, time.Minute, "ACTIVE",
			nodetest.InState(fluidos.AllocationState_ALLOCATION_STATE_ACTIVE))
		active = append(active, a.GetStatus().GetLastHealthyTime().AsTime().Sub(a.GetCreatedAt().AsTime()))
		start := time.Now()
		if _, err := alice.Contracts().ReleaseContract(ctx, &fluidos.ReleaseContractRequest{Id: st.GetContractId()}); err != nil {
			b.Fatal(err)
		}
		bob.WaitAllocation(aid, fluidos.ContractRole_CONTRACT_ROLE_SOLD, 2*time.Minute, "RELEASED",
			nodetest.InState(fluidos.AllocationState_ALLOCATION_STATE_RELEASED))
		released = append(released, time.Since(start))
		cancel()
	}
	b.StopTimer()
	b.ReportMetric(median(active).Seconds(), "active-s")
	b.ReportMetric(median(released).Seconds(), "released-s")
	b.Logf("purchase to ACTIVE: %v; release to RELEASED: %v", active, released)
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
