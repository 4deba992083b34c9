package allocator

import (
	"context"
	"log/slog"
)

// quietReconcile is the engine's log handler: the engine logs each
// Reconcile at INFO, which the allocator runs at every health check, so
// those two lines go to DEBUG; everything else passes as it is.
type quietReconcile struct{ slog.Handler }

// Handle implements slog.Handler.
func (h quietReconcile) Handle(ctx context.Context, r slog.Record) error {
	if r.Level == slog.LevelInfo && (r.Message == "reconciling" || r.Message == "reconciled") {
		if !h.Handler.Enabled(ctx, slog.LevelDebug) {
			return nil
		}
		r.Level = slog.LevelDebug
	}
	return h.Handler.Handle(ctx, r)
}

// WithAttrs implements slog.Handler.
func (h quietReconcile) WithAttrs(as []slog.Attr) slog.Handler {
	return quietReconcile{h.Handler.WithAttrs(as)}
}

// WithGroup implements slog.Handler.
func (h quietReconcile) WithGroup(name string) slog.Handler {
	return quietReconcile{h.Handler.WithGroup(name)}
}
