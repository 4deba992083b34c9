package node_test

import (
	"strings"
	"testing"
	"time"

	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/hosts/fluidos/node"
	"github.com/edgekit/edgekit/hosts/fluidos/nodetest"
	"github.com/edgekit/edgekit/hosts/fluidos/provider"
)

// refBuy buys cfg (the wire configuration) of flavor at the seller at addr
// as a reference buyer named buyer does (see REAR.md): a reservation with
// its liqoID, a purchase with its liqoCredentials, and never a renewal or
// a release (it has no such route). It returns the contract.
func refBuy(t *testing.T, addr, flavor, buyer string, cfg map[string]any) map[string]any {
	t.Helper()
	code, tx := refCall(t, addr, "/api/v2/reservations", map[string]any{
		"flavorID": flavor, "buyerID": map[string]any{"ID": buyer, "domain": "fluidos.eu", "additionalInformation": map[string]any{"liqoID": buyer + "-liqo"}},
		"configuration": cfg,
	})
	if code != 200 {
		t.Fatalf("reserving %s as %s: %d", flavor, buyer, code)
	}
	code, c := refCall(t, addr, "/api/v2/transactions/"+tx["transactionID"].(string)+"/purchase",
		map[string]any{"liqoCredentials": map[string]any{"clusterID": buyer + "-liqo", "kubeconfig": "apiVersion: v1\nkind: Config\n"}})
	if code != 200 {
		t.Fatalf("buying %s as %s: %d", tx["transactionID"], buyer, code)
	}
	return c
}

// TestAReferenceBuyerKeepsWhatItBoughtPastTheLease: a reference buyer
// never renews. What it bought from an edgekit seller lasts until the
// contract's expirationTime (the seller's --contract-term), not the
// seller's --contract-lease, which the contract announces and which still
// ends the contract of a buyer that renewed and then disappeared. The
// seller's operator can still take it back, and a contract whose term
// ends is released.
func TestAReferenceBuyerKeepsWhatItBoughtPastTheLease(t *testing.T) {
	t.Parallel()
	nw := nodetest.NewNetwork(t)
	bob := nw.Start(node.Options{NodeID: "bob", Capacity: capacity("amd64"), InsecureREAR: true, ContractLease: time.Second})
	slice := map[string]any{"type": "k8slice", "data": map[string]any{"cpu": "1", "memory": "1Gi", "pods": "4"}}
	refc := refBuy(t, bob.RearAddr(), provider.K8SliceFlavorID("bob"), "ref-buyer", slice)
	if lease := refc["extraInformation"].(map[string]any)[provider.ExtraContractLease]; lease != "1s" {
		t.Errorf("the contract announces the lease %v, want 1s", lease)
	}
	end, err := time.Parse(time.RFC3339, refc["expirationTime"].(string))
	if err != nil || end.Before(time.Now().Add(provider.DefaultContractTerm-time.Hour)) {
		t.Errorf("the contract's expirationTime %v (%v), want its term (%v) from now", end, err, provider.DefaultContractTerm)
	}
	refAlloc := provider.AllocationID(refc["contractID"].(string))

	// An edgekit buyer renews, then disappears: the lease ends its contract.
	alice := nw.Start(node.Options{NodeID: "alice", Capacity: capacity("amd64"), InsecureREAR: true, Peers: []string{bob.RearAddr()}, RenewInterval: 100 * time.Millisecond})
	s := solve(t, alice, allocate(cpuAtLeast(1000), partition(1000, 1<<30, 4)))
	if s.GetStatus().GetSolverPhase() != fluidos.Phase_PHASE_SOLVED {
		t.Fatalf("alice's solver ended %v", s.GetStatus())
	}
	alice.Stop()
	a := bob.WaitAllocation(nodetest.SoldID(s.GetStatus().GetAllocationId()), sold, 20*time.Second, "RELEASED once its buyer stopped renewing", nodetest.InState(fluidos.AllocationState_ALLOCATION_STATE_RELEASED))
	if !strings.Contains(a.GetReleaseReason(), "without a renewal") {
		t.Errorf("release reason %q", a.GetReleaseReason())
	}
	// The reference buyer's contract, older than alice's, was not released
	// by the same lease.
	ctx := ctxT(t)
	got, err := bob.Allocations().GetAllocation(ctx, &fluidos.GetAllocationRequest{Id: refAlloc, Role: sold})
	if err != nil || got.GetAllocation().GetReleaseRequested() || provider.Ended(got.GetAllocation()) {
		t.Fatalf("the reference buyer's allocation was released for not renewing within the lease: %v %v", got, err)
	}
	// Explicit release still works.
	if _, err := bob.Contracts().ReleaseContract(ctx, &fluidos.ReleaseContractRequest{Id: refc["contractID"].(string), Reason: "taken back"}); err != nil {
		t.Fatal(err)
	}
	bob.WaitAllocation(refAlloc, sold, 20*time.Second, "RELEASED when taken back", nodetest.InState(fluidos.AllocationState_ALLOCATION_STATE_RELEASED))

	// Expiry still works: at a seller whose term is short, the contract
	// ends at its expirationTime.
	carol := nw.Start(node.Options{NodeID: "carol", Capacity: capacity("amd64"), InsecureREAR: true, ContractLease: time.Minute, ContractTerm: time.Second})
	short := refBuy(t, carol.RearAddr(), provider.K8SliceFlavorID("carol"), "ref-buyer", slice)
	a = carol.WaitAllocation(provider.AllocationID(short["contractID"].(string)), sold, 20*time.Second, "RELEASED at the end of its term",
		nodetest.InState(fluidos.AllocationState_ALLOCATION_STATE_RELEASED))
	if end, _ := time.Parse(time.RFC3339, short["expirationTime"].(string)); !strings.Contains(a.GetReleaseReason(), "ended at "+end.UTC().Format(time.RFC3339)) {
		t.Errorf("release reason %q, want the contract's end %s", a.GetReleaseReason(), short["expirationTime"])
	}
}
