package node_test

import (
	"context"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/hosts/fluidos/node"
	"github.com/edgekit/edgekit/hosts/fluidos/nodetest"
	"github.com/edgekit/edgekit/hosts/fluidos/provider"
)

// capacity is 4 CPUs, 8Gi, 40 pods, 50Gi of arch.
func capacity(arch string) provider.CapacitySource {
	return nodetest.Capacity(provider.Capacity{Architecture: arch, CPU: 4000, Memory: 8 << 30, Pods: 40, Storage: 50 << 30})
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func cpuAtLeast(milli int64) *fluidos.Selector {
	return &fluidos.Selector{Filter: &fluidos.Selector_K8Slice{K8Slice: &fluidos.K8SliceSelector{
		Cpu: &fluidos.ResourceFilter{Filter: &fluidos.ResourceFilter_Range{Range: &fluidos.ResourceRangeSelector{Min: &milli}}},
	}}}
}

func partition(cpu, mem, pods int64) *fluidos.Configuration {
	return &fluidos.Configuration{Spec: &fluidos.Configuration_K8Slice{K8Slice: &fluidos.K8SliceConfiguration{Cpu: cpu, Memory: mem, Pods: pods}}}
}

func buy(sel *fluidos.Selector, cfg *fluidos.Configuration) *fluidos.Solver {
	return &fluidos.Solver{Selector: sel, Configuration: cfg, FindCandidate: true, ReserveAndBuy: true}
}

func TestTwoNodesBuyAK8SliceWithASolver(t *testing.T) {
	t.Parallel()
	nw := nodetest.NewNetwork(t)
	bob := nw.Start(node.Options{NodeID: "bob", Domain: "example.org", Capacity: capacity("amd64")})
	alice := nw.Start(node.Options{NodeID: "alice", Domain: "example.org", Capacity: capacity("amd64"), Peers: []string{bob.RearAddr()}})
	ctx := ctxT(t)

	created, err := alice.Solvers().CreateSolver(ctx, &fluidos.CreateSolverRequest{Solver: buy(cpuAtLeast(1000), partition(1000, 2<<30, 4))})
	if err != nil {
		t.Fatal(err)
	}
	s := alice.WaitSolver(created.GetSolver().GetId(), 30*time.Second)
	st := s.GetStatus()
	if st.GetSolverPhase() != fluidos.Phase_PHASE_SOLVED || st.GetDiscoveryPhase() != fluidos.Phase_PHASE_SOLVED ||
		st.GetReservationPhase() != fluidos.Phase_PHASE_SOLVED || st.GetPurchasePhase() != fluidos.Phase_PHASE_SOLVED {
		t.Fatalf("solver ended %v", st)
	}
	if st.GetContractId() == "" || len(st.GetAttempts()) != 1 || st.GetAttempts()[0].GetSellerId() != "bob" || st.GetAttempts()[0].GetError() != "" {
		t.Errorf("status %v", st)
	}
	got, err := alice.Contracts().GetContract(ctx, &fluidos.GetContractRequest{Id: st.GetContractId()})
	if err != nil {
		t.Fatal(err)
	}
	c := got.GetContract()
	if got.GetRole() != fluidos.ContractRole_CONTRACT_ROLE_BOUGHT || c.GetSeller().GetNodeId() != "bob" || c.GetBuyer().GetNodeId() != "alice" ||
		c.GetFlavor().GetK8Slice().GetCharacteristics().GetCpu() != 1000 {
		t.Errorf("alice's contract %v (%v)", c, got.GetRole())
	}
	if cr := credentials(t, alice, c.GetId()); cr.GetClusterId() != "bob" {
		t.Errorf("the buyer did not get the contract's credentials: %v", cr)
	}
	sold, err := bob.Contracts().GetContract(ctx, &fluidos.GetContractRequest{Id: nodetest.SoldID(st.GetContractId()), Role: fluidos.ContractRole_CONTRACT_ROLE_SOLD})
	if err != nil {
		t.Fatal(err)
	}
	if sold.GetContract().GetPeeringTargetCredentials() != nil {
		t.Errorf("the seller's API shows the buyer's credentials: %v", sold.GetContract().GetPeeringTargetCredentials())
	}
	fl, err := bob.Flavors().ListFlavors(ctx, &fluidos.ListFlavorsRequest{Selector: &fluidos.Selector{FlavorType: fluidos.FlavorType_FLAVOR_TYPE_K8SLICE}})
	if err != nil || len(fl.GetFlavors()) != 1 {
		t.Fatalf("bob's flavors: %v, %v", fl, err)
	}
	if left := fl.GetFlavors()[0].GetK8Slice().GetCharacteristics(); left.GetCpu() != 3000 || left.GetMemory() != 6<<30 || left.GetPods() != 36 {
		t.Errorf("bob offers %v after selling 1 CPU, 2Gi, 4 pods", left)
	}
	// bob learned alice, whose certificate vouched for the reservation.
	peers, err := fluidos.NewNodeServiceClient(bob.Conn()).ListPeers(ctx, &fluidos.ListPeersRequest{})
	if err != nil || len(peers.GetPeers()) != 1 || peers.GetPeers()[0].GetAddress() != alice.RearAddr() || peers.GetPeers()[0].GetStatic() {
		t.Errorf("bob's peers %v (%v), want alice learned", peers.GetPeers(), err)
	}
	// The discovery is kept, with what bob answered.
	d, err := alice.Solvers().GetDiscovery(ctx, &fluidos.GetDiscoveryRequest{Id: st.GetDiscoveryId()})
	if err != nil {
		t.Fatal(err)
	}
	if r := d.GetDiscovery().GetPeerResults(); len(r) != 1 || r[0].GetNodeId() != "bob" || r[0].GetFlavorsFound() != 1 || len(d.GetCandidates()) != 1 {
		t.Errorf("discovery %v", d)
	}
}

func TestSolverFallsBackWhenTheBestCandidateRefuses(t *testing.T) {
	t.Parallel()
	nw := nodetest.NewNetwork(t)
	// cheap has 1 CPU only: it is found (the selector asks at least 500m)
	// and tried first, but cannot sell 2 CPUs.
	cheap := nw.Start(node.Options{NodeID: "cheap", Price: &fluidos.Price{Amount: "0.10", Currency: "EUR", Period: "hourly"},
		Capacity: nodetest.Capacity(provider.Capacity{Architecture: "amd64", CPU: 1000, Memory: 4 << 30, Pods: 10})})
	dear := nw.Start(node.Options{NodeID: "dear", Price: &fluidos.Price{Amount: "5", Currency: "EUR", Period: "hourly"}, Capacity: capacity("amd64")})
	buyer := nw.Start(node.Options{NodeID: "buyer", Capacity: capacity("amd64"), Peers: []string{dear.RearAddr(), cheap.RearAddr()}})
	ctx := ctxT(t)
	created, err := buyer.Solvers().CreateSolver(ctx, &fluidos.CreateSolverRequest{Solver: buy(cpuAtLeast(500), partition(2000, 1<<30, 2))})
	if err != nil {
		t.Fatal(err)
	}
	s := buyer.WaitSolver(created.GetSolver().GetId(), 30*time.Second)
	at := s.GetStatus().GetAttempts()
	if s.GetStatus().GetSolverPhase() != fluidos.Phase_PHASE_SOLVED || len(at) != 2 {
		t.Fatalf("solver ended %v", s.GetStatus())
	}
	if at[0].GetSellerId() != "cheap" || at[0].GetError() == "" || at[1].GetSellerId() != "dear" || at[1].GetError() != "" {
		t.Errorf("attempts %v: want cheap refused, then dear", at)
	}
}

func TestSolverFailsWhenNothingMatches(t *testing.T) {
	t.Parallel()
	nw := nodetest.NewNetwork(t)
	seller := nw.Start(node.Options{NodeID: "seller", Capacity: capacity("amd64")})
	buyer := nw.Start(node.Options{NodeID: "buyer", Capacity: capacity("amd64"), Peers: []string{seller.RearAddr()}})
	ctx := ctxT(t)
	created, err := buyer.Solvers().CreateSolver(ctx, &fluidos.CreateSolverRequest{Solver: buy(cpuAtLeast(64000), nil)})
	if err != nil {
		t.Fatal(err)
	}
	s := buyer.WaitSolver(created.GetSolver().GetId(), 30*time.Second)
	if s.GetStatus().GetSolverPhase() != fluidos.Phase_PHASE_FAILED || s.GetStatus().GetDiscoveryPhase() != fluidos.Phase_PHASE_FAILED ||
		s.GetStatus().GetReservationPhase() != fluidos.Phase_PHASE_IDLE {
		t.Errorf("solver ended %v, want discovery FAILED", s.GetStatus())
	}
}

func TestDiscoveryPhaseTimesOutOnTime(t *testing.T) {
	t.Parallel()
	nw := nodetest.NewNetwork(t)
	hung := hungPeer(t)
	buyer := nw.Start(node.Options{NodeID: "buyer", Capacity: capacity("amd64"), Peers: []string{hung}, PeerTimeout: time.Minute})
	ctx := ctxT(t)
	const limit = 300 * time.Millisecond
	sv := buy(cpuAtLeast(1), nil)
	sv.Timeouts = &fluidos.SolverTimeouts{Discovery: durationpb.New(limit)}
	start := time.Now()
	created, err := buyer.Solvers().CreateSolver(ctx, &fluidos.CreateSolverRequest{Solver: sv})
	if err != nil {
		t.Fatal(err)
	}
	s := buyer.WaitSolver(created.GetSolver().GetId(), 20*time.Second)
	took := time.Since(start)
	if s.GetStatus().GetDiscoveryPhase() != fluidos.Phase_PHASE_TIMED_OUT || s.GetStatus().GetSolverPhase() != fluidos.Phase_PHASE_FAILED {
		t.Errorf("solver ended %v, want discovery TIMED_OUT", s.GetStatus())
	}
	if took > limit+5*time.Second {
		t.Errorf("the timeout of %v fired after %v", limit, took)
	}
}

func providerCapacity(arch string, cpu, mem int64) provider.Capacity {
	return provider.Capacity{Architecture: arch, CPU: cpu, Memory: mem, Pods: 110, Storage: 100 << 30}
}

func TestDeleteARunningSolver(t *testing.T) {
	t.Parallel()
	nw := nodetest.NewNetwork(t)
	buyer := nw.Start(node.Options{NodeID: "buyer", Capacity: capacity("amd64"), Peers: []string{hungPeer(t)}, PeerTimeout: time.Minute})
	ctx := ctxT(t)
	created, err := buyer.Solvers().CreateSolver(ctx, &fluidos.CreateSolverRequest{Solver: buy(cpuAtLeast(1), nil)})
	if err != nil {
		t.Fatal(err)
	}
	id := created.GetSolver().GetId()
	// Wait until it is stuck in its discovery, then delete it.
	deadline := time.Now().Add(20 * time.Second)
	for {
		got, err := buyer.Solvers().GetSolver(ctx, &fluidos.GetSolverRequest{Id: id})
		if err != nil {
			t.Fatal(err)
		}
		if got.GetSolver().GetStatus().GetDiscoveryPhase() == fluidos.Phase_PHASE_RUNNING {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the solver never ran its discovery: %v", got.GetSolver().GetStatus())
		}
		time.Sleep(10 * time.Millisecond)
	}
	start := time.Now()
	if _, err := buyer.Solvers().DeleteSolver(ctx, &fluidos.DeleteSolverRequest{Id: id}); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("deleting a running solver took %v", took)
	}
	list, err := buyer.Solvers().ListSolvers(ctx, &fluidos.ListSolversRequest{})
	if err != nil || len(list.GetSolvers()) != 0 {
		t.Errorf("solvers after delete: %v, %v", list.GetSolvers(), err)
	}
	if _, err := buyer.Solvers().GetDiscovery(ctx, &fluidos.GetDiscoveryRequest{Id: "discovery-" + id}); err == nil {
		t.Error("the deleted solver's discovery is still there")
	}
}

func TestSolverResumesAfterTheBuyerRestarts(t *testing.T) {
	t.Parallel()
	nw := nodetest.NewNetwork(t)
	bob := nw.Start(node.Options{NodeID: "bob", Capacity: capacity("amd64")})
	// The buyer first knows only a peer that never answers: its solver
	// hangs in discovery when the buyer stops.
	buyer := nw.Start(node.Options{NodeID: "buyer", Capacity: capacity("amd64"), Peers: []string{hungPeer(t)}, PeerTimeout: time.Minute})
	ctx := ctxT(t)
	created, err := buyer.Solvers().CreateSolver(ctx, &fluidos.CreateSolverRequest{Solver: buy(cpuAtLeast(1000), partition(1000, 1<<30, 1))})
	if err != nil {
		t.Fatal(err)
	}
	id := created.GetSolver().GetId()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		got, err := buyer.Solvers().GetSolver(ctx, &fluidos.GetSolverRequest{Id: id})
		if err != nil {
			t.Fatal(err)
		}
		if got.GetSolver().GetStatus().GetDiscoveryPhase() == fluidos.Phase_PHASE_RUNNING {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the solver never ran its discovery")
		}
	}
	buyer.RestartWith(func(o *node.Options) { o.Peers = []string{bob.RearAddr()} })
	s := buyer.WaitSolver(id, 30*time.Second)
	if s.GetStatus().GetSolverPhase() != fluidos.Phase_PHASE_SOLVED || s.GetStatus().GetContractId() == "" {
		t.Errorf("the resumed solver ended %v", s.GetStatus())
	}
}
