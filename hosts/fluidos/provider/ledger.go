package provider

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/internal/store"
)

// maxRounds bounds the store transactions one call runs when concurrent
// writes to the same flavor keep invalidating it.
const maxRounds = 64

// Reserve holds what req asks of a flavor for the buyer it names, and
// returns the transaction. peer is the caller's verified identity (empty
// over an unauthenticated transport). Errors: ErrBadRequest, ErrNotBuyer,
// ErrFlavorNotFound, ErrSoldOut, ErrNotSold, ErrBusy, or the store's.
//
// A reserved transaction of the same buyer on the same flavor with the same
// configuration (any configuration when req has none) is returned instead,
// its expiry pushed back: retrying a reservation never holds twice.
func (p *Provider) Reserve(ctx context.Context, peer string, req *fluidos.ReserveRequest) (*fluidos.Transaction, error) {
	buyer := proto.Clone(req.GetBuyer()).(*fluidos.NodeIdentity)
	switch {
	case buyer.GetNodeId() == "":
		return nil, fmt.Errorf("%w: the request names no buyer (buyerID.ID)", ErrBadRequest)
	case peer != "" && buyer.GetNodeId() != peer:
		return nil, fmt.Errorf("%w: %q reserves in the name of %q", ErrNotBuyer, peer, buyer.GetNodeId())
	case buyer.GetNodeId() == p.cfg.Self.GetNodeId():
		return nil, fmt.Errorf("%w: a node does not buy from itself", ErrBadRequest)
	case req.GetFlavorId() == "":
		return nil, fmt.Errorf("%w: the request names no flavor (flavorID)", ErrBadRequest)
	}
	// The buyer's kubeconfig is not needed to hold a flavor: it is not kept.
	if a := buyer.GetAdditionalInformation(); a != nil {
		a.Kubeconfig = ""
	}
	if err := p.admit(ctx, req); err != nil {
		p.cfg.Metrics.reserved(err)
		return nil, err
	}
	var out *fluidos.Transaction
	err := p.rounds(ctx, func(tx *store.Tx) error {
		now := time.Now()
		exp := timestamppb.New(now.Add(p.cfg.ReservationTTL))
		f, ok, err := p.flavors.TxGet(tx, req.GetFlavorId())
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("%w: %q", ErrFlavorNotFound, req.GetFlavorId())
		}
		txns, err := p.open.TxList(tx)
		if err != nil {
			return err
		}
		for _, t := range txns {
			if t.GetState() == fluidos.TransactionState_TRANSACTION_STATE_RESERVED && t.GetBuyer().GetNodeId() == buyer.GetNodeId() &&
				t.GetFlavorId() == f.GetId() && t.GetExpirationTime().AsTime().After(now) && sameAsked(t.GetConfiguration(), req.GetConfiguration()) {
				t.ExpirationTime = exp
				out = t
				return p.open.TxPut(tx, t)
			}
		}
		left, held, err := take(f, req.GetConfiguration(), p.checkServiceConfiguration)
		if err != nil {
			return err
		}
		left.UpdatedAt = timestamppb.New(now)
		if err := p.flavors.TxPut(tx, left); err != nil {
			return err
		}
		out = &fluidos.Transaction{
			Id:             newID("t"),
			FlavorId:       f.GetId(),
			Buyer:          buyer,
			Configuration:  held,
			StartTime:      timestamppb.New(now),
			ExpirationTime: exp,
			BuyerClusterId: buyer.GetAdditionalInformation().GetLiqoId(),
			State:          fluidos.TransactionState_TRANSACTION_STATE_RESERVED,
		}
		return p.open.TxCreate(tx, out)
	})
	p.cfg.Metrics.reserved(err)
	if err != nil {
		return nil, err
	}
	if peer != "" && p.cfg.BuyerSeen != nil {
		p.cfg.BuyerSeen(buyer)
	}
	p.log.InfoContext(ctx, "flavor reserved", "transaction", out.GetId(), "flavor", out.GetFlavorId(), "buyer", buyer.GetNodeId(), "expires", out.GetExpirationTime().AsTime())
	select {
	case p.wake <- struct{}{}:
	default:
	}
	return out, nil
}

// sameAsked reports whether a reserved transaction holding held answers a
// request asking asked.
func sameAsked(held, asked *fluidos.Configuration) bool {
	if asked == nil {
		return true
	}
	if sc := asked.GetService(); sc != nil && held.GetService() != nil {
		return proto.Equal(sc, held.GetService())
	}
	return proto.Equal(held, asked)
}

// Purchase sells what a reserved transaction holds to its buyer and
// returns the contract. peer is the caller's verified identity (empty over
// an unauthenticated transport). Purchasing a transaction already bought
// returns its contract. Errors: ErrTransactionNotFound, ErrNotBuyer,
// ErrExpired (and what it held is on sale again), ErrClosed, ErrBusy, or
// the store's.
//
// When the allocator issues a kubeconfig for the contract
// (KubeconfigIssuer), the answer waits for it (see withKubeconfig).
func (p *Provider) Purchase(ctx context.Context, peer, transactionID string, req *fluidos.PurchaseRequest) (*fluidos.Contract, error) {
	var (
		out              *fluidos.Contract
		made, expiredNow bool
	)
	err := p.rounds(ctx, func(tx *store.Tx) error {
		out, made, expiredNow = nil, false, false
		now := time.Now()
		t, ok, err := p.open.TxGet(tx, transactionID)
		if err != nil {
			return err
		}
		if !ok {
			if t, ok, err = p.txns.TxGet(tx, transactionID); err != nil {
				return err
			}
		}
		if !ok {
			return fmt.Errorf("%w: %q", ErrTransactionNotFound, transactionID)
		}
		if peer != "" && t.GetBuyer().GetNodeId() != peer {
			return fmt.Errorf("%w: transaction %q was reserved by %q, not %q", ErrNotBuyer, transactionID, t.GetBuyer().GetNodeId(), peer)
		}
		switch t.GetState() {
		case fluidos.TransactionState_TRANSACTION_STATE_PURCHASED:
			c, ok, err := p.contracts.TxGet(tx, t.GetContractId())
			if err != nil {
				return err
			}
			if !ok {
				return fmt.Errorf("provider: transaction %q names contract %q, which is missing", transactionID, t.GetContractId())
			}
			out = c
			return nil
		case fluidos.TransactionState_TRANSACTION_STATE_EXPIRED:
			return fmt.Errorf("%w: transaction %q expired at %s", ErrExpired, transactionID, t.GetExpirationTime().AsTime().Format(time.RFC3339))
		case fluidos.TransactionState_TRANSACTION_STATE_RELEASED:
			return fmt.Errorf("%w: transaction %q", ErrClosed, transactionID)
		}
		f, _, err := p.flavors.TxGet(tx, t.GetFlavorId())
		if err != nil {
			return err
		}
		if !t.GetExpirationTime().AsTime().After(now) {
			expiredNow = true
			return p.txExpire(tx, t, f)
		}
		out = p.contractOf(t, f, req, now)
		if err := p.contracts.TxCreate(tx, out); err != nil {
			return err
		}
		if err := p.allocations.TxCreate(tx, allocationOf(out, now)); err != nil {
			return err
		}
		t.State = fluidos.TransactionState_TRANSACTION_STATE_PURCHASED
		t.ContractId = out.GetId()
		made = true
		return p.close(tx, t)
	})
	if err == nil && expiredNow {
		err = fmt.Errorf("%w: transaction %q", ErrExpired, transactionID)
	}
	p.cfg.Metrics.purchased(err)
	if err != nil {
		return nil, err
	}
	if made {
		p.sold(ctx, out)
	}
	// The buyer's kubeconfig goes to the buyer the transport verified,
	// or, over plain HTTP (nobody verified), in the answer of the
	// purchase that made the contract only: a repeated purchase of a
	// transaction whose ID was seen elsewhere (a log) gets none.
	if made || peer != "" {
		out = p.withKubeconfig(ctx, out)
	}
	return out, nil
}

// sold tells who must know of a contract just made.
func (p *Provider) sold(ctx context.Context, out *fluidos.Contract) {
	p.log.InfoContext(ctx, "flavor sold", "contract", out.GetId(), "transaction", out.GetTransactionId(), "flavor", out.GetFlavor().GetId(), "buyer", out.GetBuyer().GetNodeId())
	if p.cfg.Contracts != nil {
		p.cfg.Contracts.ContractMade(ctx, out)
	}
	if p.cfg.Allocator != nil {
		p.cfg.Allocator.Wake(AllocationID(out.GetId()))
	}
	select { // the contract's end: the expiry timer re-plans
	case p.wake <- struct{}{}:
	default:
	}
}

// contractOf is the contract of a transaction bought now: the flavor as
// sold (a K8Slice's characteristics are the partition held).
func (p *Provider) contractOf(t *fluidos.Transaction, f *fluidos.Flavor, req *fluidos.PurchaseRequest, now time.Time) *fluidos.Contract {
	sold := proto.Clone(f).(*fluidos.Flavor)
	if sold == nil {
		sold = &fluidos.Flavor{Id: t.GetFlavorId()}
	}
	sold.Availability = false
	if k := sold.GetK8Slice(); k != nil {
		h := t.GetConfiguration().GetK8Slice()
		k.Characteristics = &fluidos.K8SliceCharacteristics{Architecture: k.GetCharacteristics().GetArchitecture(),
			Cpu: h.GetCpu(), Memory: h.GetMemory(), Pods: h.GetPods(), Storage: h.GetStorage(), Gpu: h.GetGpu()}
		k.Partitionability = nil
	}
	self := p.cfg.Self.GetNodeId()
	return &fluidos.Contract{
		Id:                       "c-" + t.GetId(),
		Flavor:                   sold,
		Buyer:                    t.GetBuyer(),
		Seller:                   proto.Clone(p.cfg.Self).(*fluidos.NodeIdentity),
		Configuration:            t.GetConfiguration(),
		TransactionId:            t.GetId(),
		BuyerClusterId:           t.GetBuyerClusterId(),
		CreatedAt:                timestamppb.New(now),
		IngressTelemetryEndpoint: req.GetIngressTelemetryEndpoint(),
		// What the buyer reaches is provisioned after the purchase: its
		// credentials come with the allocation (RouteContractAllocation).
		PeeringTargetCredentials: &fluidos.PeeringTargetCredentials{ClusterId: self, ClusterName: self},
		State:                    fluidos.ContractState_CONTRACT_STATE_ACTIVE,
		ExpirationTime:           timestamppb.New(now.Add(p.cfg.ContractLease)),
	}
}

// admit asks the allocator whether it can provision what req asks of its
// flavor, before anything is held.
func (p *Provider) admit(ctx context.Context, req *fluidos.ReserveRequest) error {
	if p.cfg.Allocator == nil {
		return nil
	}
	f, err := p.Flavor(ctx, req.GetFlavorId())
	if err != nil {
		return err
	}
	if err := ConfigurationTypeMatches(f, req.GetConfiguration()); err != nil {
		return fmt.Errorf("%w: %w", ErrBadRequest, err)
	}
	if err := p.cfg.Allocator.Admit(ctx, f, req.GetConfiguration()); err != nil {
		return fmt.Errorf("%w: flavor %q: %w", ErrNotProvisionable, f.GetId(), err)
	}
	return nil
}

// txExpire marks a reserved transaction expired and puts what it held
// back into its flavor (f may be nil: the flavor is gone).
// The expired transaction keeps no secret of the buyer's configuration.
func (p *Provider) txExpire(tx *store.Tx, t *fluidos.Transaction, f *fluidos.Flavor) error {
	held := t.GetConfiguration()
	t = t.Redacted()
	t.State = fluidos.TransactionState_TRANSACTION_STATE_EXPIRED
	if err := p.close(tx, t); err != nil {
		return err
	}
	if f == nil {
		return nil
	}
	restore(f, held)
	f.UpdatedAt = timestamppb.Now()
	return p.flavors.TxPut(tx, f)
}

// close moves a transaction that is no longer reserved out of the open
// ones.
func (p *Provider) close(tx *store.Tx, t *fluidos.Transaction) error {
	p.open.TxDelete(tx, t.GetKeyString())
	return p.txns.TxPut(tx, t)
}

// rounds runs fn in store transactions until one commits, fn fails, or
// maxRounds rounds lost to concurrent writes (ErrBusy).
func (p *Provider) rounds(ctx context.Context, fn func(tx *store.Tx) error) error {
	for round := range maxRounds {
		_, err := p.cfg.Store.Txn(ctx, fn)
		if !errors.Is(err, store.ErrConflict) {
			return err
		}
		// Spread the retries of concurrent buyers.
		backoff := time.Duration(mrand.Int64N(int64(time.Millisecond) * int64(min(round+1, 10))))
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
	return ErrBusy
}

// newID is a prefix and 24 random hex digits.
func newID(prefix string) string {
	var b [12]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return prefix + "-" + hex.EncodeToString(b[:])
}

// ConfigurationTypeMatches checks that a configuration (nil: none) is of
// the flavor's type, naming both when it is not.
func ConfigurationTypeMatches(f *fluidos.Flavor, cfg *fluidos.Configuration) error {
	var ct fluidos.FlavorType
	switch {
	case cfg == nil:
		return nil
	case cfg.GetK8Slice() != nil:
		ct = fluidos.FlavorType_FLAVOR_TYPE_K8SLICE
	case cfg.GetService() != nil:
		ct = fluidos.FlavorType_FLAVOR_TYPE_SERVICE
	case cfg.GetVm() != nil:
		ct = fluidos.FlavorType_FLAVOR_TYPE_VM
	case cfg.GetSensor() != nil:
		ct = fluidos.FlavorType_FLAVOR_TYPE_SENSOR
	default:
		return nil
	}
	if ft := fluidos.FlavorTypeOf(f); ft != ct {
		name := func(t fluidos.FlavorType) string {
			return strings.ToLower(strings.TrimPrefix(t.String(), "FLAVOR_TYPE_"))
		}
		return fmt.Errorf("the configuration's type (%s) does not match flavor %q's (%s)", name(ct), f.GetId(), name(ft))
	}
	return nil
}
