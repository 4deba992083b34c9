package allocator

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/fieldmap"
	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/internal/store"
)

// Defaults of Config.
const (
	DefaultHealthInterval   = 10 * time.Second
	DefaultOperationTimeout = 2 * time.Minute
	DefaultMaxRestarts      = 5
	DefaultStopTimeout      = 10 * time.Second
	// CloudletOrganization is the organization of the node's cloudlet,
	// named after the node.
	CloudletOrganization = "fluidos"
)

// Ledger is what the allocator needs of the seller's books
// (provider.Provider): the contracts, their allocations, and the closing
// of an allocation torn down.
type Ledger interface {
	// Contract returns a contract the node sold.
	Contract(ctx context.Context, id string) (*fluidos.Contract, error)
	// Allocations are the allocations of the contracts sold.
	Allocations() *store.Kind[*fluidos.Allocation]
	// RequestRelease marks an allocation for teardown.
	RequestRelease(ctx context.Context, allocationID, reason string) (*fluidos.Allocation, error)
	// Finish closes the books of an allocation torn down.
	Finish(ctx context.Context, allocationID string, final fluidos.AllocationState, msg string) error
}

// Config configures an Allocator.
type Config struct {
	// Self is the node; NodeId is required, Ip (its REAR endpoint,
	// host:port) is the endpoint of the K8Slices it sells.
	Self *fluidos.NodeIdentity
	// Store keeps the engine's objects beside the node's.
	Store *store.Store
	// Platform runs what is sold (local in production, fake in tests).
	// Required; health checks and restarts need it to list what it runs
	// (executor.InventoryPlatform).
	Platform executor.Platform
	// Images are the executables buyers and blueprints may run, by name:
	// the catalog of a slice's instances and of the "image" function of
	// blueprint templates.
	Images map[string]string
	// HealthInterval is how often what was delivered is checked; default
	// DefaultHealthInterval.
	HealthInterval time.Duration
	// OperationTimeout bounds each engine operation (create, update,
	// delete of a cluster or an app instance); default
	// DefaultOperationTimeout.
	OperationTimeout time.Duration
	// MaxRestarts is how many times a service that stopped is restarted
	// before its allocation fails; default DefaultMaxRestarts.
	MaxRestarts int
	// Probe, when set, checks that a service answers at its endpoint
	// (host:port) on top of its process running.
	Probe func(ctx context.Context, endpoint string) error
	// StopTimeout bounds how long operations in flight may finish when
	// Start's context ends, before they are cancelled; default
	// DefaultStopTimeout.
	StopTimeout time.Duration
	// Logger; nil discards. Objects are never logged, only keys.
	Logger *slog.Logger
	// Metrics, when set, measures allocations.
	Metrics *Metrics
}

// Allocator provisions what the node sold, through the lifecycle engine.
type Allocator struct {
	cfg      Config
	log      *slog.Logger
	objs     *objects
	cloudlet *edgeproto.Cloudlet
	eng      *executor.Engine
	ledger   Ledger
	catalog  catalog

	stopping atomic.Bool // the engine is being stopped: failures are interruptions

	mu       sync.Mutex
	ctx      context.Context // Start's; nil before
	workers  map[string]*worker
	pending  map[string]bool // woken before Start
	inflight map[string]*executor.Handle
	slices   map[string]*sync.Mutex
	tokens   sliceTokens    // until when each slice's kubeconfig works
	failures map[string]int // consecutive failed restarts, by allocation
	wg       sync.WaitGroup
}

// New returns an allocator; call SetLedger, then Start.
func New(cfg Config) (*Allocator, error) {
	switch {
	case cfg.Self.GetNodeId() == "":
		return nil, errors.New("allocator: Config.Self needs a node ID")
	case cfg.Store == nil || cfg.Platform == nil:
		return nil, errors.New("allocator: Config.Store and Platform are required")
	}
	cat, err := newCatalog(cfg.Images)
	if err != nil {
		return nil, fmt.Errorf("allocator: %w", err)
	}
	if cfg.HealthInterval <= 0 {
		cfg.HealthInterval = DefaultHealthInterval
	}
	if cfg.OperationTimeout <= 0 {
		cfg.OperationTimeout = DefaultOperationTimeout
	}
	if cfg.MaxRestarts <= 0 {
		cfg.MaxRestarts = DefaultMaxRestarts
	}
	if cfg.StopTimeout <= 0 {
		cfg.StopTimeout = DefaultStopTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	a := &Allocator{
		cfg: cfg, log: cfg.Logger, objs: newObjects(cfg.Store), catalog: cat,
		cloudlet: &edgeproto.Cloudlet{
			Key:          &edgeproto.CloudletKey{Organization: CloudletOrganization, Name: cfg.Self.GetNodeId()},
			PlatformType: cfg.Platform.Features().PlatformType,
			State:        edgeproto.TrackedState_TRACKED_STATE_READY,
		},
		workers: map[string]*worker{}, pending: map[string]bool{}, inflight: map[string]*executor.Handle{},
		slices: map[string]*sync.Mutex{}, failures: map[string]int{},
	}
	timeout := durationpb.New(cfg.OperationTimeout)
	clusters, insts := a.objs.clusterTracked(), a.objs.instTracked()
	a.eng, err = executor.New(executor.Config{
		Platform: cfg.Platform,
		Objects:  a.objs.lookups(a.cloudlet),
		ClusterInstInfos: executor.SenderFunc[*edgeproto.ClusterInstInfo](func(ctx context.Context, i *edgeproto.ClusterInstInfo, fm *fieldmap.FieldMap) error {
			got, err := clusters.apply(ctx, cfg.Store, i, fm, a.stopping.Load())
			if err == nil {
				a.progress(ctx, got.GetKey().GetName(), got.GetState(), got.GetStatus())
			}
			return err
		}),
		AppInstInfos: executor.SenderFunc[*edgeproto.AppInstInfo](func(ctx context.Context, i *edgeproto.AppInstInfo, fm *fieldmap.FieldMap) error {
			got, err := insts.apply(ctx, cfg.Store, i, fm, a.stopping.Load())
			if err == nil {
				a.progress(ctx, got.GetKey().GetName(), got.GetState(), got.GetStatus())
			}
			return err
		}),
		Settings: &edgeproto.Settings{
			CreateClusterInstTimeout: timeout, UpdateClusterInstTimeout: timeout, DeleteClusterInstTimeout: timeout,
			CreateAppInstTimeout: timeout, UpdateAppInstTimeout: timeout, DeleteAppInstTimeout: timeout,
			CreateCloudletTimeout: timeout, UpdateCloudletTimeout: timeout,
		},
		Logger: slog.New(quietReconcile{cfg.Logger.Handler()}).With("part", "engine"),
	})
	if err != nil {
		return nil, fmt.Errorf("allocator: %w", err)
	}
	return a, nil
}

// SetLedger gives the allocator the seller's books; it must be called
// before Start.
func (a *Allocator) SetLedger(l Ledger) { a.ledger = l }

// Engine is the lifecycle engine the allocator runs.
func (a *Allocator) Engine() *executor.Engine { return a.eng }

// Cloudlet is the node's cloudlet, on which everything is provisioned.
func (a *Allocator) Cloudlet() *edgeproto.Cloudlet { return a.cloudlet.Clone() }

// Start runs the engine until ctx ends: it initialises the node's
// cloudlet, converges what the platform runs with what the store wants
// (executor.Engine.Reconcile: what a crash interrupted is finished or
// undone), resumes every allocation not ended, and checks what was
// delivered every HealthInterval. When ctx ends it stops taking work,
// lets operations in flight finish within StopTimeout, then stops the
// engine. It returns nil after a stop.
func (a *Allocator) Start(ctx context.Context) error {
	if a.ledger == nil {
		return errors.New("allocator: Start before SetLedger")
	}
	engCtx, stopEngine := context.WithCancel(context.WithoutCancel(ctx))
	engDone := make(chan struct{})
	go func() { defer close(engDone); _ = a.eng.Start(engCtx) }()
	defer func() {
		a.wg.Wait()
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), a.cfg.StopTimeout)
		if err := a.eng.Wait(dctx); err != nil {
			a.log.Warn("operations still running at the stop: cancelled; they resume at the next start", "timeout", a.cfg.StopTimeout)
		}
		cancel()
		a.stopping.Store(true)
		stopEngine()
		<-engDone
	}()
	if err := a.initCloudlet(ctx); err != nil {
		return nil // ctx ended
	}
	if res := a.reconcile(ctx); res != nil {
		a.log.InfoContext(ctx, "platform reconciled with the store", "actions", len(res.Items), "created", res.Count(executor.ReconcileCreate),
			"deleted", res.Count(executor.ReconcileDelete), "undone", res.Count(executor.ReconcileUndo))
	}
	a.mu.Lock()
	a.ctx = ctx
	pending := a.pending
	a.pending = map[string]bool{}
	a.mu.Unlock()
	for id := range pending {
		a.Wake(id)
	}
	a.resume(ctx)
	t := time.NewTicker(a.cfg.HealthInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			a.mu.Lock()
			a.ctx = nil
			a.mu.Unlock()
			return nil
		case <-t.C:
			a.checkHealth(ctx)
		}
	}
}

// initCloudlet brings the node's cloudlet under management, retrying until
// it succeeds or ctx ends (then it returns ctx's error).
func (a *Allocator) initCloudlet(ctx context.Context) error {
	c := a.cloudlet.Clone()
	c.State = edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED
	for backoff := 100 * time.Millisecond; ; backoff = min(2*backoff, 10*time.Second) {
		h, err := a.eng.SubmitCloudlet(c)
		if err == nil {
			err = h.Wait(ctx)
		}
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		a.log.WarnContext(ctx, "initialising the cloudlet failed; retrying", "err", err, "in", backoff)
		if sleep(ctx, backoff) != nil {
			return ctx.Err()
		}
	}
}

// reconcile converges the platform with the store (after a start or as a
// health check): interrupted operations run again, and every object the
// platform has is reported with its runtime.
func (a *Allocator) reconcile(ctx context.Context) *executor.ReconcileResult {
	res, err := a.eng.Reconcile(ctx, a.cloudlet)
	switch {
	case err != nil && ctx.Err() == nil:
		a.log.WarnContext(ctx, "reconciling the platform with the store", "err", err)
	case res != nil && res.Err() != nil:
		a.log.WarnContext(ctx, "reconciled with errors", "err", res.Err())
	}
	return res
}

// resume wakes every allocation that has not ended.
func (a *Allocator) resume(ctx context.Context) {
	as, _, err := a.ledger.Allocations().List(ctx)
	if err != nil {
		a.log.WarnContext(ctx, "listing allocations to resume", "err", err)
		return
	}
	for _, al := range as {
		if !ended(al) {
			a.Wake(al.GetId())
		}
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
