package consumer_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/fluidos/rear"
	"github.com/edgekit/edgekit/hosts/fluidos/consumer"
	"github.com/edgekit/edgekit/internal/store"
	"github.com/edgekit/edgekit/internal/testenv/etcdtest"
)

// TestStartRestoresContractsKeptUnderTheSellersIDAlone: an earlier version
// kept a contract bought, and its allocation, under the seller's contract
// id alone. Start re-stores both under <seller>/<id>, points the solver
// and reservation that bought it at the new ids, deletes the old records,
// and the keeper still renews the contract at its seller under the
// seller's own id.
func TestStartRestoresContractsKeptUnderTheSellersIDAlone(t *testing.T) {
	const seller, cid = "provider-a", "contract-k8slice-1a2b"
	var (
		mu      sync.Mutex
		renewed []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, ok := strings.CutSuffix(strings.TrimPrefix(r.URL.Path, "/api/v2/contracts/"), "/renew")
		if !ok || r.Method != http.MethodPost {
			http.NotFound(w, r)
			return
		}
		mu.Lock()
		renewed = append(renewed, id)
		mu.Unlock()
		b, _ := rear.MarshalProto(&fluidos.Allocation{Id: "a-" + id, ContractId: id, Seller: &fluidos.NodeIdentity{NodeId: seller},
			Status: &fluidos.AllocationStatus{State: fluidos.AllocationState_ALLOCATION_STATE_ACTIVE, Message: "in use"}})
		_, _ = w.Write(b)
	}))
	t.Cleanup(srv.Close)
	addr := strings.TrimPrefix(srv.URL, "http://")

	etcd := etcdtest.New(t)
	st, err := store.New(etcd.Client(), "buyer")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	contracts := store.NewKind[*fluidos.Contract](st, store.KindName(consumer.BoughtContractKind))
	allocs := store.NewKind[*fluidos.Allocation](st, store.KindName(consumer.BoughtAllocationKind))
	solvers := store.NewKind[*fluidos.Solver](st)
	reservations := store.NewKind[*fluidos.Reservation](st)
	sellerID := &fluidos.NodeIdentity{NodeId: seller, Ip: addr}
	oldContract := &fluidos.Contract{Id: cid, TransactionId: "tx-1", Seller: sellerID, State: fluidos.ContractState_CONTRACT_STATE_ACTIVE,
		PeeringTargetCredentials: &fluidos.PeeringTargetCredentials{ClusterId: "c1", Kubeconfig: "kept"}}
	oldAlloc := &fluidos.Allocation{Id: "a-" + cid, ContractId: cid, Seller: sellerID,
		Status: &fluidos.AllocationStatus{State: fluidos.AllocationState_ALLOCATION_STATE_ACTIVE, Message: "in use"}}
	for _, put := range []func() error{
		func() error { _, err := contracts.Put(ctx, oldContract); return err },
		func() error { _, err := allocs.Put(ctx, oldAlloc); return err },
		func() error {
			_, err := solvers.Put(ctx, &fluidos.Solver{Id: "s1", Status: &fluidos.SolverStatus{SolverPhase: fluidos.Phase_PHASE_SOLVED,
				ReservationId: "reservation-s1", ContractId: cid, AllocationId: "a-" + cid}})
			return err
		},
		func() error {
			_, err := reservations.Put(ctx, &fluidos.Reservation{Id: "reservation-s1", SolverId: "s1", Seller: sellerID,
				Status: &fluidos.ReservationStatus{Phase: fluidos.Phase_PHASE_SOLVED, TransactionId: "tx-1", ContractId: cid}})
			return err
		},
	} {
		if err := put(); err != nil {
			t.Fatal(err)
		}
	}
	peers, err := consumer.NewRegistry(nil, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	c, err := consumer.New(consumer.Config{Self: &fluidos.NodeIdentity{NodeId: "buyer"}, Store: st, Client: rear.NewClient(nil, 5*time.Second),
		Peers: peers, PollInterval: 20 * time.Millisecond, RenewInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- c.Start(runCtx) }()
	t.Cleanup(func() { stop(); <-done })

	local := consumer.BoughtID(seller, cid)
	// The keeper renews after the records are re-stored: a renewal is the
	// condition waited on.
	for deadline := time.Now().Add(30 * time.Second); ; {
		mu.Lock()
		n := len(renewed)
		mu.Unlock()
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the keeper never renewed the contract at its seller")
		}
		time.Sleep(20 * time.Millisecond)
	}
	mu.Lock()
	if renewed[0] != cid {
		t.Errorf("the seller was asked to renew %q, want its own id %q", renewed[0], cid)
	}
	mu.Unlock()

	ct, _, err := contracts.Get(ctx, local)
	if err != nil {
		t.Fatalf("contract %s: %v", local, err)
	}
	want := proto.Clone(oldContract).(*fluidos.Contract)
	want.Id = local
	if !proto.Equal(ct, want) {
		t.Errorf("contract re-stored as %v, want %v", ct, want)
	}
	a, _, err := allocs.Get(ctx, "a-"+local)
	if err != nil {
		t.Fatalf("allocation a-%s: %v", local, err)
	}
	if a.GetContractId() != local || a.GetSeller().GetIp() != addr || a.GetSeller().GetNodeId() != seller {
		t.Errorf("allocation re-stored as %v", a)
	}
	if _, _, err := contracts.Get(ctx, cid); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the old contract record %s: %v, want it deleted", cid, err)
	}
	if _, _, err := allocs.Get(ctx, "a-"+cid); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the old allocation record a-%s: %v, want it deleted", cid, err)
	}
	s, _, err := solvers.Get(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if s.GetStatus().GetContractId() != local || s.GetStatus().GetAllocationId() != "a-"+local {
		t.Errorf("solver points at contract %s, allocation %s; want %s", s.GetStatus().GetContractId(), s.GetStatus().GetAllocationId(), local)
	}
	r, _, err := reservations.Get(ctx, "reservation-s1")
	if err != nil {
		t.Fatal(err)
	}
	if r.GetStatus().GetContractId() != local {
		t.Errorf("reservation points at contract %s, want %s", r.GetStatus().GetContractId(), local)
	}
	if got, err := c.ResolveBought(ctx, cid); err != nil || got != local {
		t.Errorf("ResolveBought(%s) = %q, %v; want %s", cid, got, err, local)
	}
}
