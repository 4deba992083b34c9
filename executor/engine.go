package executor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/edgekit/edgekit/edgeproto"
	"google.golang.org/protobuf/proto"
)

// DefaultWorkers is the pool size when neither Config.Workers nor
// Settings.max_concurrent_tasks sets one.
const DefaultWorkers = 64

// ErrStarted is returned by Start when the engine was started before.
var ErrStarted = errors.New("engine already started")

// Config is what an Engine needs from its host.
type Config struct {
	// Platform does the work. Required.
	Platform Platform
	// Objects looks up what operations depend on.
	Objects Objects
	// Reservations is handed to the platform; nil uses a new
	// MemReservations.
	Reservations Reservations
	// Senders of the reports; a nil Sender drops its reports.
	CloudletInfos         Sender[*edgeproto.CloudletInfo]
	ClusterInstInfos      Sender[*edgeproto.ClusterInstInfo]
	AppInstInfos          Sender[*edgeproto.AppInstInfo]
	TrustPolicyExceptions Sender[*edgeproto.TrustPolicyException]
	// Settings give the timeouts (see TimeoutsFrom) and the default pool
	// size; nil uses the defaults. SetSettings replaces them later.
	Settings *edgeproto.Settings
	// Workers is how many operations run at once. 0 uses
	// Settings.max_concurrent_tasks, and DefaultWorkers when that is 0 too.
	Workers int
	// ReportRetry bounds the retries of a report a Sender failed to
	// deliver; the zero value uses the defaults (see RetryPolicy).
	ReportRetry RetryPolicy
	// ResourcesGuard, when set, runs around every resources refresh (see
	// resources.go), with kind "Cloudlet" and the cloudlet's key string:
	// a host that must hold a right to call the platform and report on
	// the cloudlet (a CCRM's claim) takes it there and returns the
	// context carrying it. An error wrapping ErrBusy skips the refresh
	// (the cloudlet's holder is at work on it); nil runs refreshes under
	// the engine's context.
	ResourcesGuard ReconcileGuard
	// Logger receives structured logs; nil discards them. The engine logs
	// keys, never objects that may hold secrets.
	Logger *slog.Logger
}

// Engine runs the lifecycle operations of one host. Create it with New, run
// it with Start and feed it with Submit or the typed Submit methods.
type Engine struct {
	cfg      Config
	log      *slog.Logger
	res      Reservations
	settings atomic.Pointer[edgeproto.Settings]
	q        *queue
	started  atomic.Bool
	features Features

	// The last known Info of every object reported on, and the way out.
	cloudletInfos *known[*edgeproto.CloudletInfo]
	clusterInfos  *known[*edgeproto.ClusterInstInfo]
	appInstInfos  *known[*edgeproto.AppInstInfo]
	tpes          *known[*edgeproto.TrustPolicyException]
}

// New checks cfg and returns an engine that is not running yet.
func New(cfg Config) (*Engine, error) {
	if cfg.Platform == nil {
		return nil, errors.New("executor: Config.Platform is required")
	}
	if cfg.Workers < 0 {
		return nil, fmt.Errorf("executor: Config.Workers is %d, want >= 0", cfg.Workers)
	}
	e := &Engine{cfg: cfg, log: cfg.Logger, res: cfg.Reservations, q: newQueue(), features: cfg.Platform.Features()}
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	if e.res == nil {
		e.res = NewMemReservations()
	}
	e.cloudletInfos = newKnown(cloudletSpec.kind, cfg.CloudletInfos, cfg.ReportRetry, e.log, func(i *edgeproto.CloudletInfo) bool {
		return i.State == edgeproto.CloudletState_CLOUDLET_STATE_NOT_PRESENT
	})
	e.clusterInfos = newKnown(clusterSpec.kind, cfg.ClusterInstInfos, cfg.ReportRetry, e.log, func(i *edgeproto.ClusterInstInfo) bool {
		return i.State == edgeproto.TrackedState_TRACKED_STATE_DELETE_DONE
	})
	e.appInstInfos = newKnown(appInstSpec.kind, cfg.AppInstInfos, cfg.ReportRetry, e.log, func(i *edgeproto.AppInstInfo) bool {
		return i.State == edgeproto.TrackedState_TRACKED_STATE_DELETE_DONE
	})
	e.tpes = newKnown(tpeSpec.kind, cfg.TrustPolicyExceptions, cfg.ReportRetry, e.log, func(x *edgeproto.TrustPolicyException) bool {
		for _, in := range x.Instances {
			if in.State != edgeproto.TrackedState_TRACKED_STATE_DELETE_DONE {
				return false
			}
		}
		return true
	})
	e.SetSettings(cfg.Settings)
	return e, nil
}

// SetSettings replaces the settings; operations that start afterwards use
// the new timeouts. The pool size is fixed when Start runs.
func (e *Engine) SetSettings(s *edgeproto.Settings) {
	if s == nil {
		s = &edgeproto.Settings{}
	}
	e.settings.Store(s.Clone())
}

func (e *Engine) timeouts() Timeouts { return TimeoutsFrom(e.settings.Load()) }

// Workers is the pool size Start uses.
func (e *Engine) Workers() int {
	switch {
	case e.cfg.Workers > 0:
		return e.cfg.Workers
	case e.settings.Load().GetMaxConcurrentTasks() > 0:
		return int(e.settings.Load().GetMaxConcurrentTasks())
	}
	return DefaultWorkers
}

// Start runs the worker pool until ctx ends, then cancels the running
// operations (each reports an error state), resolves the queued requests
// with ErrStopped, waits for the workers and returns nil. It returns
// ErrStarted when called twice.
func (e *Engine) Start(ctx context.Context) error {
	if !e.started.CompareAndSwap(false, true) {
		return ErrStarted
	}
	n := e.Workers()
	e.log.LogAttrs(ctx, slog.LevelInfo, "engine started", slog.Int("workers", n),
		slog.String("platform", e.features.PlatformType))
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() { e.work(ctx) })
	}
	<-ctx.Done()
	e.q.stop()
	wg.Wait()
	e.log.LogAttrs(context.WithoutCancel(ctx), slog.LevelInfo, "engine stopped")
	return nil
}

func (e *Engine) work(ctx context.Context) {
	for {
		key, t, ok := e.q.pop()
		if !ok {
			return
		}
		if ctx.Err() != nil {
			// Stopping: a task not started yet is not started now.
			t.handle.resolve(ErrStopped)
			e.q.finish(key)
			continue
		}
		t.handle.resolve(t.start(ctx))
		e.q.finish(key)
	}
}

// Wait blocks until no request is queued or running, or ctx ends.
func (e *Engine) Wait(ctx context.Context) error {
	select {
	case <-e.q.idleCh():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Submit queues the change obj asks for: obj is a *Cloudlet, *ClusterInst,
// *AppInst or *TrustPolicyException. See the typed methods.
func (e *Engine) Submit(obj proto.Message) (*Handle, error) { return e.submitWith(nil, obj) }

// SubmitContext is Submit for an operation bound to ctx: its platform
// calls, lookups and reports see ctx's values (a CCRM's claim token, for
// a platform that fences at its back end), and it is cancelled when ctx
// ends as when the engine stops (the error state is reported, wrapping
// ErrCanceled; a create is undone). A request whose ctx ended before it
// started resolves with ErrCanceled and reports nothing.
func (e *Engine) SubmitContext(ctx context.Context, obj proto.Message) (*Handle, error) {
	if ctx == nil {
		return nil, fmt.Errorf("%w: nil context", ErrBadObject)
	}
	return e.submitWith(ctx, obj)
}

// request is a checked submission: the work to queue for one object.
type request struct {
	kind, key string
	run       func(ctx context.Context) error // on clones of what was submitted
	// cloudlet, when set, is the cloudlet whose resources the operation
	// changes: its resources are refreshed when the operation ends (see
	// resources.go).
	cloudlet *edgeproto.CloudletKey
}

// submitWith checks obj and queues its work, bound to ctx when not nil.
func (e *Engine) submitWith(ctx context.Context, obj proto.Message) (*Handle, error) {
	var (
		r   request
		err error
	)
	switch o := obj.(type) {
	case *edgeproto.Cloudlet:
		r, err = e.cloudletRequest(o)
	case *edgeproto.ClusterInst:
		r, err = e.clusterRequest(o)
	case *edgeproto.AppInst:
		r, err = e.appInstRequest(o)
	case *edgeproto.TrustPolicyException:
		r, err = e.tpeRequest(o)
	default:
		err = fmt.Errorf("%w: cannot work on %T", ErrBadObject, obj)
	}
	if err != nil {
		return nil, err
	}
	return e.submit(ctx, r)
}

// submit queues r, bound to ctx when not nil.
func (e *Engine) submit(ctx context.Context, r request) (*Handle, error) {
	if r.key == "" {
		return nil, fmt.Errorf("%w: %s without a key", ErrBadObject, r.kind)
	}
	h := newHandle(r.kind, r.key)
	run := e.refreshAfter(r.cloudlet, r.run)
	if err := e.q.push(r.kind+"/"+r.key, &task{handle: h, run: run, ctx: ctx}); err != nil {
		return nil, err
	}
	e.log.LogAttrs(context.Background(), slog.LevelDebug, "queued", slog.String("kind", r.kind), slog.String("key", r.key))
	return h, nil
}
