package provider_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/fluidos/rear"
	"github.com/edgekit/edgekit/hosts/fluidos/provider"
)

// recordingAllocator admits what its refuse function does not refuse and
// records the allocations it is woken for.
type recordingAllocator struct {
	refuse func(f *fluidos.Flavor, cfg *fluidos.Configuration) error
	mu     sync.Mutex
	woken  []string
}

func (a *recordingAllocator) Admit(_ context.Context, f *fluidos.Flavor, cfg *fluidos.Configuration) error {
	if a.refuse != nil {
		return a.refuse(f, cfg)
	}
	return nil
}

func (a *recordingAllocator) Wake(id string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.woken = append(a.woken, id)
}

func (a *recordingAllocator) wokenFor(id string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, w := range a.woken {
		if w == id {
			n++
		}
	}
	return n
}

func withAllocator(a provider.Allocator) envOption {
	return func(c *provider.Config) { c.Allocator = a }
}

func withLease(d time.Duration) envOption { return func(c *provider.Config) { c.ContractLease = d } }

// buy reserves and buys cfg of flavor as buyer.
func (e *env) buy(buyer, flavor string, cfg *fluidos.Configuration) *fluidos.Contract {
	e.t.Helper()
	_, ct := e.reserveAndBuy(e.client(buyer), buyer, flavor, cfg)
	return ct
}

func (e *env) flavor(id string) *fluidos.Flavor {
	e.t.Helper()
	f, err := e.p.Flavor(ctxT(e.t), id)
	if err != nil {
		e.t.Fatal(err)
	}
	return f
}

func TestContractLifecycleReturnsWhatItHeld(t *testing.T) {
	t.Parallel()
	alloc := &recordingAllocator{}
	e := newEnv(t, withAllocator(alloc), withLease(time.Hour))
	ctx := ctxT(t)
	slice := provider.K8SliceFlavorID(seller)
	ct := e.buy("alice", slice, k8sCfg(1000, 1<<30, 10))
	if ct.GetExpirationTime() == nil || time.Until(ct.GetExpirationTime().AsTime()) < 50*time.Minute {
		t.Errorf("the contract's end %v is not a lease from now", ct.GetExpirationTime())
	}
	id := provider.AllocationID(ct.GetId())
	if alloc.wokenFor(id) != 1 {
		t.Errorf("the allocator was woken %d times for the new allocation", alloc.wokenFor(id))
	}
	a, err := e.p.ContractAllocation(ctx, "alice", ct.GetId())
	if err != nil {
		t.Fatal(err)
	}
	if a.GetStatus().GetState() != fluidos.AllocationState_ALLOCATION_STATE_INACTIVE || a.GetFlavorType() != fluidos.FlavorType_FLAVOR_TYPE_K8SLICE ||
		a.GetBuyer().GetNodeId() != "alice" || a.GetSeller().GetNodeId() != seller {
		t.Fatalf("allocation made with the contract: %v", a)
	}
	if got := e.flavor(slice).GetK8Slice().GetCharacteristics().GetCpu(); got != 3000 {
		t.Fatalf("after the sale %dm CPU left, want 3000m", got)
	}

	if _, err := e.p.Release(ctx, "mallory", ct.GetId(), ""); !errors.Is(err, provider.ErrNotBuyer) {
		t.Errorf("release by another node: %v", err)
	}
	a, err = e.p.Release(ctx, "alice", ct.GetId(), "")
	if err != nil {
		t.Fatal(err)
	}
	if a.GetStatus().GetState() != fluidos.AllocationState_ALLOCATION_STATE_RELEASING || !a.GetReleaseRequested() || a.GetReleaseReason() != "released by its buyer" {
		t.Errorf("after release: %v", a)
	}
	if alloc.wokenFor(id) != 2 {
		t.Errorf("the allocator was not woken for the release")
	}
	// Nothing goes back on sale before the teardown is done.
	if got := e.flavor(slice).GetK8Slice().GetCharacteristics().GetCpu(); got != 3000 {
		t.Errorf("released before the teardown: %dm CPU", got)
	}
	for range 2 { // twice: restored once
		if err := e.p.Finish(ctx, id, fluidos.AllocationState_ALLOCATION_STATE_RELEASED, "released"); err != nil {
			t.Fatal(err)
		}
	}
	if got := e.flavor(slice).GetK8Slice().GetCharacteristics().GetCpu(); got != 4000 {
		t.Errorf("after the teardown %dm CPU on sale, want 4000m", got)
	}
	sold, err := e.p.Contract(ctx, ct.GetId())
	if err != nil {
		t.Fatal(err)
	}
	if sold.GetState() != fluidos.ContractState_CONTRACT_STATE_RELEASED || sold.GetReleasedAt() == nil || sold.GetReleaseReason() != "released by its buyer" {
		t.Errorf("contract after teardown: %v", sold)
	}
	// A sync (a node restart) agrees: the released transaction holds nothing.
	if err := e.p.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if got := e.flavor(slice).GetK8Slice().GetCharacteristics().GetCpu(); got != 4000 {
		t.Errorf("after a sync %dm CPU on sale, want 4000m", got)
	}
}

func TestServiceInstanceBackOnSaleAfterRelease(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withAllocator(&recordingAllocator{}))
	ctx := ctxT(t)
	svc := provider.ServiceFlavorID(seller, "kv")
	ct := e.buy("alice", svc, svcCfg(map[string]string{"password": "abcdefgh1"}))
	if e.flavor(svc).GetAvailability() {
		t.Fatal("the only instance is still on sale")
	}
	if _, err := e.p.RequestRelease(ctx, provider.AllocationID(ct.GetId()), "taken back by its seller"); err != nil {
		t.Fatal(err)
	}
	if err := e.p.Finish(ctx, provider.AllocationID(ct.GetId()), fluidos.AllocationState_ALLOCATION_STATE_RELEASED, "released"); err != nil {
		t.Fatal(err)
	}
	if f := e.flavor(svc); !f.GetAvailability() || f.GetService().GetSoldInstances() != 0 {
		t.Errorf("after release: %v", f.GetService())
	}
}

func TestContractRoutesOnlyForTheBuyer(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withAllocator(&recordingAllocator{}), withLease(time.Minute))
	ctx := ctxT(t)
	ct := e.buy("alice", provider.K8SliceFlavorID(seller), k8sCfg(1000, 1<<30, 10))
	// The allocator hands credentials over.
	_, _, err := e.p.Allocations().Modify(ctx, provider.AllocationID(ct.GetId()), func(a *fluidos.Allocation) (bool, error) {
		a.Credentials = &fluidos.PeeringTargetCredentials{Endpoint: "127.0.0.1:1", Token: "slice-token"}
		a.Status.State = fluidos.AllocationState_ALLOCATION_STATE_ACTIVE
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	alice := e.client("alice")
	a, err := alice.ContractAllocation(ctx, e.addr(), seller, ct.GetId())
	if err != nil || a.GetCredentials().GetToken() != "slice-token" {
		t.Fatalf("the buyer's view: %v, %v", a, err)
	}
	before := ct.GetExpirationTime().AsTime()
	time.Sleep(5 * time.Millisecond) // a renewal a moment later ends later
	a, err = alice.RenewContract(ctx, e.addr(), seller, ct.GetId())
	if err != nil || !a.GetExpirationTime().AsTime().After(before) {
		t.Fatalf("renewal: %v, %v (was %v)", a.GetExpirationTime(), err, before)
	}
	var se *rear.StatusError
	mallory := e.client("mallory")
	if _, err := mallory.ContractAllocation(ctx, e.addr(), seller, ct.GetId()); !errors.As(err, &se) || se.Code != http.StatusForbidden {
		t.Errorf("another node's view: %v", err)
	}
	if _, err := mallory.ReleaseContract(ctx, e.addr(), seller, ct.GetId(), ""); !errors.As(err, &se) || se.Code != http.StatusForbidden {
		t.Errorf("another node's release: %v", err)
	}
	if _, err := alice.ContractAllocation(ctx, e.addr(), seller, "c-none"); !errors.As(err, &se) || se.Code != http.StatusNotFound {
		t.Errorf("unknown contract: %v", err)
	}
	a, err = alice.ReleaseContract(ctx, e.addr(), seller, ct.GetId(), "done")
	if err != nil || a.GetReleaseReason() != "done" || a.GetStatus().GetState() != fluidos.AllocationState_ALLOCATION_STATE_RELEASING {
		t.Fatalf("release: %v, %v", a, err)
	}
}

func TestAContractNotRenewedIsReleased(t *testing.T) {
	t.Parallel()
	alloc := &recordingAllocator{}
	e := newEnv(t, withAllocator(alloc), withLease(300*time.Millisecond))
	ct := e.buy("alice", provider.K8SliceFlavorID(seller), k8sCfg(1000, 1<<30, 10))
	id := provider.AllocationID(ct.GetId())
	waitFor(t, 10*time.Second, "the lapsed contract's release", func() bool { return alloc.wokenFor(id) >= 2 })
	a, err := e.p.ContractAllocation(ctxT(t), "", ct.GetId())
	if err != nil {
		t.Fatal(err)
	}
	if !a.GetReleaseRequested() || !strings.Contains(a.GetReleaseReason(), "without a renewal") {
		t.Errorf("lapsed contract: %v", a)
	}
	if time.Now().Before(ct.GetExpirationTime().AsTime()) {
		t.Errorf("released before its end %v", ct.GetExpirationTime().AsTime())
	}
}

func TestAllocatorRefusalIsAClearReservationError(t *testing.T) {
	t.Parallel()
	refusal := errors.New("hosting policy Consumer is not served here")
	e := newEnv(t, withAllocator(&recordingAllocator{refuse: func(*fluidos.Flavor, *fluidos.Configuration) error { return refusal }}))
	_, err := e.client("alice").Reserve(ctxT(t), e.addr(), seller,
		&fluidos.ReserveRequest{FlavorId: provider.ServiceFlavorID(seller, "kv"), Buyer: buyerNode("alice"), Configuration: svcCfg(map[string]string{"password": "abcdefgh1"})}, nil)
	var se *rear.StatusError
	if !errors.As(err, &se) || se.Code != http.StatusBadRequest || !strings.Contains(se.Message, refusal.Error()) {
		t.Fatalf("refused reservation: %v", err)
	}
	if f := e.flavor(provider.ServiceFlavorID(seller, "kv")); !f.GetAvailability() {
		t.Error("a refused reservation took the instance")
	}
}

func TestStaticFlavorsArePublishedAndNotSold(t *testing.T) {
	t.Parallel()
	vm := &fluidos.Flavor{Id: "vm-small", Price: &fluidos.Price{Amount: "1", Currency: "EUR", Period: "hourly"},
		Spec: &fluidos.Flavor_Vm{Vm: &fluidos.VM{Cpu: 1000, Memory: 1 << 30, OsImage: "debian"}}}
	e := newEnv(t, func(c *provider.Config) { c.Flavors = []*fluidos.Flavor{vm} })
	ctx := ctxT(t)
	ans, err := e.client("alice").ListFlavors(ctx, e.addr(), &fluidos.Selector{FlavorType: fluidos.FlavorType_FLAVOR_TYPE_VM})
	if err != nil || len(ans.Flavors) != 1 || ans.Flavors[0].GetOwner().GetNodeId() != seller || ans.Flavors[0].GetVm().GetOsImage() != "debian" {
		t.Fatalf("VM discovery: %v, %v", ans, err)
	}
	_, err = e.client("alice").Reserve(ctx, e.addr(), seller, &fluidos.ReserveRequest{FlavorId: "vm-small", Buyer: buyerNode("alice")}, nil)
	var se *rear.StatusError
	if !errors.As(err, &se) || se.Code != http.StatusBadRequest || !strings.Contains(se.Message, "VM") {
		t.Fatalf("VM reservation: %v", err)
	}
}
