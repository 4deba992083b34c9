package provider_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/hosts/fluidos/provider"
)

// BenchmarkReserveAndPurchase measures one buyer's reserve + purchase
// round trips against one provider over mutual TLS (REAR over HTTPS, the
// store on embedded etcd): each iteration reserves a 1 CPU, 1Gi, 1 pod
// partition of a slice large enough for every iteration and buys it.
func BenchmarkReserveAndPurchase(b *testing.B) {
	huge := provider.Capacity{Architecture: "amd64", CPU: 1 << 40, Memory: 1 << 60, Pods: 1 << 40}
	e := newEnv(b, func(c *provider.Config) {
		c.Capacity = provider.CapacityFunc(func(context.Context) (provider.Capacity, error) { return huge, nil })
		c.Policy = &fluidos.Partitionability{CpuMin: 1000, MemoryMin: 1 << 30, PodsMin: 1}
		c.Contracts = nil
	})
	c := e.client("buyer")
	ctx := context.Background()
	flavorID := provider.K8SliceFlavorID(seller)
	buy := func(i int) error {
		// Each partition differs, so that no reservation is a retry of
		// another.
		cfg := k8sCfg(1000, 1<<30, int64(1+i%1000))
		tx, err := c.Reserve(ctx, e.addr(), seller, &fluidos.ReserveRequest{FlavorId: flavorID, Buyer: buyerNode("buyer"), Configuration: cfg}, nil)
		if err != nil {
			return fmt.Errorf("reserve: %w", err)
		}
		if _, err := c.Purchase(ctx, e.addr(), seller, tx.GetId(), &fluidos.PurchaseRequest{}); err != nil {
			return fmt.Errorf("purchase: %w", err)
		}
		return nil
	}
	if err := buy(0); err != nil { // warm the connection
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if err := buy(i); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "trades/s")
}
