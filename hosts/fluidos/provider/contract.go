package provider

import (
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/internal/store"
)

// Allocator provisions what the provider sells. The provider asks it,
// before a reservation holds anything, whether it can provision what a
// buyer asks of a flavor, and tells it when an allocation needs work (a
// contract was made, a release was asked).
type Allocator interface {
	// Admit returns why what cfg asks of f (nil: all of it) cannot be
	// provisioned, or nil.
	Admit(ctx context.Context, f *fluidos.Flavor, cfg *fluidos.Configuration) error
	// Wake says that allocation id needs work. It must not block.
	Wake(id string)
}

// AllocationID is the identifier of the allocation of a contract.
func AllocationID(contractID string) string { return "a-" + contractID }

// Allocations are the allocations of the contracts the provider made.
func (p *Provider) Allocations() *store.Kind[*fluidos.Allocation] { return p.allocations }

// allocationOf is the allocation a contract starts with.
func allocationOf(c *fluidos.Contract, now time.Time) *fluidos.Allocation {
	return &fluidos.Allocation{
		Id:             AllocationID(c.GetId()),
		ContractId:     c.GetId(),
		FlavorType:     fluidos.FlavorTypeOf(c.GetFlavor()),
		Buyer:          c.GetBuyer(),
		Seller:         c.GetSeller(),
		CreatedAt:      timestamppb.New(now),
		ExpirationTime: c.GetExpirationTime(),
		Status: &fluidos.AllocationStatus{State: fluidos.AllocationState_ALLOCATION_STATE_INACTIVE,
			Message: "waiting to be provisioned", LastUpdateTime: timestamppb.New(now)},
	}
}

// Ended reports whether an allocation reached a state it never leaves:
// RELEASED, or ERROR (a failed allocation, once what it made is torn
// down; until then it is RELEASING with its errors).
func Ended(a *fluidos.Allocation) bool {
	s := a.GetStatus().GetState()
	return s == fluidos.AllocationState_ALLOCATION_STATE_RELEASED || s == fluidos.AllocationState_ALLOCATION_STATE_ERROR
}

func released(c *fluidos.Contract) bool {
	return c.GetState() == fluidos.ContractState_CONTRACT_STATE_RELEASED
}

// buyerContract reads a contract and its allocation in tx and checks that
// peer (empty: unauthenticated) is its buyer.
func (p *Provider) buyerContract(tx *store.Tx, peer, contractID string) (*fluidos.Contract, *fluidos.Allocation, error) {
	c, ok, err := p.contracts.TxGet(tx, contractID)
	if err != nil {
		return nil, nil, err
	}
	if !ok {
		return nil, nil, fmt.Errorf("%w: %q", ErrContractNotFound, contractID)
	}
	if peer != "" && c.GetBuyer().GetNodeId() != peer {
		return nil, nil, fmt.Errorf("%w: contract %q was bought by %q, not %q", ErrNotBuyer, contractID, c.GetBuyer().GetNodeId(), peer)
	}
	a, ok, err := p.allocations.TxGet(tx, AllocationID(contractID))
	if err != nil {
		return nil, nil, err
	}
	if !ok {
		return nil, nil, fmt.Errorf("%w: contract %q has no allocation", ErrContractNotFound, contractID)
	}
	return c, a, nil
}

// ContractAllocation returns the allocation of a contract to its buyer;
// peer is the caller's verified identity (empty over an unauthenticated
// transport). Errors: ErrContractNotFound, ErrNotBuyer, or the store's.
func (p *Provider) ContractAllocation(ctx context.Context, peer, contractID string) (*fluidos.Allocation, error) {
	var out *fluidos.Allocation
	_, err := p.cfg.Store.Txn(ctx, func(tx *store.Tx) (err error) {
		_, out, err = p.buyerContract(tx, peer, contractID)
		return err
	})
	return out, err
}

// ExtraContractLease is the key, in the extra information of a contract
// this node sells, of the lease announced to its buyer (a Go duration,
// "10m0s"): a buyer that renews the contract once must then renew it
// within every lease, or the contract ends; a buyer that never renews
// keeps it until its expirationTime (Config.ContractTerm after purchase).
const ExtraContractLease = "edgekit.io/contract-lease"

// Renew sets the end of a contract to ContractLease from now and returns
// its allocation: from its buyer's first renewal on, the contract lasts as
// long as the buyer renews it in time (the first renewal may bring its end
// closer than its term). A contract released, or being released, is left
// as it is (the buyer learns it from the allocation).
func (p *Provider) Renew(ctx context.Context, peer, contractID string) (*fluidos.Allocation, error) {
	var (
		out    *fluidos.Allocation
		sooner bool // the end comes closer: the expiry timer re-plans
	)
	err := p.rounds(ctx, func(tx *store.Tx) error {
		sooner = false
		c, a, err := p.buyerContract(tx, peer, contractID)
		if err != nil {
			return err
		}
		out = a
		if released(c) || a.GetReleaseRequested() {
			return nil
		}
		exp := timestamppb.New(time.Now().Add(p.cfg.ContractLease))
		sooner = a.GetExpirationTime() == nil || exp.AsTime().Before(a.GetExpirationTime().AsTime())
		c.ExpirationTime, a.ExpirationTime = exp, exp
		if err := p.contracts.TxPut(tx, c); err != nil {
			return err
		}
		return p.allocations.TxPut(tx, a)
	})
	if err != nil {
		return nil, err
	}
	if sooner {
		select {
		case p.wake <- struct{}{}:
		default:
		}
	}
	return out, nil
}

// Release ends a contract at its buyer's request (peer, empty over an
// unauthenticated transport): its allocation is marked for teardown and
// the allocator woken. Releasing again changes nothing. It returns the
// allocation.
func (p *Provider) Release(ctx context.Context, peer, contractID, reason string) (*fluidos.Allocation, error) {
	if reason == "" {
		reason = "released by its buyer"
	}
	var out *fluidos.Allocation
	_, err := p.cfg.Store.Txn(ctx, func(tx *store.Tx) (err error) {
		if _, _, err := p.buyerContract(tx, peer, contractID); err != nil {
			return err
		}
		out, err = p.txRequestRelease(tx, AllocationID(contractID), reason)
		return err
	})
	if err != nil {
		return nil, err
	}
	p.released(ctx, out)
	return out, nil
}

// RequestRelease marks an allocation for teardown with reason (by its
// seller: its operator, a lapsed lease, a failure) and wakes the
// allocator. It returns the allocation; ErrContractNotFound when there is
// none.
func (p *Provider) RequestRelease(ctx context.Context, allocationID, reason string) (*fluidos.Allocation, error) {
	var out *fluidos.Allocation
	_, err := p.cfg.Store.Txn(ctx, func(tx *store.Tx) (err error) {
		out, err = p.txRequestRelease(tx, allocationID, reason)
		return err
	})
	if err != nil {
		return nil, err
	}
	p.released(ctx, out)
	return out, nil
}

func (p *Provider) txRequestRelease(tx *store.Tx, id, reason string) (*fluidos.Allocation, error) {
	a, ok, err := p.allocations.TxGet(tx, id)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%w: no allocation %q", ErrContractNotFound, id)
	}
	if a.GetReleaseRequested() || Ended(a) {
		return a, nil
	}
	a.ReleaseRequested, a.ReleaseReason = true, reason
	st := proto.Clone(a.GetStatus()).(*fluidos.AllocationStatus)
	if st == nil {
		st = &fluidos.AllocationStatus{}
	}
	st.State = fluidos.AllocationState_ALLOCATION_STATE_RELEASING
	st.Message, st.LastUpdateTime = "releasing: "+reason, timestamppb.Now()
	a.Status = st
	return a, p.allocations.TxPut(tx, a)
}

func (p *Provider) released(ctx context.Context, a *fluidos.Allocation) {
	p.log.InfoContext(ctx, "release asked", "allocation", a.GetId(), "reason", a.GetReleaseReason())
	if p.cfg.Allocator != nil {
		p.cfg.Allocator.Wake(a.GetId())
	}
}

// Finish closes the books of an allocation whose teardown is done, in one
// store transaction: the allocation ends in state final (RELEASED, or
// ERROR for one that failed) with msg, its contract is RELEASED, and its
// transaction RELEASED with what it held put back on sale, exactly once
// however often Finish runs. The three records keep what accounting needs
// (ids, parties, flavor, price, times, what was held) and lose every
// secret (debug_redact fields: credentials, the buyer's configuration
// parameters, kubeconfigs).
func (p *Provider) Finish(ctx context.Context, allocationID string, final fluidos.AllocationState, msg string) error {
	restored := false
	err := p.rounds(ctx, func(tx *store.Tx) error {
		restored = false
		now := timestamppb.Now()
		a, ok, err := p.allocations.TxGet(tx, allocationID)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("%w: no allocation %q", ErrContractNotFound, allocationID)
		}
		st := proto.Clone(a.GetStatus()).(*fluidos.AllocationStatus)
		if st == nil {
			st = &fluidos.AllocationStatus{}
		}
		st.State, st.Message, st.Task, st.Step, st.LastUpdateTime = final, msg, "", "", now
		a.Status, a.ReleaseRequested = st, true
		a.Redact()
		if err := p.allocations.TxPut(tx, a); err != nil {
			return err
		}
		c, ok, err := p.contracts.TxGet(tx, a.GetContractId())
		if err != nil || !ok {
			return err
		}
		if rc := c.Redacted(); !released(c) || !proto.Equal(rc, c) {
			if !released(c) {
				rc.State, rc.ReleasedAt, rc.ReleaseReason = fluidos.ContractState_CONTRACT_STATE_RELEASED, now, a.GetReleaseReason()
			}
			if err := p.contracts.TxPut(tx, rc); err != nil {
				return err
			}
		}
		t, ok, err := p.txns.TxGet(tx, c.GetTransactionId())
		if err != nil || !ok {
			return err
		}
		if t.GetState() != fluidos.TransactionState_TRANSACTION_STATE_PURCHASED {
			if rt := t.Redacted(); !proto.Equal(rt, t) {
				return p.txns.TxPut(tx, rt)
			}
			return nil
		}
		held := t.GetConfiguration()
		t.State = fluidos.TransactionState_TRANSACTION_STATE_RELEASED
		t = t.Redacted()
		if err := p.txns.TxPut(tx, t); err != nil {
			return err
		}
		f, ok, err := p.flavors.TxGet(tx, t.GetFlavorId())
		if err != nil || !ok {
			return err
		}
		restore(f, held)
		f.UpdatedAt = now
		restored = true
		return p.flavors.TxPut(tx, f)
	})
	if err != nil {
		return fmt.Errorf("provider: closing allocation %s: %w", allocationID, err)
	}
	p.log.InfoContext(ctx, "allocation closed", "allocation", allocationID, "state", final.String(), "back_on_sale", restored)
	if restored {
		p.cfg.Metrics.releasedContract()
	}
	return nil
}

// expireContracts asks the release of every allocation whose contract's
// end passed without a renewal, and returns the earliest end still to
// come (zero when none).
func (p *Provider) expireContracts(ctx context.Context) (next time.Time, err error) {
	as, _, err := p.allocations.List(ctx)
	if err != nil {
		return time.Time{}, err
	}
	now := time.Now()
	for _, a := range as {
		if a.GetReleaseRequested() || Ended(a) || a.GetExpirationTime() == nil {
			continue
		}
		exp := a.GetExpirationTime().AsTime()
		if exp.After(now) {
			if next.IsZero() || exp.Before(next) {
				next = exp
			}
			continue
		}
		reason := fmt.Sprintf("the contract ended at %s without a renewal by its buyer", exp.UTC().Format(time.RFC3339))
		if _, err := p.RequestRelease(ctx, a.GetId(), reason); err != nil && !errors.Is(err, ErrContractNotFound) {
			return time.Time{}, err
		}
		p.cfg.Metrics.expiredContract()
	}
	return next, nil
}
