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
// from [hint, 5/4 hint] (see HintedPause), without growing the back-off:
// the controller answered, and its hint already grows with its backlog,
// so a CRM turned away several times comes back when told, not after a
// back-off doubled by each refusal. Without a hint (0 or less) it is Wait.
// It returns false when ctx ended first.
func (b *Backoff) WaitHinted(ctx context.Context, hint time.Duration) bool {
	if hint <= 0 {
		return b.Wait(ctx)
	}
	t := time.NewTimer(HintedPause(hint))
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// HintedPause is the pause a CRM takes when the controller turned it away
// with hint: drawn uniformly from [hint, hint+hint/4]. The controller
// already spreads the CRMs it turns away (each is told a later time than
// the one before, see the notify server's admission); the jitter only
// keeps those told the same time from coming back in step. A wider draw
// (up to twice the hint, as before) left slots idle while CRMs waited
// past their turn.
func HintedPause(hint time.Duration) time.Duration {
	if hint <= 0 {
		return 0
	}
	return hint + rand.N(hint/4+1)
}
