package executor_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
)

var errGuard = errors.New("guard failed")

// Reconcile with OrphansOnly removes only what the host does not have, and
// with a guard runs each action under it, deciding again once the guard
// holds: what the host created meanwhile is kept.
func TestReconcileOrphansOnlyAndGuard(t *testing.T) {
	const (
		del  = executor.ReconcileDelete
		none = executor.ReconcileNone
		busy = executor.ReconcileBusy
	)
	st := func(s edgeproto.TrackedState) edgeproto.TrackedState { return s }
	c := func(name string, s edgeproto.TrackedState) *edgeproto.ClusterInst {
		ci := cluster(name, s)
		ci.FlavorName = "fake.small" // four fit on the fake cloudlet
		return ci
	}
	i := func(name, cl string, s edgeproto.TrackedState) *edgeproto.AppInst {
		return appInst(name, appKey1, cl, s)
	}
	orphans := func(*world) []executor.ReconcileOption {
		return []executor.ReconcileOption{executor.OrphansOnly()}
	}
	// guarded runs every action under a guard that does before (when not
	// nil) and returns its error, counting the guards taken and released.
	type counts struct{ taken, released atomic.Int32 }
	guarded := func(n *counts, before func(w *world, kind, key string) error) func(w *world) []executor.ReconcileOption {
		return func(w *world) []executor.ReconcileOption {
			return []executor.ReconcileOption{executor.OrphansOnly(), executor.WithReconcileGuard(
				func(ctx context.Context, kind, key string) (context.Context, func(), error) {
					if before != nil {
						if err := before(w, kind, key); err != nil {
							return nil, nil, err
						}
					}
					n.taken.Add(1)
					return ctx, func() { n.released.Add(1) }, nil
				})}
		}
	}
	var released counts
	tests := []reconcileCase{{
		name: "orphans only: what the host lacks is removed, every object the host has is left",
		host: []protoMsg{
			c("c1", st(edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED)), // wanted, missing: not created
			c("c2", ready),
			c("c4", st(edgeproto.TrackedState_TRACKED_STATE_DELETE_REQUESTED)), // the host's own delete: left to it
			c("c5", st(edgeproto.TrackedState_TRACKED_STATE_DELETE_DONE)),
			i("i2", "c2", st(edgeproto.TrackedState_TRACKED_STATE_UPDATE_REQUESTED)),
		},
		platform: []protoMsg{c("c2", ready), c("c3", ready), c("c4", ready), c("c5", ready),
			i("i2", "c2", ready), i("i3", "c3", ready)},
		opts: guarded(&released, nil),
		want: map[string]executor.ReconcileAction{cName("c3"): del, cName("c5"): del, iName("i3"): del},
		wantStates: map[string][]string{cName("c1"): nil, cName("c2"): nil, cName("c3"): {sDeleting, sDeleteDone},
			cName("c4"): nil, iName("i2"): nil, iName("i3"): {sDeleting, sDeleteDone}},
		wantPlatform: map[string]edgeproto.TrackedState{cName("c2"): ready, cName("c4"): ready, iName("i2"): ready},
		check: func(t *testing.T, _ *world) {
			if tk, rl := released.taken.Load(), released.released.Load(); tk != 3 || rl != 3 {
				t.Errorf("guards taken %d and released %d, want 3 and 3 (one per removal)", tk, rl)
			}
		},
	}, {
		name:     "orphans only: an orphan the host creates again before its removal starts is kept",
		platform: []protoMsg{c("c3", ready)},
		opts: guarded(&counts{}, func(w *world, kind, key string) error {
			// The host's create of the same key commits while the
			// action waits for its guard.
			w.clusters.Put(c("c3", st(edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED)))
			return nil
		}),
		want:         map[string]executor.ReconcileAction{cName("c3"): none},
		wantStates:   map[string][]string{cName("c3"): nil},
		wantPlatform: map[string]edgeproto.TrackedState{cName("c3"): ready},
	}, {
		name:     "a guard held elsewhere: the object is left alone",
		platform: []protoMsg{c("c3", ready)},
		opts: guarded(&counts{}, func(*world, string, string) error {
			return fmt.Errorf("claimed by another replica: %w", executor.ErrBusy)
		}),
		once:         true,
		want:         map[string]executor.ReconcileAction{cName("c3"): busy},
		wantStates:   map[string][]string{cName("c3"): nil},
		wantPlatform: map[string]edgeproto.TrackedState{cName("c3"): ready},
	}, {
		name:     "a guard that fails: the item fails and nothing is done",
		platform: []protoMsg{c("c3", ready)},
		opts: guarded(&counts{}, func(*world, string, string) error {
			return errGuard
		}),
		want:         map[string]executor.ReconcileAction{cName("c3"): del},
		wantItemErr:  map[string]error{cName("c3"): errGuard},
		wantStates:   map[string][]string{cName("c3"): nil},
		wantPlatform: map[string]edgeproto.TrackedState{cName("c3"): ready},
	}, {
		name:         "without a guard: orphans only removes the orphans",
		host:         []protoMsg{c("c1", ready)},
		platform:     []protoMsg{c("c2", ready)},
		opts:         orphans,
		want:         map[string]executor.ReconcileAction{cName("c2"): del},
		wantStates:   map[string][]string{cName("c1"): nil, cName("c2"): {sDeleting, sDeleteDone}},
		wantPlatform: map[string]edgeproto.TrackedState{},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			runReconcile(t, tc)
		})
	}
}
