package consumer

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/edgekit/edgekit/fieldmap"
	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/fluidos/rear"
	"github.com/edgekit/edgekit/hosts/fluidos/provider"
	"github.com/edgekit/edgekit/internal/store"
)

// BoughtAllocationKind is the store kind of the allocations of the
// contracts this node bought, as their sellers report them (the
// allocations of what it sold are of kind Allocation).
const BoughtAllocationKind = "BoughtAllocation"

// BoughtAllocations are the allocations of what this node bought, with
// the credentials their sellers handed over.
func (c *Consumer) BoughtAllocations() *store.Kind[*fluidos.Allocation] { return c.boughtAllocs }

// followed makes the allocation of a contract just bought from seller,
// whose REAR endpoint is at addr, and wakes the keeper.
func (c *Consumer) followed(ctx context.Context, ct *fluidos.Contract, addr string) (*fluidos.Allocation, error) {
	seller := proto.Clone(ct.GetSeller()).(*fluidos.NodeIdentity)
	if seller == nil {
		seller = &fluidos.NodeIdentity{}
	}
	seller.Ip = addr
	a := &fluidos.Allocation{
		Id: provider.AllocationID(ct.GetId()), ContractId: ct.GetId(), FlavorType: fluidos.FlavorTypeOf(ct.GetFlavor()),
		Buyer: ct.GetBuyer(), Seller: seller, CreatedAt: timestamppb.Now(), ExpirationTime: ct.GetExpirationTime(),
		Status: &fluidos.AllocationStatus{State: fluidos.AllocationState_ALLOCATION_STATE_INACTIVE,
			Message: "waiting for the seller to provision", LastUpdateTime: timestamppb.Now()},
	}
	if _, err := c.boughtAllocs.Create(ctx, a); err != nil && !errors.Is(err, store.ErrAlreadyExists) {
		return nil, err
	}
	c.kickKeeper()
	return a, nil
}

// ReleaseBought gives a contract this node bought back to its seller: the
// release is recorded at once and the keeper tells the seller (again and
// again until it answers), which tears down what it provisioned. It
// returns the allocation as this node knows it. A contract whose seller
// has no release route (a reference FLUIDOS node, which answered 404 on
// its contract routes) is not changed: the error (ErrNoReleaseRoute) says
// so and when the contract ends.
//
// contractID is the id this node keeps the contract under (BoughtID), or
// the seller's own id when it names one contract bought (ResolveBought).
func (c *Consumer) ReleaseBought(ctx context.Context, contractID, reason string) (*fluidos.Allocation, error) {
	if reason == "" {
		reason = "released by its buyer"
	}
	contractID, err := c.ResolveBought(ctx, contractID)
	if err != nil {
		return nil, err
	}
	a, _, err := c.boughtAllocs.Modify(ctx, provider.AllocationID(contractID), func(cur *fluidos.Allocation) (bool, error) {
		if cur.GetReleaseRequested() || provider.Ended(cur) {
			return false, nil
		}
		if c.unfollowed(cur) {
			end := "its expiration time is unknown"
			if exp := cur.GetExpirationTime(); exp != nil {
				end = "it ends at its expiration time " + exp.AsTime().UTC().Format(time.RFC3339)
			}
			return false, fmt.Errorf("%w: contract %s was bought from %s, which has no release route (a reference FLUIDOS node neither renews nor releases contracts); nothing was asked of it, and %s",
				ErrNoReleaseRoute, contractID, cur.GetSeller().GetNodeId(), end)
		}
		cur.ReleaseRequested, cur.ReleaseReason = true, reason
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	c.log.InfoContext(ctx, "release asked of the seller", "contract", contractID, "seller", a.GetSeller().GetNodeId())
	c.kickKeeper()
	return a, nil
}

// ErrNoReleaseRoute: the seller of a contract cannot be asked to release
// it (a reference FLUIDOS node has no release route).
var ErrNoReleaseRoute = errors.New("the seller has no release route")

func (c *Consumer) kickKeeper() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// keep follows the allocations of the contracts this node bought until
// ctx ends: each is asked of its seller while it is provisioned (every
// PollInterval), renewed while it is in use (before a third of the time
// left to its end passes, at least every RenewInterval), and released when
// this node released it, until the seller reports it ended.
func (c *Consumer) keep(ctx context.Context) {
	due := map[string]time.Time{}
	for {
		next := c.followAll(ctx, due)
		wait := time.Until(next)
		if next.IsZero() || wait > c.cfg.RenewInterval {
			wait = c.cfg.RenewInterval
		}
		t := time.NewTimer(max(wait, 0))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-c.kick:
			t.Stop()
		case <-t.C:
		}
	}
}

// followAll follows the allocations that are due, and returns when the
// next one is.
func (c *Consumer) followAll(ctx context.Context, due map[string]time.Time) (next time.Time) {
	as, _, err := c.boughtAllocs.List(ctx)
	if err != nil {
		if ctx.Err() == nil {
			c.log.WarnContext(ctx, "listing bought allocations", "err", err)
		}
		return time.Now().Add(c.cfg.PollInterval)
	}
	now := time.Now()
	seen := map[string]bool{}
	for _, a := range as {
		id := a.GetId()
		seen[id] = true
		if provider.Ended(a) && !proto.Equal(a, a.Redacted()) {
			c.forget(ctx, a) // an earlier forget did not finish
		}
		if provider.Ended(a) || c.unfollowed(a) {
			continue
		}
		if d, ok := due[id]; ok && d.After(now) && !(a.GetReleaseRequested() && !releasing(a)) {
			if next.IsZero() || d.Before(next) {
				next = d
			}
			continue
		}
		d := time.Now().Add(c.follow(ctx, a))
		due[id] = d
		if next.IsZero() || d.Before(next) {
			next = d
		}
	}
	for id := range due {
		if !seen[id] {
			delete(due, id)
		}
	}
	return next
}

// releasing reports whether the seller acknowledged a release.
func releasing(a *fluidos.Allocation) bool {
	s := a.GetStatus().GetState()
	return s == fluidos.AllocationState_ALLOCATION_STATE_RELEASING || provider.Ended(a)
}

// unfollowed reports whether a's seller said it does not follow
// allocations (a reference node): it is not asked again.
func (c *Consumer) unfollowed(a *fluidos.Allocation) bool {
	return a.GetStatus().GetState() == fluidos.AllocationState_ALLOCATION_STATE_INACTIVE && a.GetStatus().GetMessage() == msgUnfollowed
}

const msgUnfollowed = "the seller does not report allocations (not an edgekit node): not followed"

// follow asks a's seller for it (renewing its contract, or releasing it)
// and records the answer; it returns when to ask again.
func (c *Consumer) follow(ctx context.Context, a *fluidos.Allocation) time.Duration {
	seller := a.GetSeller()
	rctx, cancel := context.WithTimeout(ctx, c.cfg.PeerTimeout)
	defer cancel()
	var (
		view *fluidos.Allocation
		err  error
	)
	if a.GetReleaseRequested() {
		view, err = c.cfg.Client.ReleaseContract(rctx, seller.GetIp(), seller.GetNodeId(), sellerIDOf(a), a.GetReleaseReason())
	} else {
		view, err = c.cfg.Client.RenewContract(rctx, seller.GetIp(), seller.GetNodeId(), sellerIDOf(a))
	}
	var se *rear.StatusError
	switch {
	case ctx.Err() != nil:
		return 0
	case errors.As(err, &se) && (se.Code == http.StatusNotFound || se.Code == http.StatusMethodNotAllowed):
		msg := msgUnfollowed
		if a.GetStatus().GetState() != fluidos.AllocationState_ALLOCATION_STATE_INACTIVE || a.GetStatus().GetMessage() != "waiting for the seller to provision" {
			msg = fmt.Sprintf("the seller no longer knows the contract: %v", err)
		}
		got := c.record(ctx, a.GetId(), func(cur *fluidos.Allocation) {
			if msg == msgUnfollowed {
				cur.Status.Message = msg
			} else {
				cur.Status.State, cur.Status.Message = fluidos.AllocationState_ALLOCATION_STATE_ERROR, msg
			}
		})
		if got != nil && provider.Ended(got) {
			c.forget(ctx, got)
		}
		return c.cfg.RenewInterval
	case err != nil:
		c.log.InfoContext(ctx, "seller not reached", "allocation", a.GetId(), "seller", seller.GetNodeId(), "err", err)
		c.record(ctx, a.GetId(), func(cur *fluidos.Allocation) {
			cur.Status.Message = fmt.Sprintf("seller %s not reached (%v); last known: %s", seller.GetNodeId(), err, lastKnown(cur))
		})
		return c.cfg.PollInterval
	}
	// The seller names the contract and allocation by its own ids: this
	// node keeps them under its own (BoughtID).
	view.ContractId, view.Id = a.GetContractId(), a.GetId()
	if provider.Ended(view) {
		// The contract first: once the allocation reads ended, so does it.
		view.ReleaseRequested = true
		c.contractEnded(ctx, view)
	}
	got := c.record(ctx, a.GetId(), func(cur *fluidos.Allocation) {
		local := cur.GetReleaseRequested()
		reason, addr := cur.GetReleaseReason(), cur.GetSeller().GetIp()
		proto.Reset(cur)
		proto.Merge(cur, view)
		cur.Seller = proto.Clone(view.GetSeller()).(*fluidos.NodeIdentity)
		if cur.Seller == nil {
			cur.Seller = &fluidos.NodeIdentity{NodeId: seller.GetNodeId()}
		}
		cur.Seller.Ip = addr
		if local && !cur.ReleaseRequested {
			cur.ReleaseRequested, cur.ReleaseReason = true, reason
		}
	})
	if got != nil && provider.Ended(got) {
		c.forget(ctx, got)
		return 0
	}
	switch view.GetStatus().GetState() {
	case fluidos.AllocationState_ALLOCATION_STATE_ACTIVE, fluidos.AllocationState_ALLOCATION_STATE_DEGRADED:
		renew := c.cfg.RenewInterval
		if exp := view.GetExpirationTime(); exp != nil {
			renew = min(renew, time.Until(exp.AsTime())/3)
		}
		return max(renew, c.cfg.PollInterval)
	}
	return c.cfg.PollInterval
}

// lastKnown is the state a buyer last heard of.
func lastKnown(a *fluidos.Allocation) string {
	return strings.TrimPrefix(a.GetStatus().GetState().String(), "ALLOCATION_STATE_")
}

// record changes the stored bought allocation id with fn and returns it.
func (c *Consumer) record(ctx context.Context, id string, fn func(cur *fluidos.Allocation)) *fluidos.Allocation {
	a, _, err := c.boughtAllocs.Modify(ctx, id, func(cur *fluidos.Allocation) (bool, error) {
		before := proto.Clone(cur)
		if cur.Status == nil {
			cur.Status = &fluidos.AllocationStatus{}
		}
		fn(cur)
		if proto.Equal(before, cur) {
			return false, nil
		}
		if cur.Status.LastUpdateTime == nil || !proto.Equal(before.(*fluidos.Allocation).GetStatus(), cur.GetStatus()) {
			cur.Status.LastUpdateTime = timestamppb.Now()
		}
		return true, nil
	})
	if err != nil {
		if ctx.Err() == nil {
			c.log.WarnContext(ctx, "recording a bought allocation", "allocation", id, "err", err)
		}
		return nil
	}
	return a
}

// contractEnded marks the contract of an allocation that ended released
// on this side too.
func (c *Consumer) contractEnded(ctx context.Context, a *fluidos.Allocation) {
	_, _, err := c.bought.Modify(ctx, a.GetContractId(), func(ct *fluidos.Contract) (bool, error) {
		if ct.GetState() == fluidos.ContractState_CONTRACT_STATE_RELEASED {
			return false, nil
		}
		ct.State, ct.ReleasedAt, ct.ReleaseReason = fluidos.ContractState_CONTRACT_STATE_RELEASED, timestamppb.Now(), a.GetReleaseReason()
		ct.Redact()
		return true, nil
	})
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		c.log.WarnContext(ctx, "recording a contract released", "contract", a.GetContractId(), "err", err)
		return
	}
	c.log.InfoContext(ctx, "contract released", "contract", a.GetContractId(), "state", a.GetStatus().GetState().String())
}

// forget drops every secret this node keeps of a bought allocation that
// ended (released, expired, failed): the credentials and configuration
// parameters in the solvers and reservations that bought its contract, in
// the contract and in the allocation itself. What accounting needs stays:
// ids, parties, flavor and price, times, states and reasons. The
// allocation goes last, so that a forget cut short is done again by the
// keeper (which forgets an ended allocation still holding a secret).
func (c *Consumer) forget(ctx context.Context, a *fluidos.Allocation) {
	contract := a.GetContractId()
	redact := func(kind string, err error) bool {
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			if ctx.Err() == nil {
				c.log.WarnContext(ctx, "dropping the secrets of an ended contract", "contract", contract, "record", kind, "err", err)
			}
			return false
		}
		return true
	}
	svs, _, err := c.solvers.List(ctx)
	if !redact("solvers", err) {
		return
	}
	for _, sv := range svs {
		if sv.GetStatus().GetContractId() != contract || proto.Equal(sv, sv.Redacted()) {
			continue
		}
		_, _, err := c.solvers.Modify(ctx, sv.GetKeyString(), redactIn[*fluidos.Solver])
		if !redact("solver "+sv.GetId(), err) {
			return
		}
	}
	rs, _, err := c.reservations.List(ctx)
	if !redact("reservations", err) {
		return
	}
	for _, r := range rs {
		if r.GetStatus().GetContractId() != contract || proto.Equal(r, r.Redacted()) {
			continue
		}
		_, _, err := c.reservations.Modify(ctx, r.GetKeyString(), redactIn[*fluidos.Reservation])
		if !redact("reservation "+r.GetId(), err) {
			return
		}
	}
	_, _, err = c.bought.Modify(ctx, contract, redactIn[*fluidos.Contract])
	if !redact("contract", err) {
		return
	}
	_, _, err = c.boughtAllocs.Modify(ctx, a.GetKeyString(), redactIn[*fluidos.Allocation])
	redact("allocation", err)
}

// forgetFailed drops the secrets of a solver that failed without buying
// (a refused reservation or purchase, a timeout): its configuration
// parameters, in the solver and in its reservations. A solver that bought
// a contract keeps them until the contract ends (forget).
func (c *Consumer) forgetFailed(ctx context.Context, solverID string) {
	sv, _, err := c.solvers.Get(ctx, solverID)
	if err != nil || sv.GetStatus().GetContractId() != "" {
		return
	}
	rs, _, err := c.reservations.List(ctx)
	if err != nil {
		c.log.WarnContext(ctx, "dropping the secrets of a failed solver", "solver", solverID, "err", err)
		return
	}
	for _, r := range rs {
		if r.GetSolverId() != solverID || r.GetStatus().GetContractId() != "" || proto.Equal(r, r.Redacted()) {
			continue
		}
		if _, _, err := c.reservations.Modify(ctx, r.GetKeyString(), redactIn[*fluidos.Reservation]); err != nil && !errors.Is(err, store.ErrNotFound) {
			c.log.WarnContext(ctx, "dropping the secrets of a failed solver", "reservation", r.GetId(), "err", err)
			return
		}
	}
	if _, _, err := c.solvers.Modify(ctx, solverID, redactIn[*fluidos.Solver]); err != nil && !errors.Is(err, store.ErrNotFound) {
		c.log.WarnContext(ctx, "dropping the secrets of a failed solver", "solver", solverID, "err", err)
	}
}

// redactIn clears the secrets of a stored object, reporting whether it
// changed.
func redactIn[T proto.Message](cur T) (bool, error) {
	before := proto.Clone(cur)
	fieldmap.Redact(cur)
	return !proto.Equal(before, cur), nil
}
