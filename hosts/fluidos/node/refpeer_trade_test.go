package node_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgekit/edgekit/fluidos"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/edgekit/edgekit/hosts/fluidos/node"
	"github.com/edgekit/edgekit/hosts/fluidos/nodetest"
	"github.com/edgekit/edgekit/internal/kvservice"
)

// TestBuyerRefusesAReservationTheReferenceKept: a reference seller answers
// a reservation of a flavor this buyer already reserved with the earlier
// transaction and its earlier amounts. The buyer names it, and never buys
// it.
func TestBuyerRefusesAReservationTheReferenceKept(t *testing.T) {
	t.Parallel()
	nw := nodetest.NewNetwork(t)
	ref := newRefPeer(t, refOptions{})
	// An earlier reservation by alice, with other amounts.
	earlier := refReserve(t, ref, "alice", map[string]any{"type": "k8slice", "data": map[string]any{"cpu": "4", "memory": "8Gi", "pods": "40"}})
	alice := nw.Start(node.Options{NodeID: "alice", Capacity: capacity("amd64"), InsecureREAR: true, Peers: []string{ref.addr}})
	ctx := ctxT(t)
	created, err := alice.Solvers().CreateSolver(ctx, &fluidos.CreateSolverRequest{Solver: buy(cpuAtLeast(1000), partition(2000, 4<<30, 20))})
	if err != nil {
		t.Fatal(err)
	}
	s := alice.WaitSolver(created.GetSolver().GetId(), 30*time.Second)
	if n := ref.bought.Load(); n != 0 || s.GetStatus().GetContractId() != "" {
		t.Fatalf("the buyer bought the kept reservation (%d purchases): %v", n, s.GetStatus())
	}
	msg := s.GetStatus().GetMessage()
	if s.GetStatus().GetSolverPhase() != fluidos.Phase_PHASE_FAILED || !strings.Contains(msg, "kept an earlier reservation") ||
		!strings.Contains(msg, earlier["transactionID"].(string)) || !strings.Contains(msg, "cpu 4, asked 2") {
		t.Fatalf("want a failure naming the kept reservation and its amounts, got %v", s.GetStatus())
	}
}

// TestBuyerNamesTheReferenceRefusingASecondPurchase: a reference seller
// sells each flavor once (its contract names follow the flavor); a buyer
// that reserved before another bought it is refused with 500
// AlreadyExists, which it names for what it is.
func TestBuyerNamesTheReferenceRefusingASecondPurchase(t *testing.T) {
	t.Parallel()
	nw := nodetest.NewNetwork(t)
	var (
		first atomic.Bool
		ref   *refPeer
		carol map[string]any
		other = make(chan int, 1)
	)
	ref = newRefPeer(t, refOptions{BeforePurchase: func() {
		if first.CompareAndSwap(false, true) { // carol buys first, between alice's reservation and purchase
			code, _ := refCall(t, ref.addr, "/api/v2/transactions/"+carol["transactionID"].(string)+"/purchase",
				map[string]any{"liqoCredentials": map[string]any{"clusterID": "carol", "kubeconfig": "x"}})
			other <- code
		}
	}})
	carol = refReserve(t, ref, "carol", map[string]any{"type": "k8slice", "data": map[string]any{"cpu": "1", "memory": "1Gi", "pods": "10"}})
	alice := nw.Start(node.Options{NodeID: "alice", Capacity: capacity("amd64"), InsecureREAR: true, Peers: []string{ref.addr}})
	ctx := ctxT(t)
	created, err := alice.Solvers().CreateSolver(ctx, &fluidos.CreateSolverRequest{Solver: buy(cpuAtLeast(1000), partition(2000, 4<<30, 20))})
	if err != nil {
		t.Fatal(err)
	}
	s := alice.WaitSolver(created.GetSolver().GetId(), 30*time.Second)
	if code := <-other; code != http.StatusOK {
		t.Fatalf("carol's purchase: %d", code)
	}
	msg := s.GetStatus().GetMessage()
	if s.GetStatus().GetSolverPhase() != fluidos.Phase_PHASE_FAILED || !strings.Contains(msg, "refused a second purchase of this flavor") ||
		!strings.Contains(msg, "fluidos.eu-k8slice-6a7b2d1c0e") {
		t.Fatalf("want a failure naming the refused second purchase, got %v", s.GetStatus())
	}
}

// TestContractsOfTwoSellersWithOneIDAreBothHeld: contract IDs are only
// unique at their seller (a reference node names them after its flavor).
// A buyer holds the contracts of two sellers that answer with one ID, each
// under its seller's identity: both solvers end SOLVED, each contract is
// shown as its own seller's, the bare ID is refused as ambiguous, and
// deleting one solver asks only its own seller to release its contract.
func TestContractsOfTwoSellersWithOneIDAreBothHeld(t *testing.T) {
	t.Parallel()
	nw := nodetest.NewNetwork(t)
	const name = "contract-k8slice-1a2b"
	a := newRefPeer(t, refOptions{Owner: "provider-a", FlavorID: "fluidos.eu-k8slice-aaaa", ContractName: name, ContractRoutes: true})
	b := newRefPeer(t, refOptions{Owner: "provider-b", FlavorID: "fluidos.eu-k8slice-bbbb", ContractName: name, ContractRoutes: true})
	peers := map[string]*refPeer{"provider-a": a, "provider-b": b}
	alice := nw.Start(node.Options{NodeID: "alice", Capacity: capacity("amd64"), InsecureREAR: true, Peers: []string{a.addr, b.addr}})
	ctx := ctxT(t)
	solve := func() *fluidos.Solver {
		created, err := alice.Solvers().CreateSolver(ctx, &fluidos.CreateSolverRequest{Solver: buy(cpuAtLeast(1000), partition(2000, 4<<30, 20))})
		if err != nil {
			t.Fatal(err)
		}
		return alice.WaitSolver(created.GetSolver().GetId(), 30*time.Second)
	}
	first := solve()
	second := solve() // the first seller's flavor is sold: the other seller's
	if n := a.bought.Load() + b.bought.Load(); n != 2 {
		t.Fatalf("the sellers sold %d contracts, want 2 (second solver: %v)", n, second.GetStatus())
	}
	sellerOf := map[string]string{} // solver -> seller
	for _, s := range []*fluidos.Solver{first, second} {
		if s.GetStatus().GetSolverPhase() != fluidos.Phase_PHASE_SOLVED {
			t.Fatalf("solver %s: %v", s.GetId(), s.GetStatus())
		}
		got, err := alice.Contracts().GetContract(ctx, &fluidos.GetContractRequest{Id: s.GetStatus().GetContractId()})
		if err != nil {
			t.Fatalf("solver %s's contract %s: %v", s.GetId(), s.GetStatus().GetContractId(), err)
		}
		ct := got.GetContract()
		seller := ct.GetSeller().GetNodeId()
		if want := seller + "/" + name; ct.GetId() != want || s.GetStatus().GetContractId() != want {
			t.Fatalf("solver %s holds contract %s (record %s), want %s", s.GetId(), s.GetStatus().GetContractId(), ct.GetId(), want)
		}
		if !strings.HasPrefix(ct.GetTransactionId(), "tx-"+seller+"-") {
			t.Fatalf("contract %s holds transaction %s, not one of %s", ct.GetId(), ct.GetTransactionId(), seller)
		}
		sellerOf[s.GetId()] = seller
	}
	if sellerOf[first.GetId()] == sellerOf[second.GetId()] {
		t.Fatalf("both solvers bought from %s", sellerOf[first.GetId()])
	}
	cs, err := alice.Contracts().ListContracts(ctx, &fluidos.ListContractsRequest{Role: fluidos.ContractRole_CONTRACT_ROLE_BOUGHT})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(cs.GetContracts()); n != 2 {
		t.Fatalf("alice lists %d contracts bought, want 2: %v", n, cs.GetContracts())
	}
	_, err = alice.Contracts().GetContract(ctx, &fluidos.GetContractRequest{Id: name})
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "provider-a/"+name) || !strings.Contains(err.Error(), "provider-b/"+name) {
		t.Fatalf("the bare id %s names two contracts: want InvalidArgument naming both, got %v", name, err)
	}
	if _, err := alice.Contracts().ReleaseContract(ctx, &fluidos.ReleaseContractRequest{Id: name}); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("releasing the bare id %s: want InvalidArgument, got %v", name, err)
	}
	if _, err := alice.Allocations().GetAllocation(ctx, &fluidos.GetAllocationRequest{Id: "a-" + name}); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("the allocation a-%s: want InvalidArgument, got %v", name, err)
	}

	// The keeper renews each contract at its seller, under the seller's id.
	for _, s := range []*fluidos.Solver{first, second} {
		alice.WaitAllocation("a-"+s.GetStatus().GetContractId(), fluidos.ContractRole_CONTRACT_ROLE_BOUGHT, 30*time.Second, "ACTIVE",
			nodetest.InState(fluidos.AllocationState_ALLOCATION_STATE_ACTIVE))
	}

	// Deleting the first solver releases its contract at its seller only.
	if _, err := alice.Solvers().DeleteSolver(ctx, &fluidos.DeleteSolverRequest{Id: first.GetId()}); err != nil {
		t.Fatal(err)
	}
	mine, other := peers[sellerOf[first.GetId()]], peers[sellerOf[second.GetId()]]
	alice.WaitAllocation("a-"+first.GetStatus().GetContractId(), fluidos.ContractRole_CONTRACT_ROLE_BOUGHT, 30*time.Second, "RELEASED",
		nodetest.InState(fluidos.AllocationState_ALLOCATION_STATE_RELEASED))
	if got := mine.releasedIDs(); !slices.Equal(got, []string{name}) {
		t.Fatalf("%s was asked to release %v, want [%s]", sellerOf[first.GetId()], got, name)
	}
	if got := other.releasedIDs(); len(got) != 0 {
		t.Fatalf("deleting solver %s asked %s, the other solver's seller, to release %v", first.GetId(), sellerOf[second.GetId()], got)
	}
	kept, err := alice.Allocations().GetAllocation(ctx, &fluidos.GetAllocationRequest{Id: "a-" + second.GetStatus().GetContractId()})
	if err != nil {
		t.Fatal(err)
	}
	if al := kept.GetAllocation(); al.GetReleaseRequested() || al.GetStatus().GetState() != fluidos.AllocationState_ALLOCATION_STATE_ACTIVE {
		t.Fatalf("the second solver's allocation: %v", al)
	}
}

// TestOfferedCPUIsRoundedDown: a reference flavor offering 3986297634n
// CPU offers 3986m, not 3987m: a buyer asking for at least 3987m finds
// nothing there, and one asking for 3986m finds it.
func TestOfferedCPUIsRoundedDown(t *testing.T) {
	t.Parallel()
	nw := nodetest.NewNetwork(t)
	ref := newRefPeer(t, refOptions{Flavor: func(f map[string]any) {
		f["type"].(map[string]any)["data"].(map[string]any)["charateristics"].(map[string]any)["cpu"] = "3986297634n"
	}})
	alice := nw.Start(node.Options{NodeID: "alice", Capacity: capacity("amd64"), InsecureREAR: true, Peers: []string{ref.addr}})
	ctx := ctxT(t)
	for _, c := range []struct {
		min  int64
		want fluidos.Phase
	}{{3987, fluidos.Phase_PHASE_FAILED}, {3986, fluidos.Phase_PHASE_SOLVED}} {
		created, err := alice.Solvers().CreateSolver(ctx, &fluidos.CreateSolverRequest{Solver: &fluidos.Solver{Selector: cpuAtLeast(c.min), FindCandidate: true}})
		if err != nil {
			t.Fatal(err)
		}
		s := alice.WaitSolver(created.GetSolver().GetId(), 30*time.Second)
		if s.GetStatus().GetSolverPhase() != c.want {
			t.Errorf("at least %dm of a flavor offering 3986297634n: %v, want %v", c.min, s.GetStatus(), c.want)
		}
	}
}

// TestServiceReserveWithAK8SliceConfigurationNamesTheTypes: a reference
// buyer reserving a Service flavor with a k8slice configuration is told
// the types do not match, not that a service parameter is missing.
func TestServiceReserveWithAK8SliceConfigurationNamesTheTypes(t *testing.T) {
	t.Parallel()
	nw := nodetest.NewNetwork(t)
	bob := nw.Start(node.Options{NodeID: "bob", Capacity: capacity("amd64"), InsecureREAR: true, Blueprints: []*fluidos.ServiceBlueprint{kvservice.Blueprint("kv", 1)}})
	resp, err := http.Get("http://" + bob.RearAddr() + "/api/v2/flavors/service")
	if err != nil {
		t.Fatal(err)
	}
	var flavors []map[string]any
	err = json.NewDecoder(resp.Body).Decode(&flavors)
	resp.Body.Close()
	if err != nil || len(flavors) != 1 {
		t.Fatalf("service flavors: %v %v", err, flavors)
	}
	req := payload(t, "reserve_request_k8slice.json")
	req["flavorID"] = flavors[0]["flavorID"]
	b, _ := json.Marshal(req)
	resp, err = http.Post("http://"+bob.RearAddr()+"/api/v2/reservations", "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "the configuration's type (k8slice) does not match") ||
		!strings.Contains(string(body), "(service)") {
		t.Fatalf("a k8slice configuration for a service flavor: %d %s", resp.StatusCode, body)
	}
}

// TestBuyerRespectsTheSellersMinimumAndStep: a buyer asking 1Gi of a
// flavor whose memory step is 100Mi reserves 1100Mi (the next multiple of
// the step, which the seller's rules accept), and 20 pods of one whose
// pods minimum is 30 reserves 30; it says so in the solver's message.
func TestBuyerRespectsTheSellersMinimumAndStep(t *testing.T) {
	t.Parallel()
	nw := nodetest.NewNetwork(t)
	ref := newRefPeer(t, refOptions{Flavor: func(f map[string]any) {
		f["type"].(map[string]any)["data"].(map[string]any)["policies"] = map[string]any{"partitionability": map[string]any{
			"cpuMin": "1", "memoryMin": "100Mi", "podsMin": "30", "cpuStep": "500m", "memoryStep": "100Mi", "podsStep": "5"}}
	}})
	alice := nw.Start(node.Options{NodeID: "alice", Capacity: capacity("amd64"), InsecureREAR: true, Peers: []string{ref.addr}})
	ctx := ctxT(t)
	created, err := alice.Solvers().CreateSolver(ctx, &fluidos.CreateSolverRequest{Solver: buy(cpuAtLeast(1000), partition(2000, 1<<30, 20))})
	if err != nil {
		t.Fatal(err)
	}
	s := alice.WaitSolver(created.GetSolver().GetId(), 30*time.Second)
	if s.GetStatus().GetSolverPhase() != fluidos.Phase_PHASE_SOLVED {
		t.Fatalf("solver: %v", s.GetStatus())
	}
	got, err := alice.Contracts().GetContract(ctx, &fluidos.GetContractRequest{Id: s.GetStatus().GetContractId()})
	if err != nil {
		t.Fatal(err)
	}
	k := got.GetContract().GetConfiguration().GetK8Slice()
	if k.GetMemory() != 1100<<20 || k.GetPods() != 30 || k.GetCpu() != 2000 {
		t.Fatalf("bought cpu %dm, memory %d, pods %d; want 2000m, 1100Mi (%d), 30", k.GetCpu(), k.GetMemory(), k.GetPods(), 1100<<20)
	}
	if a := s.GetStatus().GetAttempts(); len(a) != 1 || a[0].GetError() != "" {
		t.Fatalf("attempts: %v", a)
	}
	res, _, err := alice.Running().Node.Consumer.Reservations().Get(ctx, s.GetStatus().GetReservationId())
	if err != nil {
		t.Fatal(err)
	}
	if msg := res.GetStatus().GetMessage(); !strings.Contains(msg, "memory 1Gi raised to 1100Mi") || !strings.Contains(msg, "pods 20 raised to 30") {
		t.Fatalf("the reservation does not say what was raised: %q", msg)
	}
}

// TestAllocateAtAReferenceSellerStopsAtTheFirst404: a reference seller has
// no allocation, renewal or release route. A solver that asks for the
// allocation (--allocate) stops at the seller's first 404, well before its
// allocation timeout, with the contract bought and kept and a message
// saying so; releasing that contract says the seller has no release route
// instead of claiming the release was asked; the solver can still be
// deleted.
func TestAllocateAtAReferenceSellerStopsAtTheFirst404(t *testing.T) {
	t.Parallel()
	nw := nodetest.NewNetwork(t)
	ref := newRefPeer(t, refOptions{})
	alice := nw.Start(node.Options{NodeID: "alice", Capacity: capacity("amd64"), InsecureREAR: true, Peers: []string{ref.addr}})
	ctx := ctxT(t)
	sv := buy(cpuAtLeast(1000), partition(2000, 4<<30, 20))
	sv.EstablishPeering = true
	sv.Timeouts = &fluidos.SolverTimeouts{Allocation: durationpb.New(10 * time.Minute)} // never reached by the wait below
	created, err := alice.Solvers().CreateSolver(ctx, &fluidos.CreateSolverRequest{Solver: sv})
	if err != nil {
		t.Fatal(err)
	}
	s := alice.WaitSolver(created.GetSolver().GetId(), 30*time.Second)
	st := s.GetStatus()
	if st.GetPurchasePhase() != fluidos.Phase_PHASE_SOLVED || st.GetAllocationPhase() != fluidos.Phase_PHASE_FAILED ||
		st.GetSolverPhase() != fluidos.Phase_PHASE_FAILED || st.GetContractId() == "" {
		t.Fatalf("want the purchase SOLVED and the allocation FAILED with the contract kept, got %v", st)
	}
	cid := st.GetContractId()
	for _, w := range []string{"contract " + cid + " is bought from " + ref.owner, "does not provision over REAR", "the contract is kept"} {
		if !strings.Contains(st.GetMessage(), w) {
			t.Errorf("the solver's message %q does not say %q", st.GetMessage(), w)
		}
	}
	if cr, err := alice.Allocations().GetCredentials(ctx, &fluidos.GetCredentialsRequest{Id: cid}); err != nil || cr.GetCredentials().GetKubeconfig() == "" {
		t.Errorf("the contract's peering credentials: %v %v", cr, err)
	}
	got, err := alice.Contracts().GetContract(ctx, &fluidos.GetContractRequest{Id: cid})
	if err != nil || got.GetContract().GetState() != fluidos.ContractState_CONTRACT_STATE_ACTIVE {
		t.Fatalf("the contract bought: %v %v", got, err)
	}

	_, err = alice.Contracts().ReleaseContract(ctx, &fluidos.ReleaseContractRequest{Id: cid})
	if status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), "has no release route") ||
		!strings.Contains(err.Error(), "nothing was asked of it") || !strings.Contains(err.Error(), "expiration time") {
		t.Fatalf("releasing a contract of a seller without release route: %v", err)
	}
	a, err := alice.Allocations().GetAllocation(ctx, &fluidos.GetAllocationRequest{Id: "a-" + cid, Role: fluidos.ContractRole_CONTRACT_ROLE_BOUGHT})
	if err != nil || a.GetAllocation().GetReleaseRequested() {
		t.Fatalf("the allocation claims a release was asked: %v %v", a, err)
	}
	if _, err := alice.Solvers().DeleteSolver(ctx, &fluidos.DeleteSolverRequest{Id: s.GetId()}); err != nil {
		t.Fatalf("deleting the solver: %v", err)
	}
}
