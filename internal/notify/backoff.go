package notify

import (
	"context"
	"math/rand/v2"
	"time"
)

// Backoff is the pause between reconnection attempts: it starts at Min,
// doubles after every failed attempt up to Max, and each pause is drawn
// uniformly from [d/2, d] (jitter), so that many CRMs cut off together do
// not reconnect in step. The zero Backoff uses 100ms and 10s.
type Backoff struct {
	Min, Max time.Duration
	cur      time.Duration
}

// Next returns the pause to take now and grows the next one.
func (b *Backoff) Next() time.Duration {
	lo, hi := b.Min, b.Max
	if lo <= 0 {
		lo = 100 * time.Millisecond
	}
	if hi < lo {
		hi = max(10*time.Second, lo)
	}
	if b.cur < lo {
		b.cur = lo
	}
	d := b.cur
	b.cur = min(2*b.cur, hi)
	return d/2 + rand.N(d/2+1)
}

// Reset starts again from Min (after a connection that worked).
func (b *Backoff) Reset() { b.cur = 0 }

// Wait pauses for Next; it returns false when ctx ended first.
func (b *Backoff) Wait(ctx context.Context) bool {
	t := time.NewTimer(b.Next())
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// WaitHinted pauses for what the controller asked (hint), drawn uniformly
// from [hint, 2*hint] so that the CRMs it turned away together do not
// come back in step, or for Next when that is longer; it returns false
// when ctx ended first.
func (b *Backoff) WaitHinted(ctx context.Context, hint time.Duration) bool {
	d := max(b.Next(), hint+rand.N(hint+1))
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
