package executor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
)

// trackedInfo adapts an Info type whose state is a TrackedState
// (ClusterInstInfo, AppInstInfo) to the generic operation runner.
type trackedInfo[T infoObject[T]] struct {
	spec      *infoSpec
	setState  func(T, edgeproto.TrackedState)
	setErrors func(T, []string)
	getErrors func(T) []string
}

// opSpec describes one operation on a tracked object.
type opSpec struct {
	name     string // "create", "update", "delete"
	task     string // first task, "Creating ClusterInst"
	running  edgeproto.TrackedState
	success  edgeproto.TrackedState
	failure  edgeproto.TrackedState
	timeout  time.Duration
	undoTime time.Duration // for create: the delete timeout
}

// opFuncs are the steps of an operation. prepare looks up and checks what
// the operation depends on before anything is reported running (nil:
// nothing to check), under the operation's timeout;
// do is the platform work; undo removes what a failed do created (nil: no
// undo); begin and succeed set extra fields of the running and success
// reports and return their flags.
type opFuncs[T any] struct {
	prepare func(ctx context.Context) error
	do      func(ctx context.Context) error
	undo    func(ctx context.Context) error
	begin   func(info T) []string
	succeed func(info T) []string
	fail    func(info T) []string
}

// runTracked runs one operation of a tracked object and reports it:
// running state and first task, platform progress, then the success state
// or the failure state with errors (after undo, for a create). The
// returned error is an *OpError, or nil.
func runTracked[T infoObject[T]](ctx context.Context, e *Engine, r *reporter[T], ti *trackedInfo[T], key string, op opSpec, f opFuncs[T]) error {
	log := e.log.With(slog.String("kind", ti.spec.kind), slog.String("key", key), slog.String("op", op.name))
	start := time.Now()
	fail := func(cause error, undoErr error) error {
		msgs := []string{cause.Error()}
		if undoErr != nil {
			msgs = append(msgs, undoFailed+undoErr.Error())
			cause = errors.Join(cause, fmt.Errorf("undo: %w", undoErr))
		}
		opErr := &OpError{Kind: ti.spec.kind, Key: key, Op: op.name, Err: cause}
		rctx, cancel := reportContext(ctx)
		defer cancel()
		sendErr := r.final(rctx, func(info T) []string {
			ti.setState(info, op.failure)
			ti.setErrors(info, msgs)
			return withFlags(f.fail, info, ti.spec.state, ti.spec.errors)
		})
		log.LogAttrs(rctx, slog.LevelWarn, "operation failed", slog.String("state", op.failure.String()),
			slog.Duration("took", time.Since(start)), slog.Any("error", cause))
		if sendErr != nil {
			return errors.Join(opErr, reportFailed(sendErr))
		}
		return opErr
	}

	if f.prepare != nil {
		pctx, cancel := context.WithTimeout(ctx, op.timeout)
		err := f.prepare(pctx)
		cancel()
		if err != nil {
			return fail(classify(ctx, pctx, op.timeout, err), nil)
		}
	}
	r.setContext(ctx)
	log.LogAttrs(ctx, slog.LevelDebug, "operation started")
	_ = r.begin(ctx, op.task, func(info T) []string {
		ti.setState(info, op.running)
		ti.setErrors(info, nil)
		return withFlags(f.begin, info, ti.spec.state, ti.spec.errors)
	})

	opCtx, cancel := context.WithTimeout(ctx, op.timeout)
	r.setContext(opCtx)
	err := f.do(opCtx)
	cancel()
	if err == nil {
		rctx, cancel := reportContext(ctx)
		defer cancel()
		sendErr := r.final(rctx, func(info T) []string {
			ti.setState(info, op.success)
			ti.setErrors(info, nil)
			return withFlags(f.succeed, info, ti.spec.state, ti.spec.errors)
		})
		log.LogAttrs(rctx, slog.LevelInfo, "operation done", slog.String("state", op.success.String()),
			slog.Duration("took", time.Since(start)))
		if sendErr != nil {
			return &OpError{Kind: ti.spec.kind, Key: key, Op: op.name, Err: reportFailed(sendErr)}
		}
		return nil
	}
	err = classify(ctx, opCtx, op.timeout, err)
	var undoErr error
	if f.undo != nil {
		uctx, ucancel := context.WithTimeout(context.WithoutCancel(ctx), op.undoTime)
		r.setContext(uctx)
		_ = r.task(uctx, "Undoing "+op.name)
		log.LogAttrs(uctx, slog.LevelInfo, "undoing failed operation", slog.Any("error", err))
		undoErr = f.undo(uctx)
		ucancel()
	}
	return fail(err, undoErr)
}

// undoFailed prefixes the errors a failed undo adds to an object's errors.
const undoFailed = "undo failed: "

// undoSpec is the operation that removes what a failed create left on the
// platform (Reconcile runs it for a CREATE_ERROR object the platform still
// has): it reports CREATE_ERROR throughout, since that stays the object's
// state whatever the undo does.
func undoSpec(timeout time.Duration) opSpec {
	s := edgeproto.TrackedState_TRACKED_STATE_CREATE_ERROR
	return opSpec{name: "undo", task: "Undoing create", running: s, success: s, failure: s, timeout: timeout}
}

// undoFuncs are the steps of undoSpec: the object keeps the errors of its
// failed create (hostErrs, less what an earlier undo added), and a failing
// undo adds its own.
func undoFuncs[T infoObject[T]](ti *trackedInfo[T], hostErrs []string, prepare, del func(ctx context.Context) error) opFuncs[T] {
	var kept []string
	for _, msg := range hostErrs {
		if !strings.HasPrefix(msg, undoFailed) {
			kept = append(kept, msg)
		}
	}
	keep := func(info T) []string {
		ti.setErrors(info, slices.Clone(kept))
		return nil
	}
	return opFuncs[T]{
		prepare: prepare,
		do:      del,
		begin:   keep,
		succeed: keep,
		fail: func(info T) []string {
			errs := slices.Clone(kept)
			for _, msg := range ti.getErrors(info) {
				errs = append(errs, undoFailed+msg)
			}
			ti.setErrors(info, errs)
			return nil
		},
	}
}

// withFlags runs extra on info (under the reporter's lock) and appends the
// flags it set to base.
func withFlags[T any](extra func(T) []string, info T, base ...string) []string {
	if extra == nil {
		return base
	}
	return append(base, extra(info)...)
}

// classify turns the error of a platform call into the engine's terms: a
// *TimeoutError when the operation's own deadline passed, ErrCanceled when
// the engine's context ended.
func classify(parent, opCtx context.Context, timeout time.Duration, err error) error {
	switch {
	case parent.Err() != nil:
		return fmt.Errorf("%w: %w", ErrCanceled, err)
	case errors.Is(opCtx.Err(), context.DeadlineExceeded):
		return &TimeoutError{Timeout: timeout, Err: err}
	}
	return err
}

// reportContext returns ctx for a final report, or a short context detached
// from ctx when ctx already ended, so that an operation stopped by the
// engine's shutdown still reports its error state.
func reportContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if ctx.Err() == nil {
		return ctx, func() {}
	}
	return context.WithTimeout(context.WithoutCancel(ctx), DefaultReportTimeout)
}
