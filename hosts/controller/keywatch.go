package controller

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// keyWatch wakes a caller when any of a few keys changes after a store
// revision, and records the revisions of the changes, so that a caller can
// read the keys as of each of them in turn (see revisions). It carries no
// values.
type keyWatch struct {
	cancel context.CancelFunc
	wake   chan struct{}

	mu   sync.Mutex
	revs []int64 // revisions of changes not yet taken by revisions
	// lost is set when the watch was broken: changes may have been missed.
	lost bool
}

// watchKeys watches keys from revision rev+1 until stop is called or ctx
// ends. A watch broken by the store (a compaction, a member lost) is
// re-established from the last revision seen, after a wake-up so the
// caller re-reads.
func (c *Controller) watchKeys(ctx context.Context, rev int64, keys ...string) *keyWatch {
	ctx, cancel := context.WithCancel(ctx)
	w := &keyWatch{cancel: cancel, wake: make(chan struct{}, 1)}
	cli := c.store.Client()
	for _, key := range keys {
		go func() {
			backoff := newBackoff()
			next := rev + 1
			for ctx.Err() == nil {
				wch := cli.Watch(clientv3.WithRequireLeader(ctx), key, clientv3.WithRev(next))
				for resp := range wch {
					if resp.CompactRevision > 0 {
						next = resp.CompactRevision
					}
					if err := resp.Err(); err != nil {
						break
					}
					for _, ev := range resp.Events {
						next = ev.Kv.ModRevision + 1
						w.record(ev.Kv.ModRevision)
					}
					if len(resp.Events) > 0 {
						backoff.reset()
						w.signal()
					}
				}
				// The watch ended: re-read, then watch again after a pause
				// that grows while the store stays unreachable.
				w.mu.Lock()
				w.lost = true
				w.mu.Unlock()
				w.signal()
				if !backoff.wait(ctx) {
					return
				}
			}
		}()
	}
	return w
}

// record notes a change at revision rev.
func (w *keyWatch) record(rev int64) {
	w.mu.Lock()
	w.revs = append(w.revs, rev)
	w.mu.Unlock()
}

// revisions returns, in order and once each, the revisions of the changes
// recorded since the last call; lost is true when the watch was broken
// meanwhile, so that changes may be missing from them.
func (w *keyWatch) revisions() (revs []int64, lost bool) {
	w.mu.Lock()
	revs, lost = w.revs, w.lost
	w.revs, w.lost = nil, false
	w.mu.Unlock()
	slices.Sort(revs)
	return slices.Compact(revs), lost
}

func (w *keyWatch) signal() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// next blocks until a watched key changed (or the watch was re-established)
// or ctx ends.
func (w *keyWatch) next(ctx context.Context) error {
	select {
	case <-w.wake:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (w *keyWatch) stop() { w.cancel() }

// backoff is a growing pause between retries, from 50ms up to 2s, with
// jitter so that many waiters do not retry in step.
type backoff struct{ d time.Duration }

func newBackoff() *backoff { return &backoff{d: 50 * time.Millisecond} }

func (b *backoff) reset() { b.d = 50 * time.Millisecond }

// wait pauses, then grows the pause; it returns false when ctx ended first.
func (b *backoff) wait(ctx context.Context) bool {
	d := b.d/2 + rand.N(b.d/2+1)
	b.d = min(2*b.d, 2*time.Second)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
