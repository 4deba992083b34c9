package notify

import (
	"context"
	"testing"
	"time"
)

func TestBackoffGrowsWithJitterAndResets(t *testing.T) {
	t.Parallel()
	b := Backoff{Min: 100 * time.Millisecond, Max: 800 * time.Millisecond}
	for i, cur := range []time.Duration{100, 200, 400, 800, 800} {
		cur *= time.Millisecond
		d := b.Next()
		if d < cur/2 || d > cur {
			t.Fatalf("pause %d = %v, want within [%v, %v]", i, d, cur/2, cur)
		}
	}
	b.Reset()
	if d := b.Next(); d > 100*time.Millisecond {
		t.Fatalf("pause after Reset = %v, want at most Min", d)
	}
	// Jitter: many draws are not all equal.
	seen := map[time.Duration]bool{}
	for range 50 {
		b.Reset()
		seen[b.Next()] = true
	}
	if len(seen) < 2 {
		t.Fatal("50 pauses drawn from [Min/2, Min] are all equal: no jitter")
	}
}

func TestBackoffWaitEndsWithTheContext(t *testing.T) {
	t.Parallel()
	b := Backoff{Min: time.Hour, Max: time.Hour}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if b.Wait(ctx) {
		t.Fatal("Wait on an ended context returned true")
	}
}

// A CRM turned away comes back no sooner than the hint and at most a
// quarter of it later, at different times for the same hint.
func TestHintedPauseStaysNearTheHint(t *testing.T) {
	t.Parallel()
	hint := 400 * time.Millisecond
	seen := map[time.Duration]bool{}
	for range 200 {
		d := HintedPause(hint)
		if d < hint || d > hint+hint/4 {
			t.Fatalf("pause for hint %v = %v, want within [%v, %v]", hint, d, hint, hint+hint/4)
		}
		seen[d] = true
	}
	if len(seen) < 2 {
		t.Fatal("200 pauses for one hint are all equal: no jitter")
	}
	if d := HintedPause(0); d != 0 {
		t.Fatalf("pause for no hint = %v, want 0", d)
	}
}
