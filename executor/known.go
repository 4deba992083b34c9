package executor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/edgekit/edgekit/fieldmap"
)

// Report delivery defaults (see RetryPolicy).
const (
	DefaultReportAttempts   = 5
	DefaultReportBackoff    = 50 * time.Millisecond
	DefaultReportMaxBackoff = time.Second
)

// RetryPolicy bounds how a report that a Sender failed to deliver is tried
// again: Attempts tries at most, waiting Backoff before the second one and
// twice as long before each further one, up to MaxBackoff, each wait
// jittered (between half and all of it) and ended early by the report's
// context. The zero value uses the defaults.
type RetryPolicy struct {
	// Attempts is how many times one report is tried, the first included;
	// 0 means DefaultReportAttempts, 1 tries once.
	Attempts int
	// Backoff is the wait before the second try; 0 means
	// DefaultReportBackoff.
	Backoff time.Duration
	// MaxBackoff caps the wait; 0 means DefaultReportMaxBackoff.
	MaxBackoff time.Duration
}

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.Attempts <= 0 {
		p.Attempts = DefaultReportAttempts
	}
	if p.Backoff <= 0 {
		p.Backoff = DefaultReportBackoff
	}
	if p.MaxBackoff <= 0 {
		p.MaxBackoff = DefaultReportMaxBackoff
	}
	return p
}

// known is the last known Info of every object of one kind the engine
// reported on, and the way every report of that kind goes out. Each report
// is applied to the object's copy before it is sent; the object's sends
// (its operations' reports and Resend) are serialised, so a receiver never
// sees an older state after a newer one. A report that could not be
// delivered leaves its flags undelivered: they travel again with the
// object's next report, so nothing is dropped. An object whose last state
// says it is gone (DELETE_DONE, NOT_PRESENT) is forgotten once that state
// was delivered.
type known[T infoObject[T]] struct {
	kind   string
	sender Sender[T]
	retry  RetryPolicy
	log    *slog.Logger
	gone   func(T) bool

	mu   sync.Mutex
	objs map[string]*knownObj[T]
}

type knownObj[T any] struct {
	mu          sync.Mutex // held while the object's report is sent
	info        T
	fields      *fieldmap.FieldMap // every flag reported
	undelivered *fieldmap.FieldMap // flags of failed reports; nil when none
	removed     bool
}

func newKnown[T infoObject[T]](kind string, sender Sender[T], retry RetryPolicy, log *slog.Logger, gone func(T) bool) *known[T] {
	return &known[T]{kind: kind, sender: sender, retry: retry.withDefaults(), log: log, gone: gone, objs: map[string]*knownObj[T]{}}
}

// lock returns the locked record of key, creating it when absent.
func (k *known[T]) lock(key string, newT func() T) *knownObj[T] {
	for {
		k.mu.Lock()
		o := k.objs[key]
		if o == nil {
			info := newT()
			o = &knownObj[T]{info: info, fields: info.FieldSchema().NewFieldMap()}
			k.objs[key] = o
		}
		k.mu.Unlock()
		o.mu.Lock()
		if !o.removed {
			return o
		}
		o.mu.Unlock() // forgotten meanwhile: take the new record
	}
}

// send applies a report (the fields fm of info) to the object's last known
// Info and delivers it, with the object's undelivered flags, retrying as
// the policy says. It returns the Sender's last error.
func (k *known[T]) send(ctx context.Context, info T, fm *fieldmap.FieldMap) error {
	if k.sender == nil {
		return nil
	}
	key := KeyString(info)
	o := k.lock(key, func() T { return info.ProtoReflect().New().Interface().(T) })
	defer o.mu.Unlock()
	if laterRequest(info, o.info) {
		// The receiver accepted a later request: what the record holds
		// answers one it superseded. Its flags are not sent again with
		// this request's id (the undelivered ones would be misreported;
		// the receiver refuses them under their own id anyway).
		if o.undelivered != nil {
			k.log.LogAttrs(ctx, slog.LevelDebug, "dropping undelivered flags of an earlier request", slog.String("kind", k.kind),
				slog.String("key", key), slog.String("fields", o.undelivered.String()))
		}
		o.undelivered = nil
		o.fields = o.info.FieldSchema().NewFieldMap()
	}
	o.info.CopyInFields(info, fm)
	o.fields.Set(fm.Fields()...)
	out := fm
	if o.undelivered != nil {
		out = fm.Clone()
		out.Set(o.undelivered.Fields()...)
	}
	if err := k.deliver(ctx, o, out, k.retry.Attempts); err != nil {
		if errors.Is(err, ErrReportRejected) {
			k.forget(key, o)
		} else {
			o.undelivered = out
		}
		return err
	}
	o.undelivered = nil
	k.forgetIfGone(key, o)
	return nil
}

// laterRequest reports whether info answers a later request than last:
// both carry a request_id and info's is the greater.
func laterRequest[T any](info, last T) bool {
	a, ok := any(info).(interface{ GetRequestId() int64 })
	b, ok2 := any(last).(interface{ GetRequestId() int64 })
	return ok && ok2 && a.GetRequestId() != 0 && a.GetRequestId() > b.GetRequestId()
}

// resendAll sends the last known Info of every object once, carrying every
// flag reported since its latest request, and returns how many objects it tried and the errors.
func (k *known[T]) resendAll(ctx context.Context) (int, []error) {
	if k.sender == nil {
		return 0, nil
	}
	k.mu.Lock()
	keys := make([]string, 0, len(k.objs))
	for key := range k.objs {
		keys = append(keys, key)
	}
	k.mu.Unlock()
	slices.Sort(keys)
	var errs []error
	tried := 0
	for _, key := range keys {
		if ctx.Err() != nil {
			return tried, errs
		}
		k.mu.Lock()
		o := k.objs[key]
		k.mu.Unlock()
		if o == nil {
			continue
		}
		o.mu.Lock()
		if o.removed {
			o.mu.Unlock()
			continue
		}
		tried++
		err := k.deliver(ctx, o, o.fields, 1)
		switch {
		case errors.Is(err, ErrReportRejected):
			k.forget(key, o)
		case err != nil:
			o.undelivered = o.fields.Clone()
			errs = append(errs, fmt.Errorf("%s %s: %w", k.kind, key, err))
		default:
			o.undelivered = nil
			k.forgetIfGone(key, o)
		}
		o.mu.Unlock()
	}
	return tried, errs
}

// deliver sends the fields fm of the object's last known Info, trying up
// to attempts times. Every try gets its own copy, since a Sender may keep
// what it was given. o is locked.
func (k *known[T]) deliver(ctx context.Context, o *knownObj[T], fm *fieldmap.FieldMap, attempts int) error {
	wait := k.retry.Backoff
	for attempt := 1; ; attempt++ {
		out := o.info.ProtoReflect().New().Interface().(T)
		out.CopyInFields(o.info, fm)
		err := k.sender.Send(ctx, out, fm)
		if err == nil {
			return nil
		}
		level := slog.LevelDebug
		last := attempt >= attempts || ctx.Err() != nil || errors.Is(err, ErrReportRejected)
		if last {
			level = slog.LevelWarn
		}
		k.log.LogAttrs(ctx, level, "report failed", slog.String("kind", k.kind), slog.String("key", KeyString(out)),
			slog.String("fields", fm.String()), slog.Int("attempt", attempt), slog.Any("error", err))
		if last {
			return err
		}
		t := time.NewTimer(wait/2 + rand.N(wait/2+1))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return errors.Join(err, ctx.Err())
		}
		wait = min(2*wait, k.retry.MaxBackoff)
	}
}

// forgetIfGone drops the object when its last delivered state says it is
// gone. o is locked.
func (k *known[T]) forgetIfGone(key string, o *knownObj[T]) {
	if k.gone != nil && k.gone(o.info) {
		k.forget(key, o)
	}
}

// forget drops the object. o is locked.
func (k *known[T]) forget(key string, o *knownObj[T]) {
	o.removed = true
	k.mu.Lock()
	if k.objs[key] == o {
		delete(k.objs, key)
	}
	k.mu.Unlock()
}

// Resend sends again the last known Info of every object the engine
// reported on and did not forget, one report per object carrying every
// flag the engine set in it since the object's latest request (its
// request_id; every flag ever set for objects without one), in the order
// Cloudlets, ClusterInsts, AppInsts, TrustPolicyExceptions and by key. A
// host calls it after its link to the receiver came back (a reconnect),
// so that reports lost with the link, final ones included, arrive; a
// receiver applies them as any report (they are idempotent).
//
// Resend runs beside operations: each object's reports are serialised, so
// a receiver never gets an older state after a newer one. Each report is
// tried once (the host calls Resend again after its next reconnect); the
// ones that fail stay known and travel again with the object's next
// report. A report the Sender rejects (ErrReportRejected) is not an error:
// the engine forgets that object. The error wraps ErrReportFailed, says
// how many of how many objects failed and joins their errors; when ctx
// ends first, Resend stops and its error wraps ctx.Err(). The engine forgets an object once the report saying
// it is gone (DELETE_DONE; NOT_PRESENT for a cloudlet; every instance
// DELETE_DONE for an exception) was delivered, so what Resend sends stays
// bounded by the objects that exist.
func (e *Engine) Resend(ctx context.Context) error {
	var (
		tried int
		errs  []error
	)
	for _, resend := range []func(context.Context) (int, []error){
		e.cloudletInfos.resendAll, e.clusterInfos.resendAll, e.appInstInfos.resendAll, e.tpes.resendAll,
	} {
		n, errs2 := resend(ctx)
		tried += n
		errs = append(errs, errs2...)
		if ctx.Err() != nil {
			break
		}
	}
	var err error
	if len(errs) > 0 {
		err = fmt.Errorf("%w: %d of %d objects: %w", ErrReportFailed, len(errs), tried, errors.Join(errs...))
	}
	if ctx.Err() != nil {
		err = errors.Join(err, fmt.Errorf("resend stopped: %w", ctx.Err()))
	}
	return err
}
