package ccrm

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/edgekit/edgekit/hosts/ccrm/reservations"
	"github.com/edgekit/edgekit/internal/store"
)

// newEtcdReservations keeps the reservations of the region of st in etcd.
func newEtcdReservations(st *store.Store, log *slog.Logger) (*reservations.Reservations, error) {
	return reservations.New(st.Client(), st.Prefix()+reservations.Prefix, reservations.Options{Logger: log})
}

// collectGarbage deletes, every interval (with jitter), the reservations
// whose owner no longer exists, until ctx ends. Every replica may run it:
// each delete is checked in its own transaction.
func (r *Replica) collectGarbage(ctx context.Context, every time.Duration) {
	res, ok := r.res.(*reservations.Reservations)
	if !ok || every <= 0 {
		return
	}
	owners := reservations.StoreOwners(r.st.Prefix())
	for {
		pause(ctx, every/2+rand.N(every))
		if ctx.Err() != nil {
			return
		}
		n, err := res.Collect(ctx, owners)
		if err != nil && ctx.Err() == nil {
			r.log.Warn("reservations garbage collection", slog.Any("error", err))
		}
		if n > 0 {
			r.metrics.collected.Add(float64(n))
		}
	}
}
