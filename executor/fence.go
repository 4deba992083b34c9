package executor

import (
	"context"
	"errors"
)

// Fence is the fencing token of the claim an operation runs under (a host
// that coordinates several engine instances, such as the CCRM, sets it):
// Key names the claim and Token only grows from one claim of an object to
// the next. A platform that writes shared state records the token with
// each write and refuses to write over state recorded under a greater
// token, so that a stale instance's late write is never applied.
type Fence struct {
	Key   string
	Token int64
}

type fenceKey struct{}

// WithFence returns ctx carrying f.
func WithFence(ctx context.Context, f Fence) context.Context {
	return context.WithValue(ctx, fenceKey{}, f)
}

// FenceFrom returns the fence ctx carries; ok is false when the operation
// runs under no fence (a host with a single engine per cloudlet).
func FenceFrom(ctx context.Context) (f Fence, ok bool) {
	f, ok = ctx.Value(fenceKey{}).(Fence)
	return f, ok
}

// ErrFenced is matched by the error of a write a platform refused because
// the object records a newer fence than the caller's: a newer claim holder
// wrote it, so the caller's claim is stale and it must not touch the
// object again.
var ErrFenced = errors.New("fenced: object written under a newer claim")
