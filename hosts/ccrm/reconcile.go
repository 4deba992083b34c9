package ccrm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/hosts/controller"
)

// reconcileRetry bounds the wait before a reconciliation that failed is
// tried again.
const reconcileRetry = 30 * time.Second

// reconcileCloudlets reconciles each cloudlet the replica serves with its
// platform (executor.Engine.Reconcile): once when the replica starts
// serving it (the replica started, or the cloudlet became READY or came
// to be served), then every interval with jitter, until ctx ends;
// interval <= 0 turns it off.
//
// A reconciliation only removes what the platform has and the region no
// longer has, deleted while no replica watched (executor.OrphansOnly):
// every object the region has is the work of its claims. Each removal
// runs under a claim of its object taken for it (reconcileGuard), and is
// decided again from the region's store read once the claim is held: no
// replica works on the object while the claim lasts, so an object created
// again in the region meanwhile is never removed, and the removal carries
// the claim's fence to the platform like any operation.
func (r *Replica) reconcileCloudlets(ctx context.Context, interval time.Duration) {
	if interval <= 0 {
		return
	}
	select {
	case <-r.cloudlets.Synced():
	case <-ctx.Done():
		return
	}
	next := map[string]time.Time{} // by cloudlet key: when to reconcile it again
	tick := time.NewTicker(rescanEvery)
	defer tick.Stop()
	for ctx.Err() == nil {
		var due []*edgeproto.Cloudlet
		served := map[string]bool{}
		for _, cl := range r.cloudlets.List() {
			key := cl.GetKeyString()
			if !r.serves(cl) || cl.GetState() != edgeproto.TrackedState_TRACKED_STATE_READY {
				continue
			}
			served[key] = true
			if !time.Now().Before(next[key]) {
				due = append(due, cl)
			}
		}
		for key := range next {
			if !served[key] {
				delete(next, key) // reconciled again once it is served and READY
			}
		}
		for _, cl := range due {
			s := r.currentSession()
			if s == nil || !s.Alive() || r.isDraining() || ctx.Err() != nil {
				break // tried again at the next tick
			}
			wait := interval/2 + rand.N(interval)
			if err := r.reconcileCloudlet(ctx, s, cl.Clone()); err != nil && !errors.Is(err, executor.ErrUnsupported) {
				wait = min(wait, reconcileRetry)
			}
			next[cl.GetKeyString()] = time.Now().Add(wait)
		}
		select {
		case <-ctx.Done():
		case <-tick.C:
		}
	}
}

func (r *Replica) isDraining() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.draining
}

// reconcileCloudlet reconciles one cloudlet (see reconcileCloudlets) and
// logs and counts what it did.
func (r *Replica) reconcileCloudlet(ctx context.Context, s *Session, cl *edgeproto.Cloudlet) error {
	key := cl.GetKeyString()
	log := r.log.With(slog.String("cloudlet", key))
	start := time.Now()
	eng, err := r.engineFor(cl)
	var res *executor.ReconcileResult
	if err == nil {
		res, err = eng.Reconcile(ctx, cl, executor.OrphansOnly(), executor.WithReconcileGuard(r.reconcileGuard(s, cl)))
	}
	if errors.Is(err, executor.ErrUnsupported) {
		log.LogAttrs(ctx, slog.LevelDebug, "no reconciliation: the platform does not list what it has", slog.String("platform", cl.GetPlatformType()))
		return err
	}
	attrs := []slog.Attr{slog.Duration("took", time.Since(start))}
	if res != nil {
		counts := map[executor.ReconcileAction]int{}
		for _, it := range res.Items {
			result := "ok"
			if it.Err != nil {
				result = "error"
			}
			counts[it.Action]++
			r.metrics.reconciled.WithLabelValues(it.Kind, string(it.Action), result).Inc()
			if it.Action == executor.ReconcileDelete {
				log.LogAttrs(ctx, slog.LevelInfo, "reconcile: removing what the region no longer has", slog.String("kind", it.Kind),
					slog.String("key", it.Key), slog.String("result", result), slog.Any("error", it.Err))
			}
		}
		for _, a := range []executor.ReconcileAction{executor.ReconcileDelete, executor.ReconcileNone, executor.ReconcileBusy} {
			attrs = append(attrs, slog.Int(string(a), counts[a]))
		}
		if err == nil {
			err = res.Err()
		}
	}
	result, lvl := "ok", slog.LevelInfo
	if err != nil {
		result, lvl = "error", slog.LevelWarn
		attrs = append(attrs, slog.Any("error", err))
	}
	r.metrics.reconciles.WithLabelValues(result).Inc()
	log.LogAttrs(ctx, lvl, "cloudlet reconciled", attrs...)
	return err
}

// reconcileGuard claims the object of each action of a reconciliation of
// cl under session s, as an operation's claim (same key, so the same
// fence), for as long as the action runs: an object claimed by another
// replica is left to it (executor.ErrBusy). The action's reports are not
// sent (the region has no such object to apply them to).
func (r *Replica) reconcileGuard(s *Session, cl *edgeproto.Cloudlet) executor.ReconcileGuard {
	return func(ctx context.Context, kind, key string) (context.Context, func(), error) {
		if !s.Alive() {
			return nil, nil, fmt.Errorf("%w: the replica's lease ended", ErrNoClaim)
		}
		claim, err := r.guardClaim(ctx, s, kind, key)
		if err != nil {
			return nil, nil, err
		}
		claim.cloudlet, claim.orphan = cl, true
		return WithClaim(ctx, claim), func() { r.releaseClaim(claim) }, nil
	}
}

// guardClaim takes the claim of an object for a guard under session s,
// or answers executor.ErrBusy when another holds it.
func (r *Replica) guardClaim(ctx context.Context, s *Session, kind, key string) (*Claim, error) {
	path := controller.ClaimKey(r.st.Prefix(), kind, key)
	claim, _, err := tryClaim(ctx, r.cli, s, path, kind, key, r.cfg.ReplicaID)
	if err != nil {
		return nil, err
	}
	if claim == nil {
		r.metrics.claims.WithLabelValues("contended").Inc()
		return nil, fmt.Errorf("%w: %s %s is claimed", executor.ErrBusy, kind, key)
	}
	r.metrics.claims.WithLabelValues("taken").Inc()
	return claim, nil
}

// resourcesGuard claims the cloudlet for a resources refresh of the engine
// (executor.Config.ResourcesGuard), as a cloudlet operation's claim (same
// key, so the same fence: the controller applies the snapshot only while
// the claim holds), for as long as the refresh runs. A cloudlet claimed by
// an operation or another replica's refresh is left to it
// (executor.ErrBusy): a cloudlet operation gathers the snapshot itself.
func (r *Replica) resourcesGuard(ctx context.Context, kind, key string) (context.Context, func(), error) {
	s := r.currentSession()
	if s == nil || !s.Alive() {
		return nil, nil, fmt.Errorf("%w: the replica has no session", ErrNoClaim)
	}
	claim, err := r.guardClaim(ctx, s, kind, key)
	if err != nil {
		return nil, nil, err
	}
	// The refresh's one report, the snapshot, releases the claim with it.
	claim.releaseWithReport = true
	return WithClaim(ctx, claim), func() { r.releaseClaim(claim) }, nil
}
