package provider_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/fluidos/rear"
	"github.com/edgekit/edgekit/hosts/fluidos/provider"
	"github.com/edgekit/edgekit/internal/store"
)

// kubeconfigAllocator issues a kubeconfig for K8Slices: woken for an
// allocation not yet provisioned, it writes it ACTIVE with the kubeconfig
// kubeconfigOf(id), as the node's allocator does once the slice's
// namespace and token exist; with provision false it never does.
type kubeconfigAllocator struct {
	recordingAllocator
	allocations *store.Kind[*fluidos.Allocation]
	provision   bool
}

var _ provider.KubeconfigIssuer = (*kubeconfigAllocator)(nil)

func kubeconfigOf(id string) string { return "apiVersion: v1\nkind: Config\n# token of " + id + "\n" }

func (a *kubeconfigAllocator) IssuesKubeconfig(f *fluidos.Flavor) bool {
	return fluidos.FlavorTypeOf(f) == fluidos.FlavorType_FLAVOR_TYPE_K8SLICE
}

func (a *kubeconfigAllocator) Wake(id string) {
	a.recordingAllocator.Wake(id)
	if !a.provision {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		al, _, err := a.allocations.Get(ctx, id)
		if err != nil || al.GetReleaseRequested() || al.GetCredentials().GetKubeconfig() != "" {
			return
		}
		al.Credentials = &fluidos.PeeringTargetCredentials{ClusterId: id, Kubeconfig: kubeconfigOf(id)}
		al.Status = &fluidos.AllocationStatus{State: fluidos.AllocationState_ALLOCATION_STATE_ACTIVE, Message: "slice ready"}
		_, _ = a.allocations.Put(ctx, al)
	}()
}

// reserveAndBuy reserves cfg of flavor as buyer and buys it, through c.
func (e *env) reserveAndBuy(c *rear.Client, buyer, flavor string, cfg *fluidos.Configuration) (*fluidos.Transaction, *fluidos.Contract) {
	e.t.Helper()
	ctx := ctxT(e.t)
	tx, err := c.Reserve(ctx, e.addr(), seller, &fluidos.ReserveRequest{FlavorId: flavor, Buyer: buyerNode(buyer), Configuration: cfg}, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	ct, err := c.Purchase(ctx, e.addr(), seller, tx.GetId(), &fluidos.PurchaseRequest{})
	if err != nil {
		e.t.Fatal(err)
	}
	return tx, ct
}

// A slice whose allocation issues a kubeconfig is answered, at its
// purchase, with that kubeconfig in peeringTargetCredentials (where a
// reference buyer reads it): to its buyer, again when the buyer repeats
// the purchase, never to another node; the stored contract never holds
// it. A service is answered as before.
func TestPurchaseAnswersTheSlicesKubeconfigToItsBuyer(t *testing.T) {
	t.Parallel()
	alloc := &kubeconfigAllocator{provision: true}
	e := newEnv(t, withAllocator(alloc))
	alloc.allocations = e.p.Allocations()
	ctx := ctxT(t)
	alice := e.client("alice")

	tx, ct := e.reserveAndBuy(alice, "alice", provider.K8SliceFlavorID(seller), k8sCfg(1000, 1<<30, 10))
	want := kubeconfigOf(provider.AllocationID(ct.GetId()))
	if got := ct.GetPeeringTargetCredentials().GetKubeconfig(); got != want {
		t.Fatalf("the purchase answered kubeconfig %q, want the allocation's %q", got, want)
	}
	if ct.GetPeeringTargetCredentials().GetClusterId() != seller {
		t.Errorf("peeringTargetCredentials.clusterID = %q, want %q", ct.GetPeeringTargetCredentials().GetClusterId(), seller)
	}
	again, err := alice.Purchase(ctx, e.addr(), seller, tx.GetId(), &fluidos.PurchaseRequest{})
	if err != nil || again.GetId() != ct.GetId() || again.GetPeeringTargetCredentials().GetKubeconfig() != want {
		t.Errorf("a repeated purchase by the buyer: contract %q kubeconfig %q, %v", again.GetId(), again.GetPeeringTargetCredentials().GetKubeconfig(), err)
	}
	if _, err := e.client("mallory").Purchase(ctx, e.addr(), seller, tx.GetId(), &fluidos.PurchaseRequest{}); statusOf(err) != 403 {
		t.Errorf("another node's purchase of the transaction: %v, want 403", err)
	}
	stored, err := e.p.Contract(ctx, ct.GetId())
	if err != nil {
		t.Fatal(err)
	}
	if stored.GetPeeringTargetCredentials().GetKubeconfig() != "" {
		t.Error("the stored contract holds the kubeconfig")
	}

	// A service flavor: no kubeconfig, no wait.
	_, sc := e.reserveAndBuy(alice, "alice", provider.ServiceFlavorID(seller, "kv"), svcCfg(map[string]string{"password": "abcdefgh1"}))
	if sc.GetPeeringTargetCredentials().GetKubeconfig() != "" {
		t.Error("a service's contract carries a kubeconfig")
	}
}

// When the slice is not provisioned within KubeconfigWait, the purchase
// is answered without a kubeconfig (the contract stands; the buyer reads
// the kubeconfig from the allocation later).
func TestPurchaseAnswersWithoutKubeconfigWhenTheSliceIsLate(t *testing.T) {
	t.Parallel()
	alloc := &kubeconfigAllocator{provision: false}
	e := newEnv(t, withAllocator(alloc), func(c *provider.Config) { c.KubeconfigWait = 100 * time.Millisecond })
	alloc.allocations = e.p.Allocations()
	_, ct := e.reserveAndBuy(e.client("alice"), "alice", provider.K8SliceFlavorID(seller), k8sCfg(1000, 1<<30, 10))
	if ct.GetId() == "" || ct.GetPeeringTargetCredentials().GetKubeconfig() != "" {
		t.Errorf("a late slice's purchase answered contract %q with kubeconfig %q", ct.GetId(), ct.GetPeeringTargetCredentials().GetKubeconfig())
	}
	if alloc.wokenFor(provider.AllocationID(ct.GetId())) != 1 {
		t.Error("the allocator was not woken")
	}
}

// Over plain HTTP (nobody verified), only the answer of the purchase that
// made the contract carries the kubeconfig: a repeated purchase of the
// transaction, by anyone who learnt its ID, gets none.
func TestInsecurePurchaseAnswersTheKubeconfigOnce(t *testing.T) {
	t.Parallel()
	alloc := &kubeconfigAllocator{provision: true}
	e := newEnv(t, withAllocator(alloc))
	alloc.allocations = e.p.Allocations()
	srv := httptest.NewServer(e.p.Handler(false))
	t.Cleanup(srv.Close)
	addr := strings.TrimPrefix(srv.URL, "http://")
	c := rear.NewClient(nil, 20*time.Second)
	t.Cleanup(c.Close)
	ctx := ctxT(t)
	tx, err := c.Reserve(ctx, addr, seller, &fluidos.ReserveRequest{FlavorId: provider.K8SliceFlavorID(seller), Buyer: buyerNode("alice"), Configuration: k8sCfg(1000, 1<<30, 10)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ct, err := c.Purchase(ctx, addr, seller, tx.GetId(), &fluidos.PurchaseRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ct.GetPeeringTargetCredentials().GetKubeconfig(), kubeconfigOf(provider.AllocationID(ct.GetId())); got != want {
		t.Fatalf("the purchase answered kubeconfig %q, want %q", got, want)
	}
	again, err := c.Purchase(ctx, addr, seller, tx.GetId(), &fluidos.PurchaseRequest{})
	if err != nil || again.GetId() != ct.GetId() || again.GetPeeringTargetCredentials().GetKubeconfig() != "" {
		t.Errorf("a repeated unauthenticated purchase: contract %q kubeconfig %q, %v", again.GetId(), again.GetPeeringTargetCredentials().GetKubeconfig(), err)
	}
}
