package notify

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/edgekit/edgekit/internal/notify"
)

// admission bounds the initial syncs under way: at most cap at once (a
// sync holds its slot from its reads until its SyncEnd is sent, so the
// objects of at most cap syncs are in memory at once), at most maxWait
// streams waiting for a slot; past that a stream is turned away with a
// hint of when to come back, grown with the backlog, so that every CRM
// reconnecting at once (a controller restart) is served at a bounded rate
// instead of all together.
type admission struct {
	slots   chan struct{}
	maxWait int

	mu      sync.Mutex
	waiting int
	avg     time.Duration // moving average of the time a slot is held
	// back holds when the CRMs turned away were told to come back, for
	// those whose time has not come: each CRM turned away is told a later
	// time than those before it, so that they come back spread over the
	// backlog (a CRM that comes back early is not counted twice for long).
	back []time.Time
}

// Bounds of the hint given to a CRM turned away.
const (
	minRetryHint = 200 * time.Millisecond
	maxRetryHint = 30 * time.Second
)

func newAdmission(concurrent, maxWait int) *admission {
	return &admission{slots: make(chan struct{}, max(concurrent, 1)), maxWait: max(maxWait, 0), avg: 100 * time.Millisecond}
}

// acquire waits for a slot and returns its release, which takes the time
// the slot was held; a busy status (notify.BusyError) when too many wait
// already, or ctx's cause when ctx ends first.
func (a *admission) acquire(ctx context.Context) (func(), error) {
	sl, err := a.acquireSlot(ctx)
	if err != nil {
		return nil, err
	}
	return sl.release, nil
}

// slot is a slot taken (see acquireSlot).
type slot struct {
	a     *admission
	start atomic.Int64 // unix nanoseconds: the time held is counted from then
	once  sync.Once
}

// restartClock counts the time the slot is held from now: what came
// before (waiting for the controller's watch of the region to load after
// a restart, a wait shared by every sync of that moment) is not the pace
// of a sync, and counted in it would make the hints given meanwhile far
// longer than the backlog takes once the watch runs.
func (sl *slot) restartClock() { sl.start.Store(time.Now().UnixNano()) }

// release gives the slot back and takes the time it was held; calling it
// more than once releases once.
func (sl *slot) release() {
	sl.once.Do(func() {
		held := time.Duration(time.Now().UnixNano() - sl.start.Load())
		a := sl.a
		a.mu.Lock()
		a.avg = (4*a.avg + held) / 5
		a.mu.Unlock()
		<-a.slots
	})
}

// acquireSlot is acquire, returning the slot.
func (a *admission) acquireSlot(ctx context.Context) (*slot, error) {
	select {
	case a.slots <- struct{}{}:
		return a.newSlot(), nil
	default:
	}
	a.mu.Lock()
	if a.waiting >= a.maxWait {
		hint := a.hintLocked()
		n := a.waiting
		a.mu.Unlock()
		return nil, notify.BusyError(fmt.Sprintf("the controller is synchronising %d CRMs and %d wait", cap(a.slots), n), hint)
	}
	a.waiting++
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		a.waiting--
		a.mu.Unlock()
	}()
	select {
	case a.slots <- struct{}{}:
		return a.newSlot(), nil
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// newSlot returns a slot just taken.
func (a *admission) newSlot() *slot {
	sl := &slot{a: a}
	sl.restartClock()
	return sl
}

// hintLocked is how long a CRM turned away now should wait: the time the
// backlog (those waiting, those turned away before it, and one more
// round) takes at the recent pace.
func (a *admission) hintLocked() time.Duration {
	now := time.Now()
	a.back = slices.DeleteFunc(a.back, func(t time.Time) bool { return !t.After(now) })
	rounds := time.Duration((a.waiting+len(a.back))/cap(a.slots) + 1)
	hint := min(max(a.avg*rounds, minRetryHint), maxRetryHint)
	a.back = append(a.back, now.Add(hint))
	return hint
}
