package consumer

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/edgekit/edgekit/fluidos"
)

// Found is a flavor a discovery found, with the address it was found at.
type Found struct {
	Flavor  *fluidos.Flavor
	Address string
}

// Discover asks every peer at once for its available flavors matching sel
// (every flavor when nil), each bounded by the peer timeout and by ctx. It
// returns what was found, in the order of the peers, without the node's
// own flavors and without repeats of a flavor, and one result per peer.
// It fails only when sel is invalid; a peer's failure is in its result.
func (c *Consumer) Discover(ctx context.Context, sel *fluidos.Selector) ([]Found, []*fluidos.PeerResult, error) {
	if err := sel.Validate(); err != nil {
		return nil, nil, err
	}
	peers := c.cfg.Peers.Peers()
	results := make([]*fluidos.PeerResult, len(peers))
	flavors := make([][]*fluidos.Flavor, len(peers))
	var wg sync.WaitGroup
	for i, addr := range peers {
		wg.Go(func() {
			pctx, cancel := context.WithTimeout(ctx, c.cfg.PeerTimeout)
			defer cancel()
			start := time.Now()
			ans, err := c.cfg.Client.ListFlavors(pctx, addr, sel)
			r := &fluidos.PeerResult{Address: addr, Duration: durationpb.New(time.Since(start))}
			switch {
			case err != nil && errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
				r.Error = fmt.Sprintf("no answer within %v", c.cfg.PeerTimeout)
			case err != nil:
				r.Error = err.Error()
			default:
				c.cfg.Peers.Seen(addr)
				r.NodeId = ans.Peer
				for _, f := range ans.Flavors {
					if f.GetOwner().GetNodeId() != c.cfg.Self.GetNodeId() {
						flavors[i] = append(flavors[i], f)
					}
				}
				r.FlavorsFound = uint32(len(flavors[i]))
				if ans.Dropped > 0 {
					r.Error = fmt.Sprintf("%d flavors did not decode: %v", ans.Dropped, ans.DropErr)
				}
			}
			results[i] = r
			c.cfg.Metrics.peerAnswered(r)
		})
	}
	wg.Wait()
	var found []Found
	seen := map[string]bool{}
	for i, fs := range flavors {
		for _, f := range fs {
			key := f.GetOwner().GetNodeId() + "\x00" + f.GetId()
			if seen[key] {
				continue
			}
			seen[key] = true
			found = append(found, Found{Flavor: f, Address: peers[i]})
		}
	}
	return found, results, nil
}
