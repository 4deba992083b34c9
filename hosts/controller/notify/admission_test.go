package notify

import (
	"context"
	"testing"
	"time"

	"github.com/edgekit/edgekit/internal/notify"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// waitFor waits until cond holds, failing the test after 10s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestAdmissionBoundsSyncsAndTurnsAwayWithGrowingHints(t *testing.T) {
	t.Parallel()
	a := newAdmission(1, 1)
	ctx := context.Background()
	release1, err := a.acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The second waits for the slot.
	got := make(chan error, 1)
	var release2 func()
	go func() {
		var err error
		release2, err = a.acquire(ctx)
		got <- err
	}()
	waitFor(t, "a sync waiting", func() bool { a.mu.Lock(); defer a.mu.Unlock(); return a.waiting == 1 })
	// The third and fourth are turned away, the fourth told to come later.
	var hints []time.Duration
	for range 2 {
		_, err := a.acquire(ctx)
		if status.Code(err) != codes.Unavailable {
			t.Fatalf("acquire with the slot taken and one waiting: %v, want Unavailable", err)
		}
		hint, ok := notify.RetryAfter(err)
		if !ok || hint < minRetryHint || hint > maxRetryHint {
			t.Fatalf("turned away with hint %v (%v), want one in [%v, %v]", hint, ok, minRetryHint, maxRetryHint)
		}
		hints = append(hints, hint)
	}
	if hints[1] < hints[0] {
		t.Errorf("hints %v: a CRM turned away later is told to come back sooner", hints)
	}
	release1()
	release1() // a second release of the same slot releases nothing
	if err := <-got; err != nil {
		t.Fatalf("the waiting sync: %v", err)
	}
	// The slot is the second sync's: a new one waits, and ends with its ctx.
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { _, err := a.acquire(cctx); done <- err }()
	waitFor(t, "a sync waiting", func() bool { a.mu.Lock(); defer a.mu.Unlock(); return a.waiting == 1 })
	cancel()
	if err := <-done; err == nil {
		t.Fatal("a waiting sync whose stream ended got a slot")
	}
	release2()
	r, err := a.acquire(ctx)
	if err != nil {
		t.Fatalf("acquire after every slot was released: %v", err)
	}
	r()
}

// The time a slot is held counts from its last restartClock: a sync that
// waited long for the hub before it read anything does not make the
// average, and the hints given to the CRMs turned away, grow by that wait.
func TestAdmissionCountsTheHeldTimeFromRestartClock(t *testing.T) {
	t.Parallel()
	avgAfter := func(restart bool) time.Duration {
		a := newAdmission(1, 0)
		sl, err := a.acquireSlot(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		// As if the slot had been taken a minute ago, and its session had
		// waited for the hub all that time.
		sl.start.Store(time.Now().Add(-time.Minute).UnixNano())
		if restart {
			sl.restartClock()
		}
		sl.release()
		a.mu.Lock()
		defer a.mu.Unlock()
		return a.avg
	}
	if got := avgAfter(false); got < 10*time.Second {
		t.Fatalf("average after a slot held a minute = %v, want it to count the minute", got)
	}
	if got := avgAfter(true); got > 10*time.Second {
		t.Fatalf("average after a slot whose clock restarted = %v, want the minute before the restart left out", got)
	}
}
