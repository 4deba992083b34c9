package consumer

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/hosts/fluidos/provider"
	"github.com/edgekit/edgekit/internal/store"
)

// BoughtID is the id under which this node keeps a contract it bought:
// its seller's node id and the seller's own contract id,
// "<seller>/<contract>". Sellers name their contracts independently (a
// reference FLUIDOS node names them per flavor), so the seller's id alone
// does not tell two purchases apart. Everything sent to the seller keeps
// the seller's own id (SellerContractID).
func BoughtID(seller, contractID string) string { return seller + "/" + contractID }

// SellerContractID is the seller's own id of a contract this node keeps
// under local id (BoughtID) and bought from seller.
func SellerContractID(local, seller string) string {
	return strings.TrimPrefix(local, seller+"/")
}

// sellerIDOf is the seller's own id of the contract of a bought
// allocation.
func sellerIDOf(a *fluidos.Allocation) string {
	return SellerContractID(a.GetContractId(), a.GetSeller().GetNodeId())
}

// ErrAmbiguousContract: a contract id given without its seller names
// contracts bought from more than one seller.
var ErrAmbiguousContract = errors.New("the contract id names contracts of more than one seller")

// ResolveBought is the id under which this node keeps the contract it
// bought that id names: id itself when it is one ("<seller>/<contract>"),
// or the only contract bought whose seller calls it id. A bare id that
// more than one seller uses is an ErrAmbiguousContract naming the ids to
// use instead; an id that names nothing bought is a store.ErrNotFound.
func (c *Consumer) ResolveBought(ctx context.Context, id string) (string, error) {
	if id == "" {
		return "", fmt.Errorf("%w: empty contract id", store.ErrNotFound)
	}
	if _, _, err := c.bought.Get(ctx, id); err == nil || !errors.Is(err, store.ErrNotFound) {
		return id, err
	}
	cs, _, err := c.bought.List(ctx)
	if err != nil {
		return "", err
	}
	var found []string
	for _, ct := range cs {
		if ct.GetId() == BoughtID(ct.GetSeller().GetNodeId(), id) {
			found = append(found, ct.GetId())
		}
	}
	switch len(found) {
	case 0:
		return "", fmt.Errorf("this node bought no contract %q: %w", id, store.ErrNotFound)
	case 1:
		return found[0], nil
	}
	return "", fmt.Errorf("%w: %q was bought from several sellers; name one of %s", ErrAmbiguousContract, id, strings.Join(found, ", "))
}

// rekey stores the contracts and allocations bought that an earlier
// version kept under the seller's contract id alone under their BoughtID,
// and points the solvers and reservations that bought them at the new
// ids. Each record is written under its new key before the old one is
// deleted, so a rekey cut short is finished by the next.
func (c *Consumer) rekey(ctx context.Context) error {
	cs, _, err := c.bought.List(ctx)
	if err != nil {
		return fmt.Errorf("listing contracts bought: %w", err)
	}
	moved := map[string]string{} // old contract id -> new
	for _, ct := range cs {
		seller := ct.GetSeller().GetNodeId()
		if seller == "" || strings.HasPrefix(ct.GetId(), seller+"/") {
			continue
		}
		old := ct.GetId()
		nw := proto.Clone(ct).(*fluidos.Contract)
		nw.Id = BoughtID(seller, old)
		if _, err := c.bought.Create(ctx, nw); err != nil && !errors.Is(err, store.ErrAlreadyExists) {
			return fmt.Errorf("re-storing contract %s as %s: %w", old, nw.GetId(), err)
		}
		moved[old] = nw.GetId()
	}
	as, _, err := c.boughtAllocs.List(ctx)
	if err != nil {
		return fmt.Errorf("listing allocations bought: %w", err)
	}
	for _, a := range as {
		seller := a.GetSeller().GetNodeId()
		if seller == "" || strings.HasPrefix(a.GetContractId(), seller+"/") {
			continue
		}
		old := a.GetContractId()
		if _, ok := moved[old]; !ok {
			moved[old] = BoughtID(seller, old)
		}
		nw := proto.Clone(a).(*fluidos.Allocation)
		nw.ContractId = moved[old]
		nw.Id = provider.AllocationID(nw.ContractId)
		if _, err := c.boughtAllocs.Create(ctx, nw); err != nil && !errors.Is(err, store.ErrAlreadyExists) {
			return fmt.Errorf("re-storing allocation %s as %s: %w", a.GetId(), nw.GetId(), err)
		}
	}
	if len(moved) == 0 {
		return nil
	}
	svs, _, err := c.solvers.List(ctx)
	if err != nil {
		return fmt.Errorf("listing solvers: %w", err)
	}
	for _, sv := range svs {
		nw, ok := moved[sv.GetStatus().GetContractId()]
		if !ok {
			continue
		}
		if _, _, err := c.solvers.Modify(ctx, sv.GetKeyString(), func(cur *fluidos.Solver) (bool, error) {
			if cur.GetStatus().GetContractId() != sv.GetStatus().GetContractId() {
				return false, nil
			}
			if cur.Status.AllocationId == provider.AllocationID(cur.Status.ContractId) {
				cur.Status.AllocationId = provider.AllocationID(nw)
			}
			cur.Status.ContractId = nw
			return true, nil
		}); err != nil && !errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("pointing solver %s at contract %s: %w", sv.GetId(), nw, err)
		}
	}
	rs, _, err := c.reservations.List(ctx)
	if err != nil {
		return fmt.Errorf("listing reservations: %w", err)
	}
	for _, r := range rs {
		nw, ok := moved[r.GetStatus().GetContractId()]
		if !ok {
			continue
		}
		if _, _, err := c.reservations.Modify(ctx, r.GetKeyString(), func(cur *fluidos.Reservation) (bool, error) {
			if cur.GetStatus().GetContractId() != r.GetStatus().GetContractId() {
				return false, nil
			}
			cur.Status.ContractId = nw
			return true, nil
		}); err != nil && !errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("pointing reservation %s at contract %s: %w", r.GetId(), nw, err)
		}
	}
	for old := range moved {
		if _, err := c.boughtAllocs.Delete(ctx, provider.AllocationID(old), nil); err != nil && !errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("deleting allocation %s re-stored as %s: %w", provider.AllocationID(old), provider.AllocationID(moved[old]), err)
		}
		if _, err := c.bought.Delete(ctx, old, nil); err != nil && !errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("deleting contract %s re-stored as %s: %w", old, moved[old], err)
		}
		c.log.InfoContext(ctx, "contract bought re-stored under its seller's id", "contract", old, "as", moved[old])
	}
	return nil
}
