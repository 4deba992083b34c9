package provider_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/fluidos/rear"
	"github.com/edgekit/edgekit/hosts/fluidos/provider"
)

func statusOf(err error) int {
	var se *rear.StatusError
	if errors.As(err, &se) {
		return se.Code
	}
	return 0
}

func TestDiscoveryFilters(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.client("buyer")
	ctx := ctxT(t)
	all, err := c.ListFlavors(ctx, e.addr(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Flavors) != 2 || all.Peer != seller {
		t.Fatalf("all flavors: %d from %q, want 2 from %s", len(all.Flavors), all.Peer, seller)
	}
	k8s := fluidos.FlavorType_FLAVOR_TYPE_K8SLICE
	lo, hi := int64(2000), int64(3000)
	for name, c2 := range map[string]struct {
		sel  *fluidos.Selector
		want int
	}{
		"cpu range hit":      {&fluidos.Selector{Filter: &fluidos.Selector_K8Slice{K8Slice: &fluidos.K8SliceSelector{Cpu: &fluidos.ResourceFilter{Filter: &fluidos.ResourceFilter_Range{Range: &fluidos.ResourceRangeSelector{Min: &lo}}}}}}, 1},
		"cpu range miss":     {&fluidos.Selector{Filter: &fluidos.Selector_K8Slice{K8Slice: &fluidos.K8SliceSelector{Cpu: &fluidos.ResourceFilter{Filter: &fluidos.ResourceFilter_Range{Range: &fluidos.ResourceRangeSelector{Max: &hi}}}}}}, 0},
		"memory match":       {&fluidos.Selector{Filter: &fluidos.Selector_K8Slice{K8Slice: &fluidos.K8SliceSelector{Memory: &fluidos.ResourceFilter{Filter: &fluidos.ResourceFilter_Match{Match: &fluidos.ResourceMatchSelector{Value: 8 << 30}}}}}}, 1},
		"architecture regex": {&fluidos.Selector{Filter: &fluidos.Selector_K8Slice{K8Slice: &fluidos.K8SliceSelector{Architecture: &fluidos.StringFilter{Filter: &fluidos.StringFilter_Regex{Regex: "amd.*|arm64"}}}}}, 1},
		"architecture miss":  {&fluidos.Selector{Filter: &fluidos.Selector_K8Slice{K8Slice: &fluidos.K8SliceSelector{Architecture: &fluidos.StringFilter{Filter: &fluidos.StringFilter_Exact{Exact: "riscv64"}}}}}, 0},
		"gpu absent":         {&fluidos.Selector{Filter: &fluidos.Selector_K8Slice{K8Slice: &fluidos.K8SliceSelector{Gpu: &fluidos.GPUSelector{}}}}, 0},
		"type only":          {&fluidos.Selector{FlavorType: k8s}, 1},
		"service tags":       {&fluidos.Selector{Filter: &fluidos.Selector_Service{Service: &fluidos.ServiceSelector{Tags: []string{"kv", "cache"}}}}, 1},
		"service tag miss":   {&fluidos.Selector{Filter: &fluidos.Selector_Service{Service: &fluidos.ServiceSelector{Tags: []string{"kv", "sql"}}}}, 0},
		"service category":   {&fluidos.Selector{Filter: &fluidos.Selector_Service{Service: &fluidos.ServiceSelector{Category: &fluidos.StringFilter{Filter: &fluidos.StringFilter_Exact{Exact: "database"}}}}}, 1},
		"vm none":            {&fluidos.Selector{FlavorType: fluidos.FlavorType_FLAVOR_TYPE_VM}, 0},
	} {
		ans, err := c.ListFlavors(ctx, e.addr(), c2.sel)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if len(ans.Flavors) != c2.want {
			t.Errorf("%s: %d flavors, want %d", name, len(ans.Flavors), c2.want)
		}
	}
}

func TestServerRefusesBadQueries(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: clientTLS(t, e, "buyer")}, Timeout: 10 * time.Second}
	defer hc.CloseIdleConnections()
	for path, want := range map[string]int{
		"/api/v2/flavors/k8slice?filter[color][match]=red":   http.StatusBadRequest,
		"/api/v2/flavors/k8slice?filter[cpu][match]=lots":    http.StatusBadRequest,
		"/api/v2/flavors/service?filter[tags][range][min]=1": http.StatusBadRequest,
		"/api/v2/flavors?filter[cpu][match]=1":               http.StatusBadRequest,
		"/api/v2/flavors/spaceships":                         http.StatusNotFound,
		"/api/v2/flavors/k8slice?filter[cpu][match]=4":       http.StatusOK,
	} {
		resp, err := hc.Get(e.srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s = %d, want %d", path, resp.StatusCode, want)
		}
	}
}

func TestReserveAndPurchaseK8SlicePartition(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.client("buyer")
	ctx := ctxT(t)
	flavorID := provider.K8SliceFlavorID(seller)
	req := &fluidos.ReserveRequest{FlavorId: flavorID, Buyer: buyerNode("buyer"), Configuration: k8sCfg(1000, 2<<30, 10)}
	tx, err := c.Reserve(ctx, e.addr(), seller, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	left, err := e.p.Flavor(ctx, flavorID)
	if err != nil {
		t.Fatal(err)
	}
	if ch := left.GetK8Slice().GetCharacteristics(); ch.GetCpu() != 3000 || ch.GetMemory() != 6<<30 || ch.GetPods() != 30 || !left.GetAvailability() {
		t.Fatalf("after reserving 1 CPU, 2Gi, 10 pods the flavor offers %v (available %v)", ch, left.GetAvailability())
	}
	// Retrying the reservation gives the same transaction and holds nothing more.
	again, err := c.Reserve(ctx, e.addr(), seller, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if again.GetId() != tx.GetId() || !again.GetExpirationTime().AsTime().After(tx.GetExpirationTime().AsTime().Add(-time.Second)) {
		t.Errorf("retried reservation: %s, want %s", again.GetId(), tx.GetId())
	}
	if f, _ := e.p.Flavor(ctx, flavorID); f.GetK8Slice().GetCharacteristics().GetCpu() != 3000 {
		t.Errorf("a retried reservation held again: %v", f.GetK8Slice().GetCharacteristics())
	}
	// The stored transaction does not keep the buyer's kubeconfig.
	txs, err := e.p.Transactions(ctx)
	if err != nil || len(txs) != 1 || txs[0].GetBuyer().GetAdditionalInformation().GetKubeconfig() != "" {
		t.Errorf("stored transactions %v (%v): the buyer's kubeconfig must not be kept", txs, err)
	}

	ct, err := c.Purchase(ctx, e.addr(), seller, tx.GetId(), &fluidos.PurchaseRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if ch := ct.GetFlavor().GetK8Slice().GetCharacteristics(); ch.GetCpu() != 1000 || ch.GetMemory() != 2<<30 || ch.GetPods() != 10 {
		t.Errorf("contract flavor %v, want the partition", ch)
	}
	if ct.GetBuyer().GetNodeId() != "buyer" || ct.GetSeller().GetNodeId() != seller || ct.GetTransactionId() != tx.GetId() {
		t.Errorf("contract %v", ct)
	}
	select {
	case made := <-e.made:
		if made.GetId() != ct.GetId() {
			t.Errorf("handler told of %s, want %s", made.GetId(), ct.GetId())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the contract handler was not told")
	}
	// Purchase is idempotent; the handler is not told twice.
	ct2, err := c.Purchase(ctx, e.addr(), seller, tx.GetId(), &fluidos.PurchaseRequest{})
	if err != nil || ct2.GetId() != ct.GetId() {
		t.Errorf("second purchase: %v, %v; want contract %s", ct2.GetId(), err, ct.GetId())
	}
	select {
	case c := <-e.made:
		t.Errorf("handler told again of %s", c.GetId())
	default:
	}
	// What was bought stays taken.
	if f, _ := e.p.Flavor(ctx, flavorID); f.GetK8Slice().GetCharacteristics().GetCpu() != 3000 {
		t.Errorf("after purchase the flavor offers %v", f.GetK8Slice().GetCharacteristics())
	}
}

func TestReservationRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.client("buyer")
	ctx := ctxT(t)
	k8s := provider.K8SliceFlavorID(seller)
	svc := provider.ServiceFlavorID(seller, "kv")
	for name, tc := range map[string]struct {
		req  *fluidos.ReserveRequest
		want int
	}{
		"another buyer's name":    {&fluidos.ReserveRequest{FlavorId: k8s, Buyer: buyerNode("someone-else"), Configuration: k8sCfg(1000, 1<<30, 10)}, http.StatusForbidden},
		"missing flavor":          {&fluidos.ReserveRequest{FlavorId: "nope", Buyer: buyerNode("buyer")}, http.StatusNotFound},
		"below the minimum":       {&fluidos.ReserveRequest{FlavorId: k8s, Buyer: buyerNode("buyer"), Configuration: k8sCfg(500, 1<<30, 10)}, http.StatusBadRequest},
		"off the step":            {&fluidos.ReserveRequest{FlavorId: k8s, Buyer: buyerNode("buyer"), Configuration: k8sCfg(1500, 1<<30, 10)}, http.StatusBadRequest},
		"more than there is":      {&fluidos.ReserveRequest{FlavorId: k8s, Buyer: buyerNode("buyer"), Configuration: k8sCfg(5000, 1<<30, 10)}, http.StatusConflict},
		"service config on slice": {&fluidos.ReserveRequest{FlavorId: k8s, Buyer: buyerNode("buyer"), Configuration: svcCfg(nil)}, http.StatusBadRequest},
		"service without config":  {&fluidos.ReserveRequest{FlavorId: svc, Buyer: buyerNode("buyer")}, http.StatusBadRequest},
		"service bad password":    {&fluidos.ReserveRequest{FlavorId: svc, Buyer: buyerNode("buyer"), Configuration: svcCfg(map[string]string{"password": "short"})}, http.StatusBadRequest},
		"service unknown param":   {&fluidos.ReserveRequest{FlavorId: svc, Buyer: buyerNode("buyer"), Configuration: svcCfg(map[string]string{"password": "longenough1", "color": "red"})}, http.StatusBadRequest},
		"service hosting policy": {&fluidos.ReserveRequest{FlavorId: svc, Buyer: buyerNode("buyer"), Configuration: &fluidos.Configuration{Spec: &fluidos.Configuration_Service{Service: &fluidos.ServiceConfiguration{
			HostingPolicy: fluidos.HostingPolicy_HOSTING_POLICY_CONSUMER, Parameters: map[string]string{"password": "longenough1"}}}}}, http.StatusBadRequest},
		"buying from oneself": {&fluidos.ReserveRequest{FlavorId: k8s, Buyer: buyerNode(seller)}, http.StatusForbidden},
	} {
		_, err := c.Reserve(ctx, e.addr(), seller, tc.req, nil)
		if got := statusOf(err); got != tc.want {
			t.Errorf("%s: %v (status %d), want %d", name, err, got, tc.want)
		}
	}
	// Nothing was held by the refusals.
	f, err := e.p.Flavor(ctx, k8s)
	if err != nil || f.GetK8Slice().GetCharacteristics().GetCpu() != 4000 {
		t.Errorf("after refusals the flavor offers %v (%v)", f.GetK8Slice().GetCharacteristics(), err)
	}
}

func TestPurchaseOnlyByTheBuyer(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxT(t)
	tx, err := e.client("buyer").Reserve(ctx, e.addr(), seller, &fluidos.ReserveRequest{FlavorId: provider.K8SliceFlavorID(seller), Buyer: buyerNode("buyer"), Configuration: k8sCfg(1000, 1<<30, 10)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	thief := e.client("thief")
	if _, err := thief.Purchase(ctx, e.addr(), seller, tx.GetId(), &fluidos.PurchaseRequest{}); statusOf(err) != http.StatusForbidden {
		t.Errorf("another node bought the transaction: %v", err)
	}
	if _, err := thief.Purchase(ctx, e.addr(), seller, "t-missing", &fluidos.PurchaseRequest{}); statusOf(err) != http.StatusNotFound {
		t.Errorf("purchase of a missing transaction: %v", err)
	}
	// The client refuses a server whose certificate is not the seller it meant.
	if _, err := thief.Purchase(ctx, e.addr(), "other-seller", tx.GetId(), &fluidos.PurchaseRequest{}); !errors.Is(err, rear.ErrImpersonation) {
		t.Errorf("purchase from a server that is not the seller named: %v", err)
	}
	if _, err := e.client("buyer").Purchase(ctx, e.addr(), seller, tx.GetId(), &fluidos.PurchaseRequest{}); err != nil {
		t.Errorf("the buyer could not buy: %v", err)
	}
}

func TestExpiryReleasesOnTime(t *testing.T) {
	t.Parallel()
	const ttl = 400 * time.Millisecond
	e := newEnv(t, withTTL(ttl))
	c := e.client("buyer")
	ctx := ctxT(t)
	flavorID := provider.K8SliceFlavorID(seller)
	// Take the whole slice: the flavor is sold out until the expiry.
	tx, err := c.Reserve(ctx, e.addr(), seller, &fluidos.ReserveRequest{FlavorId: flavorID, Buyer: buyerNode("buyer")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if f, _ := e.p.Flavor(ctx, flavorID); f.GetAvailability() {
		t.Fatal("a slice reserved whole is still available")
	}
	if ans, err := c.ListFlavors(ctx, e.addr(), &fluidos.Selector{FlavorType: fluidos.FlavorType_FLAVOR_TYPE_K8SLICE}); err != nil || len(ans.Flavors) != 0 {
		t.Fatalf("a sold-out flavor was discovered: %v, %v", ans, err)
	}
	// No request arrives: the timer alone releases it, set for the
	// expiry (a timer that missed it would wake only a minute later, past
	// this wait).
	waitFor(t, ttl+5*time.Second, "the flavor back on sale", func() bool {
		f, err := e.p.Flavor(ctx, flavorID)
		return err == nil && f.GetAvailability() && f.GetK8Slice().GetCharacteristics().GetCpu() == 4000
	})
	if _, err := c.Purchase(ctx, e.addr(), seller, tx.GetId(), &fluidos.PurchaseRequest{}); statusOf(err) != http.StatusRequestTimeout {
		t.Errorf("purchase after expiry: %v, want 408", err)
	}
}

// TestExpiredTransactionKeepsNoSecret lets a service reservation expire
// unbought: the transaction stays for the record, without the buyer's
// configuration parameters or kubeconfig in any value of the store, and
// the service is back on sale.
func TestExpiredTransactionKeepsNoSecret(t *testing.T) {
	t.Parallel()
	const password = "expiredpass42"
	e := newEnv(t, withTTL(300*time.Millisecond))
	ctx := ctxT(t)
	svc := provider.ServiceFlavorID(seller, "kv")
	tx, err := e.client("alice").Reserve(ctx, e.addr(), seller,
		&fluidos.ReserveRequest{FlavorId: svc, Buyer: buyerNode("alice"), Configuration: svcCfg(map[string]string{"password": password})}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var expired *fluidos.Transaction
	waitFor(t, 10*time.Second, "the transaction expired", func() bool {
		txs, err := e.p.Transactions(ctx)
		for _, x := range txs {
			if x.GetId() == tx.GetId() && x.GetState() == fluidos.TransactionState_TRANSACTION_STATE_EXPIRED {
				expired = x
			}
		}
		return err == nil && expired != nil
	})
	if expired.GetBuyer().GetNodeId() != "alice" || expired.GetFlavorId() != svc || expired.GetExpirationTime() == nil {
		t.Errorf("the expired transaction lost its record: %v", expired)
	}
	resp, err := e.store.Client().Get(ctx, e.store.Prefix(), clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range resp.Kvs {
		for _, s := range []string{password, "secret kubeconfig"} {
			if strings.Contains(string(kv.Value), s) {
				t.Errorf("%s keeps %q after the expiry", kv.Key, s)
			}
		}
	}
	if f, err := e.p.Flavor(ctx, svc); err != nil || !f.GetAvailability() || f.GetService().GetSoldInstances() != 0 {
		t.Errorf("the service is not back on sale (%v): %v", err, f)
	}
}
