package notify

import (
	"errors"
	"slices"
	"testing"
)

func drainQueue(q *Queue[string]) []string {
	var out []string
	for {
		v, ok := q.TryPop()
		if !ok {
			return out
		}
		out = append(out, v)
	}
}

func TestQueueCoalescesAndKeepsRevisionOrder(t *testing.T) {
	t.Parallel()
	q := NewQueue[string](10)
	for _, p := range []struct{ key, v string }{{"a", "a1"}, {"b", "b1"}, {"c", "c1"}, {"a", "a2"}, {"b", "b2"}} {
		if err := q.Put(p.key, p.v, false); err != nil {
			t.Fatal(err)
		}
	}
	if q.Len() != 3 {
		t.Fatalf("Len = %d, want 3 (one item per key)", q.Len())
	}
	// Each key's latest value, in the order of the latest changes.
	if got, want := drainQueue(q), []string{"c1", "a2", "b2"}; !slices.Equal(got, want) {
		t.Fatalf("popped %q, want %q", got, want)
	}
}

func TestQueuePinnedItemsStayBeforeTheMarker(t *testing.T) {
	t.Parallel()
	q := NewQueue[string](10)
	_ = q.Put("a", "a1", true)
	_ = q.Put("b", "b1", true)
	_ = q.Put("", "end", false)
	_ = q.Put("a", "a2", false) // a change during the sync: stays in place
	_ = q.Put("c", "c1", false)
	if got, want := drainQueue(q), []string{"a2", "b1", "end", "c1"}; !slices.Equal(got, want) {
		t.Fatalf("popped %q, want %q", got, want)
	}
	// Once popped, a key coalesces afresh.
	_ = q.Put("a", "a3", false)
	_ = q.Put("", "m", false)
	_ = q.Put("a", "a4", false)
	if got, want := drainQueue(q), []string{"m", "a4"}; !slices.Equal(got, want) {
		t.Fatalf("popped %q, want %q", got, want)
	}
}

func TestQueueIsBounded(t *testing.T) {
	t.Parallel()
	q := NewQueue[string](2)
	_ = q.Put("a", "a1", false)
	_ = q.Put("", "m", false)
	if err := q.Put("b", "b1", false); !errors.Is(err, ErrQueueFull) {
		t.Fatalf("Put past the limit: %v, want ErrQueueFull", err)
	}
	if err := q.Put("", "m2", false); !errors.Is(err, ErrQueueFull) {
		t.Fatalf("Put of a marker past the limit: %v, want ErrQueueFull", err)
	}
	// Replacing a queued key needs no room.
	if err := q.Put("a", "a2", false); err != nil {
		t.Fatalf("coalescing Put on a full queue: %v", err)
	}
	if got, want := drainQueue(q), []string{"m", "a2"}; !slices.Equal(got, want) {
		t.Fatalf("popped %q, want %q", got, want)
	}
}

func TestQueueReadySignalsAPut(t *testing.T) {
	t.Parallel()
	q := NewQueue[int](4)
	select {
	case <-q.Ready():
		t.Fatal("Ready before any Put")
	default:
	}
	_ = q.Put("k", 1, false)
	select {
	case <-q.Ready():
	default:
		t.Fatal("no Ready after a Put")
	}
}
