package provider_test

import (
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/fluidos/rear"
	"github.com/edgekit/edgekit/hosts/fluidos/provider"
)

const racers = 50

// race has racers buyers, each with its own certificate, reserve at once
// what req(name) asks, and returns how many succeeded; every failure must
// be a clean 409.
func race(t *testing.T, e *env, req func(name string) *fluidos.ReserveRequest) int {
	t.Helper()
	clients := make([]*rear.Client, racers)
	for i := range clients {
		clients[i] = e.client(fmt.Sprintf("racer-%d", i))
	}
	ctx := ctxT(t)
	start := make(chan struct{})
	var wg sync.WaitGroup
	errs := make([]error, racers)
	for i := range racers {
		wg.Go(func() {
			<-start
			name := fmt.Sprintf("racer-%d", i)
			_, errs[i] = clients[i].Reserve(ctx, e.addr(), seller, req(name), nil)
		})
	}
	close(start)
	wg.Wait()
	won := 0
	for i, err := range errs {
		switch {
		case err == nil:
			won++
		case statusOf(err) != http.StatusConflict:
			t.Errorf("racer %d: %v, want success or 409", i, err)
		}
	}
	return won
}

func TestRaceForTheLastK8SlicePartition(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxT(t)
	flavorID := provider.K8SliceFlavorID(seller)
	// Leave exactly one partition of 1 CPU, 1Gi, 10 pods on sale.
	if _, err := e.client("filler").Reserve(ctx, e.addr(), seller, &fluidos.ReserveRequest{FlavorId: flavorID, Buyer: buyerNode("filler"), Configuration: k8sCfg(3000, 3<<30, 30)}, nil); err != nil {
		t.Fatal(err)
	}
	won := race(t, e, func(name string) *fluidos.ReserveRequest {
		return &fluidos.ReserveRequest{FlavorId: flavorID, Buyer: buyerNode(name), Configuration: k8sCfg(1000, 1<<30, 10)}
	})
	if won != 1 {
		t.Fatalf("%d buyers got the last partition, want exactly 1", won)
	}
	f, err := e.p.Flavor(ctx, flavorID)
	if err != nil {
		t.Fatal(err)
	}
	if ch := f.GetK8Slice().GetCharacteristics(); ch.GetCpu() != 0 || ch.GetPods() != 0 || f.GetAvailability() {
		t.Errorf("after the race the flavor offers %v (available %v)", ch, f.GetAvailability())
	}
	if n := countReserved(t, e, flavorID); n != 2 {
		t.Errorf("%d transactions hold the slice, want 2 (filler and winner)", n)
	}
}

func TestRaceSellsExactlyTheCapacity(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	flavorID := provider.K8SliceFlavorID(seller)
	won := race(t, e, func(name string) *fluidos.ReserveRequest {
		return &fluidos.ReserveRequest{FlavorId: flavorID, Buyer: buyerNode(name), Configuration: k8sCfg(1000, 1<<30, 10)}
	})
	if won != 4 {
		t.Fatalf("%d partitions of 1 CPU sold out of 4 CPUs, want 4", won)
	}
	if n := countReserved(t, e, flavorID); n != 4 {
		t.Errorf("%d transactions hold the slice, want 4", n)
	}
}

func TestRaceForTheOnlyServiceInstance(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	flavorID := provider.ServiceFlavorID(seller, "kv")
	won := race(t, e, func(name string) *fluidos.ReserveRequest {
		return &fluidos.ReserveRequest{FlavorId: flavorID, Buyer: buyerNode(name), Configuration: svcCfg(map[string]string{"password": "racerpassword1"})}
	})
	if won != 1 {
		t.Fatalf("%d buyers got the only instance, want exactly 1", won)
	}
	f, err := e.p.Flavor(ctxT(t), flavorID)
	if err != nil {
		t.Fatal(err)
	}
	if f.GetAvailability() || f.GetService().GetSoldInstances() != 1 {
		t.Errorf("after the race: available %v, sold %d", f.GetAvailability(), f.GetService().GetSoldInstances())
	}
}

func countReserved(t *testing.T, e *env, flavorID string) int {
	t.Helper()
	txs, err := e.p.Transactions(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, tx := range txs {
		if tx.GetFlavorId() == flavorID && tx.GetState() == fluidos.TransactionState_TRANSACTION_STATE_RESERVED {
			n++
		}
	}
	return n
}
