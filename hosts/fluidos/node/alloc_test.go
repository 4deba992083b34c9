package node_test

import (
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/hosts/fluidos/node"
	"github.com/edgekit/edgekit/hosts/fluidos/nodetest"
	"github.com/edgekit/edgekit/hosts/fluidos/provider"
	"github.com/edgekit/edgekit/internal/kvservice"
	"github.com/edgekit/edgekit/platforms/fake"
)

var (
	bought = fluidos.ContractRole_CONTRACT_ROLE_BOUGHT
	sold   = fluidos.ContractRole_CONTRACT_ROLE_SOLD
)

// allocate is a solver that buys what sel selects and waits for it to be
// provisioned.
func allocate(sel *fluidos.Selector, cfg *fluidos.Configuration) *fluidos.Solver {
	s := buy(sel, cfg)
	s.EstablishPeering = true
	return s
}

func kvSelector() *fluidos.Selector {
	return &fluidos.Selector{Filter: &fluidos.Selector_Service{Service: &fluidos.ServiceSelector{Tags: []string{"kv"}}}}
}

func kvConfig(params map[string]string) *fluidos.Configuration {
	return &fluidos.Configuration{Spec: &fluidos.Configuration_Service{Service: &fluidos.ServiceConfiguration{Parameters: params}}}
}

// solve creates s on n and waits for it to end.
func solve(t *testing.T, n *nodetest.Node, s *fluidos.Solver) *fluidos.Solver {
	t.Helper()
	created, err := n.Solvers().CreateSolver(ctxT(t), &fluidos.CreateSolverRequest{Solver: s})
	if err != nil {
		t.Fatal(err)
	}
	return n.WaitSolver(created.GetSolver().GetId(), 60*time.Second)
}

func TestSolverAllocatesAServiceAndDeletingItReleasesBothSides(t *testing.T) {
	t.Parallel()
	nw := nodetest.NewNetwork(t)
	bob := nw.Start(node.Options{NodeID: "bob", Capacity: capacity("amd64"), Blueprints: []*fluidos.ServiceBlueprint{kvservice.Blueprint("kv", 1)}})
	alice := nw.Start(node.Options{NodeID: "alice", Capacity: capacity("amd64"), Peers: []string{bob.RearAddr()}})
	ctx := ctxT(t)
	s := solve(t, alice, allocate(kvSelector(), kvConfig(map[string]string{"username": "alice", "password": "open-sesame-1"})))
	st := s.GetStatus()
	if st.GetSolverPhase() != fluidos.Phase_PHASE_SOLVED || st.GetAllocationPhase() != fluidos.Phase_PHASE_SOLVED {
		t.Fatalf("solver ended %v", st)
	}
	aid := st.GetAllocationId()
	if aid != provider.AllocationID(st.GetContractId()) {
		t.Errorf("allocation %q of contract %q", aid, st.GetContractId())
	}
	alice.WaitAllocation(aid, bought, 10*time.Second, "ACTIVE", nodetest.InState(fluidos.AllocationState_ALLOCATION_STATE_ACTIVE))
	if cr := credentials(t, alice, aid); cr.GetUsername() != "alice" || cr.GetPassword() != "open-sesame-1" || !strings.HasPrefix(cr.GetEndpoint(), "http://") {
		t.Errorf("the buyer's credentials %v", cr)
	}
	theirs, err := bob.Allocations().GetAllocation(ctx, &fluidos.GetAllocationRequest{Id: nodetest.SoldID(aid)})
	if err != nil {
		t.Fatal(err)
	}
	if theirs.GetRole() != sold || theirs.GetAllocation().GetCredentials() != nil || theirs.GetAllocation().GetResources().GetAppInst() == "" {
		t.Errorf("the seller's API shows %v (%v)", theirs.GetAllocation(), theirs.GetRole())
	}
	list, err := bob.Allocations().ListAllocations(ctx, &fluidos.ListAllocationsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := protojson.Marshal(list); strings.Contains(string(b), "open-sesame-1") {
		t.Error("the seller's allocation list shows the buyer's password")
	}

	if _, err := alice.Solvers().DeleteSolver(ctx, &fluidos.DeleteSolverRequest{Id: s.GetId()}); err != nil {
		t.Fatal(err)
	}
	bob.WaitAllocation(nodetest.SoldID(aid), sold, 20*time.Second, "RELEASED", nodetest.InState(fluidos.AllocationState_ALLOCATION_STATE_RELEASED))
	mine := alice.WaitAllocation(aid, bought, 20*time.Second, "RELEASED", nodetest.InState(fluidos.AllocationState_ALLOCATION_STATE_RELEASED))
	if !strings.Contains(mine.GetReleaseReason(), "was deleted") || mine.GetCredentials() != nil {
		t.Errorf("the buyer's released allocation: %v", mine)
	}
	for who, id := range map[string]string{"alice": st.GetContractId(), "bob": nodetest.SoldID(st.GetContractId())} {
		n := map[string]*nodetest.Node{"alice": alice, "bob": bob}[who]
		c, err := n.Contracts().GetContract(ctx, &fluidos.GetContractRequest{Id: id})
		if err != nil {
			t.Fatal(err)
		}
		if c.GetContract().GetState() != fluidos.ContractState_CONTRACT_STATE_RELEASED {
			t.Errorf("%s's contract is %v", who, c.GetContract().GetState())
		}
	}
	fl, err := bob.Flavors().ListFlavors(ctx, &fluidos.ListFlavorsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fl.GetFlavors() {
		if f.GetService() != nil && (!f.GetAvailability() || f.GetService().GetSoldInstances() != 0) {
			t.Errorf("the service is not back on sale: %v", f)
		}
	}
}

func TestBuyerThatDisappearsLosesWhatItBought(t *testing.T) {
	t.Parallel()
	nw := nodetest.NewNetwork(t)
	bob := nw.Start(node.Options{NodeID: "bob", Capacity: capacity("amd64"), ContractLease: time.Second})
	alice := nw.Start(node.Options{NodeID: "alice", Capacity: capacity("amd64"), Peers: []string{bob.RearAddr()}, RenewInterval: 100 * time.Millisecond})
	s := solve(t, alice, allocate(cpuAtLeast(1000), partition(1000, 1<<30, 4)))
	if s.GetStatus().GetSolverPhase() != fluidos.Phase_PHASE_SOLVED {
		t.Fatalf("solver ended %v", s.GetStatus())
	}
	aid := s.GetStatus().GetAllocationId()
	// Renewed, the contract outlives its lease several times over.
	time.Sleep(2500 * time.Millisecond)
	bob.WaitAllocation(nodetest.SoldID(aid), sold, time.Second, "still ACTIVE while renewed", nodetest.InState(fluidos.AllocationState_ALLOCATION_STATE_ACTIVE))
	alice.Stop()
	a := bob.WaitAllocation(nodetest.SoldID(aid), sold, 20*time.Second, "RELEASED once its buyer is gone", nodetest.InState(fluidos.AllocationState_ALLOCATION_STATE_RELEASED))
	if !strings.Contains(a.GetReleaseReason(), "without a renewal") {
		t.Errorf("release reason %q", a.GetReleaseReason())
	}
	fl, err := bob.Flavors().ListFlavors(ctxT(t), &fluidos.ListFlavorsRequest{Selector: &fluidos.Selector{FlavorType: fluidos.FlavorType_FLAVOR_TYPE_K8SLICE}})
	if err != nil || len(fl.GetFlavors()) != 1 || fl.GetFlavors()[0].GetK8Slice().GetCharacteristics().GetCpu() != 4000 {
		t.Errorf("the partition is not back on sale: %v, %v", fl.GetFlavors(), err)
	}
}

func TestReleaseContractFromEitherSide(t *testing.T) {
	t.Parallel()
	nw := nodetest.NewNetwork(t)
	bob := nw.Start(node.Options{NodeID: "bob", Capacity: capacity("amd64")})
	alice := nw.Start(node.Options{NodeID: "alice", Capacity: capacity("amd64"), Peers: []string{bob.RearAddr()}})
	ctx := ctxT(t)
	one := solve(t, alice, allocate(cpuAtLeast(1000), partition(1000, 1<<30, 4))).GetStatus()
	two := solve(t, alice, allocate(cpuAtLeast(1000), partition(1000, 1<<30, 4))).GetStatus()
	if one.GetSolverPhase() != fluidos.Phase_PHASE_SOLVED || two.GetSolverPhase() != fluidos.Phase_PHASE_SOLVED {
		t.Fatalf("solvers ended %v and %v", one, two)
	}
	// The buyer gives one back...
	r, err := alice.Contracts().ReleaseContract(ctx, &fluidos.ReleaseContractRequest{Id: one.GetContractId(), Reason: "no longer needed"})
	if err != nil || r.GetRole() != bought {
		t.Fatalf("release by the buyer: %v, %v", r, err)
	}
	a := bob.WaitAllocation(nodetest.SoldID(one.GetAllocationId()), sold, 20*time.Second, "RELEASED", nodetest.InState(fluidos.AllocationState_ALLOCATION_STATE_RELEASED))
	if a.GetReleaseReason() != "no longer needed" {
		t.Errorf("reason %q", a.GetReleaseReason())
	}
	// ...the seller takes the other back.
	if r, err = bob.Contracts().ReleaseContract(ctx, &fluidos.ReleaseContractRequest{Id: nodetest.SoldID(two.GetContractId())}); err != nil || r.GetRole() != sold {
		t.Fatalf("release by the seller: %v, %v", r, err)
	}
	a = alice.WaitAllocation(two.GetAllocationId(), bought, 20*time.Second, "RELEASED", nodetest.InState(fluidos.AllocationState_ALLOCATION_STATE_RELEASED))
	if a.GetReleaseReason() != "taken back by its seller" {
		t.Errorf("reason %q", a.GetReleaseReason())
	}
	if _, err := alice.Contracts().ReleaseContract(ctx, &fluidos.ReleaseContractRequest{Id: "c-none"}); err == nil {
		t.Error("releasing an unknown contract succeeded")
	}
}

func TestWhatCannotBeProvisionedIsRefusedAtReservation(t *testing.T) {
	t.Parallel()
	nw := nodetest.NewNetwork(t)
	vm := &fluidos.Flavor{Id: "bob-vm", Price: &fluidos.Price{Amount: "1", Currency: "EUR", Period: "hourly"},
		Spec: &fluidos.Flavor_Vm{Vm: &fluidos.VM{Cpu: 2000, Memory: 2 << 30, Storage: 10 << 30, OsImage: "debian-12", Architecture: "amd64"}}}
	sensor := &fluidos.Flavor{Id: "bob-thermometer", Price: &fluidos.Price{Amount: "0.01", Currency: "EUR", Period: "hourly"},
		Spec: &fluidos.Flavor_Sensor{Sensor: &fluidos.Sensor{SensorType: "temperature", Unit: "celsius", SamplingRateHz: 1}}}
	bob := nw.Start(node.Options{NodeID: "bob", Capacity: capacity("amd64"), Flavors: []*fluidos.Flavor{vm, sensor},
		Blueprints: []*fluidos.ServiceBlueprint{kvservice.Blueprint("kv", 0)}})
	alice := nw.Start(node.Options{NodeID: "alice", Capacity: capacity("amd64"), Peers: []string{bob.RearAddr()}})
	for _, c := range []struct {
		name string
		sel  *fluidos.Selector
		cfg  *fluidos.Configuration
		want string
	}{
		{"vm", &fluidos.Selector{Filter: &fluidos.Selector_Vm{Vm: &fluidos.VMSelector{}}}, nil, "not virtual machines"},
		{"sensor", &fluidos.Selector{Filter: &fluidos.Selector_Sensor{Sensor: &fluidos.SensorSelector{}}}, nil, "no sensor data endpoint"},
		{"consumer hosting", kvSelector(), &fluidos.Configuration{Spec: &fluidos.Configuration_Service{Service: &fluidos.ServiceConfiguration{
			Parameters: map[string]string{"password": "long-enough-1"}, HostingPolicy: fluidos.HostingPolicy_HOSTING_POLICY_CONSUMER}}}, "hosting policy Consumer"},
	} {
		s := solve(t, alice, allocate(c.sel, c.cfg))
		st := s.GetStatus()
		if st.GetDiscoveryPhase() != fluidos.Phase_PHASE_SOLVED || st.GetReservationPhase() != fluidos.Phase_PHASE_FAILED ||
			len(st.GetAttempts()) != 1 || !strings.Contains(st.GetAttempts()[0].GetError(), c.want) {
			t.Errorf("%s: %v", c.name, st)
		}
	}
	cs, err := bob.Contracts().ListContracts(ctxT(t), &fluidos.ListContractsRequest{})
	if err != nil || len(cs.GetContracts()) != 0 {
		t.Errorf("bob sold %v, %v", cs.GetContracts(), err)
	}
}

func TestAllocationThatDoesNotCompleteInTimeIsReleased(t *testing.T) {
	t.Parallel()
	nw := nodetest.NewNetwork(t)
	plat := fake.New(fake.Options{})
	gate := plat.Pause(fake.OpCreateCluster, "")
	bob := nw.Start(node.Options{NodeID: "bob", Capacity: capacity("amd64"), Platform: plat})
	alice := nw.Start(node.Options{NodeID: "alice", Capacity: capacity("amd64"), Peers: []string{bob.RearAddr()}})
	s := allocate(cpuAtLeast(1000), partition(1000, 1<<30, 4))
	s.Timeouts = &fluidos.SolverTimeouts{Allocation: durationpb.New(500 * time.Millisecond)}
	st := solve(t, alice, s).GetStatus()
	if st.GetSolverPhase() != fluidos.Phase_PHASE_FAILED || st.GetAllocationPhase() != fluidos.Phase_PHASE_TIMED_OUT ||
		!strings.Contains(st.GetMessage(), "allocation timed out") || st.GetCredentials().GetToken() != "" {
		t.Fatalf("solver ended %v", st)
	}
	gate.Release()
	a := bob.WaitAllocation(nodetest.SoldID(st.GetAllocationId()), sold, 20*time.Second, "RELEASED", nodetest.InState(fluidos.AllocationState_ALLOCATION_STATE_RELEASED))
	if !strings.Contains(a.GetReleaseReason(), "did not complete within 500ms") {
		t.Errorf("release reason %q", a.GetReleaseReason())
	}
	if clusters, _ := plat.Counts(); clusters != 0 {
		t.Errorf("%d clusters left at bob's", clusters)
	}
}
