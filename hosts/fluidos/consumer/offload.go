package consumer

import (
	"context"
	"errors"
	"fmt"

	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/fluidos/rear"
	"github.com/edgekit/edgekit/hosts/fluidos/provider"
	"github.com/edgekit/edgekit/internal/store"
)

// ErrNoSlice: the contract named is not a K8Slice this node bought and
// can run instances on now.
var ErrNoSlice = errors.New("no usable slice")

// Slice is the K8Slice this node bought with contract cid (its BoughtID,
// or the seller's id when it names one contract bought), as its seller's
// credentials name it, when it is in use (ACTIVE or DEGRADED).
func (c *Consumer) Slice(ctx context.Context, cid string) (rear.Slice, error) {
	local, err := c.ResolveBought(ctx, cid)
	if errors.Is(err, store.ErrNotFound) {
		return rear.Slice{}, fmt.Errorf("%w: this node bought no contract %q", ErrNoSlice, cid)
	}
	if err != nil {
		return rear.Slice{}, err
	}
	a, _, err := c.boughtAllocs.Get(ctx, provider.AllocationID(local))
	if errors.Is(err, store.ErrNotFound) {
		return rear.Slice{}, fmt.Errorf("%w: contract %q has no allocation", ErrNoSlice, cid)
	}
	if err != nil {
		return rear.Slice{}, err
	}
	switch st := a.GetStatus().GetState(); {
	case a.GetFlavorType() != fluidos.FlavorType_FLAVOR_TYPE_K8SLICE:
		return rear.Slice{}, fmt.Errorf("%w: contract %q bought a %s", ErrNoSlice, cid, a.GetFlavorType())
	case st != fluidos.AllocationState_ALLOCATION_STATE_ACTIVE && st != fluidos.AllocationState_ALLOCATION_STATE_DEGRADED:
		return rear.Slice{}, fmt.Errorf("%w: the slice of contract %q is %s", ErrNoSlice, cid, st)
	case a.GetCredentials().GetToken() == "":
		return rear.Slice{}, fmt.Errorf("%w: the seller handed over no token for contract %q", ErrNoSlice, cid)
	}
	creds := a.GetCredentials()
	if creds.GetEndpoint() == "" {
		creds.Endpoint = a.GetSeller().GetIp()
	}
	return rear.Slice{Seller: a.GetSeller().GetNodeId(), Credentials: creds}, nil
}

// SliceClient is the REAR client the node runs instances on its slices
// with (under its own certificate).
func (c *Consumer) SliceClient() *rear.Client { return c.cfg.Client }
