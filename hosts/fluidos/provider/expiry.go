package provider

import (
	"context"
	"time"

	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/internal/store"
)

// replanEvery bounds how long the expiry timer sleeps without looking at
// the store, and how long it waits after a store error.
const replanEvery = time.Minute

// Start expires reserved transactions at their expiration time, and asks
// the release of contracts whose buyer did not renew them in time, until
// ctx ends: it looks at the store at once (what expired while the node
// was down is released first), then sleeps until the earliest expiry
// still pending, a new reservation or contract, or replanEvery. It
// returns ctx's error.
func (p *Provider) Start(ctx context.Context) error {
	for {
		next, err := p.ExpireDue(ctx)
		if err == nil {
			var nc time.Time
			if nc, err = p.expireContracts(ctx); err == nil && !nc.IsZero() && (next.IsZero() || nc.Before(next)) {
				next = nc
			}
		}
		wait := replanEvery
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			p.log.WarnContext(ctx, "expiring transactions", "err", err)
		} else if !next.IsZero() {
			wait = min(max(time.Until(next), 0), replanEvery)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-p.wake:
			t.Stop()
		case <-t.C:
		}
	}
}

// ExpireDue expires every reserved transaction whose expiration time has
// passed, putting what each held back on sale, and returns the earliest
// expiration time still pending (zero when none).
func (p *Provider) ExpireDue(ctx context.Context) (next time.Time, err error) {
	txns, _, err := p.open.List(ctx)
	if err != nil {
		return time.Time{}, err
	}
	now := time.Now()
	for _, t := range txns {
		if t.GetState() != fluidos.TransactionState_TRANSACTION_STATE_RESERVED {
			continue
		}
		exp := t.GetExpirationTime().AsTime()
		if exp.After(now) {
			if next.IsZero() || exp.Before(next) {
				next = exp
			}
			continue
		}
		if err := p.expire(ctx, t.GetId()); err != nil {
			return time.Time{}, err
		}
	}
	return next, nil
}

// expire expires one transaction if it is still reserved and due.
func (p *Provider) expire(ctx context.Context, id string) error {
	var done bool
	err := p.rounds(ctx, func(tx *store.Tx) error {
		done = false
		t, ok, err := p.open.TxGet(tx, id)
		if err != nil || !ok || t.GetState() != fluidos.TransactionState_TRANSACTION_STATE_RESERVED || t.GetExpirationTime().AsTime().After(time.Now()) {
			return err
		}
		f, _, err := p.flavors.TxGet(tx, t.GetFlavorId())
		if err != nil {
			return err
		}
		done = true
		return p.txExpire(tx, t, f)
	})
	if err == nil && done {
		p.cfg.Metrics.expired()
		p.log.InfoContext(ctx, "reservation expired", "transaction", id)
	}
	return err
}
