package provider_test

import (
	"testing"
	"time"

	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/hosts/fluidos/provider"
)

// restart stops the provider's server and etcd, then starts both again on
// the same data: nothing survives but what is in the store.
func (e *env) restart() {
	e.t.Helper()
	e.stop()
	e.etcd.Stop()
	e.etcd.Restart()
	e.start()
}

func TestPurchaseAfterProviderRestart(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.client("buyer")
	ctx := ctxT(t)
	flavorID := provider.K8SliceFlavorID(seller)
	tx, err := c.Reserve(ctx, e.addr(), seller, &fluidos.ReserveRequest{FlavorId: flavorID, Buyer: buyerNode("buyer"), Configuration: k8sCfg(2000, 2<<30, 20)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	e.restart()
	// Sync at start keeps what the open transaction holds.
	f, err := e.p.Flavor(ctx, flavorID)
	if err != nil || f.GetK8Slice().GetCharacteristics().GetCpu() != 2000 {
		t.Fatalf("after restart the flavor offers %v (%v), want 2 CPUs left", f.GetK8Slice().GetCharacteristics(), err)
	}
	ct, err := c.Purchase(ctx, e.addr(), seller, tx.GetId(), &fluidos.PurchaseRequest{})
	if err != nil {
		t.Fatalf("purchase after restart: %v", err)
	}
	e.restart()
	again, err := c.Purchase(ctx, e.addr(), seller, tx.GetId(), &fluidos.PurchaseRequest{})
	if err != nil || again.GetId() != ct.GetId() {
		t.Errorf("purchase retried after a second restart: %v, %v; want %s", again.GetId(), err, ct.GetId())
	}
	if f, _ := e.p.Flavor(ctx, flavorID); f.GetK8Slice().GetCharacteristics().GetCpu() != 2000 {
		t.Errorf("after purchase and restart the flavor offers %v", f.GetK8Slice().GetCharacteristics())
	}
}

func TestExpiryDuringDowntimeIsReleasedAtStart(t *testing.T) {
	t.Parallel()
	const ttl = 300 * time.Millisecond
	e := newEnv(t, withTTL(ttl))
	ctx := ctxT(t)
	flavorID := provider.ServiceFlavorID(seller, "kv")
	tx, err := e.client("buyer").Reserve(ctx, e.addr(), seller, &fluidos.ReserveRequest{FlavorId: flavorID, Buyer: buyerNode("buyer"), Configuration: svcCfg(map[string]string{"password": "buyerpassword"})}, nil)
	if err != nil {
		t.Fatal(err)
	}
	e.stop()
	e.etcd.Stop()
	// Wait out the expiry while nothing runs.
	for time.Now().Before(tx.GetExpirationTime().AsTime()) {
		time.Sleep(time.Until(tx.GetExpirationTime().AsTime()))
	}
	e.etcd.Restart()
	e.start()
	waitFor(t, 5*time.Second, "the instance back on sale", func() bool {
		f, err := e.p.Flavor(ctx, flavorID)
		return err == nil && f.GetAvailability() && f.GetService().GetSoldInstances() == 0
	})
}
