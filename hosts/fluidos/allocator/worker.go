package allocator

import (
	"context"
	"time"

	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/hosts/fluidos/provider"
)

// worker is the goroutine converging one allocation.
type worker struct {
	again   bool          // woken while running: run once more
	busy    bool          // converging now (not waiting to retry)
	backoff time.Duration // after a transient failure
}

// Maximum and first back-off of an allocation whose step failed for a
// reason that may pass (the store unreachable, an engine operation that
// failed on a teardown).
const (
	firstRetry = 200 * time.Millisecond
	maxRetry   = 30 * time.Second
)

// Wake says that allocation id needs work: a worker converges it, now or
// once the one running is done. Before Start it is remembered. It
// implements provider.Allocator.
func (a *Allocator) Wake(id string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if w := a.workers[id]; w != nil {
		w.again = true
		return
	}
	if a.ctx == nil {
		a.pending[id] = true
		return
	}
	w := &worker{}
	a.workers[id] = w
	ctx := a.ctx
	a.wg.Go(func() { a.work(ctx, id, w) })
}

// work converges id until it needs nothing more; a step that failed for a
// reason that may pass is retried after a doubling back-off.
func (a *Allocator) work(ctx context.Context, id string, w *worker) {
	for {
		a.mu.Lock()
		w.busy = true
		a.mu.Unlock()
		err := a.converge(ctx, id)
		a.mu.Lock()
		w.busy = false
		a.mu.Unlock()
		if ctx.Err() != nil {
			a.mu.Lock()
			delete(a.workers, id)
			a.mu.Unlock()
			return
		}
		a.mu.Lock()
		switch {
		case err != nil:
			w.backoff = min(max(2*w.backoff, firstRetry), maxRetry)
			a.log.WarnContext(ctx, "allocation step failed; retrying", "allocation", id, "err", err, "in", w.backoff)
			a.mu.Unlock()
			if sleep(ctx, w.backoff) != nil {
				a.mu.Lock()
				delete(a.workers, id)
				a.mu.Unlock()
				return
			}
			continue
		case w.again:
			w.again, w.backoff = false, 0
			a.mu.Unlock()
			continue
		}
		delete(a.workers, id)
		a.mu.Unlock()
		return
	}
}

// ended reports whether an allocation needs nothing more.
func ended(al *fluidos.Allocation) bool { return provider.Ended(al) }
