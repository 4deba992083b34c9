package ccrm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/hosts/controller"
	"github.com/edgekit/edgekit/internal/store"
	"github.com/edgekit/edgekit/platforms"
	rmv1 "github.com/edgekit/edgekit/proto/edgekit/rm/v1"
	"github.com/prometheus/client_golang/prometheus"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Defaults of Config.
const (
	DefaultLeaseTTL     = 10 * time.Second
	DefaultWorkers      = 16
	DefaultDrainTimeout = 10 * time.Second
	DefaultGCInterval   = time.Minute
	// DefaultReconcileInterval is how often a replica reconciles each
	// cloudlet it serves, beside once when it starts serving it.
	DefaultReconcileInterval = 5 * time.Minute
	// rescanEvery is how often a replica looks for work without being
	// woken by a change (claims whose release it missed, back-offs ended).
	rescanEvery = time.Second
)

// Config is what a Replica needs.
type Config struct {
	// Store is the region's store on the controller's etcd, which the
	// replica reads (it writes only its lease, its claims and
	// reservations). Required.
	Store *store.Store
	// Reports is the controller's ReportService. Required.
	Reports rmv1.ReportServiceClient
	// ReplicaID names the replica in its claims and logs. Required.
	ReplicaID string
	// Platforms are the platform types the replica serves; empty serves
	// every type NewPlatform builds (with the default NewPlatform, every
	// registered one).
	Platforms []string
	// NewPlatform builds a cloudlet's platform; nil uses
	// RegistryPlatforms(StateDir, Logger).
	NewPlatform PlatformFunc
	// StateDir is where the default NewPlatform lets platforms keep files.
	StateDir string
	// Reservations are handed to platforms; nil keeps them in etcd (see
	// package reservations), as every replica must share them.
	Reservations executor.Reservations
	// LeaseTTL is the TTL of the replica's lease: how long its claims
	// survive it. 0 means DefaultLeaseTTL.
	LeaseTTL time.Duration
	// Workers bounds the claims the replica holds at once, so the
	// operations it runs. 0 means DefaultWorkers.
	Workers int
	// DrainTimeout bounds how long a stopping replica lets its operations
	// finish before it hands their claims back. 0 means
	// DefaultDrainTimeout.
	DrainTimeout time.Duration
	// GCInterval is how often the replica deletes the reservations whose
	// owner no longer exists (with etcd reservations only). 0 means
	// DefaultGCInterval; negative turns it off.
	GCInterval time.Duration
	// ReconcileInterval is how often the replica reconciles each cloudlet
	// it serves (with jitter), beside once when it starts serving it:
	// what the platform has and the region no longer has (deleted while
	// no replica watched) is removed (see Replica.reconcileCloudlets). 0
	// means DefaultReconcileInterval; negative turns reconciliation off.
	ReconcileInterval time.Duration
	// ReportRetry bounds the retries of a report (see executor.Config).
	ReportRetry executor.RetryPolicy
	// OnReportRejected, when set, is told about every report the
	// controller refused (the object's kind and key, and the reason).
	OnReportRejected func(kind, key, reason string)
	// Registerer receives the replica's metrics; nil registers none.
	Registerer prometheus.Registerer
	// Logger receives logs; nil discards them.
	Logger *slog.Logger
}

// Replica is one CCRM replica. Create it with New and run it with Start.
type Replica struct {
	cfg     Config
	st      *store.Store
	cli     *clientv3.Client
	reports rmv1.ReportServiceClient
	log     *slog.Logger
	metrics *metrics
	res     executor.Reservations
	objects executor.Objects
	served  map[string]bool // nil: every type

	cloudletKind *store.Kind[*edgeproto.Cloudlet]
	clusterKind  *store.Kind[*edgeproto.ClusterInst]
	appInstKind  *store.Kind[*edgeproto.AppInst]
	tpeKind      *store.Kind[*edgeproto.TrustPolicyException]
	cloudlets    *store.Cache[*edgeproto.Cloudlet]
	clusters     *store.Cache[*edgeproto.ClusterInst]
	appInsts     *store.Cache[*edgeproto.AppInst]
	tpes         *store.Cache[*edgeproto.TrustPolicyException]
	index        *workIndex
	claims       *keySet

	kick   chan struct{}
	engCtx context.Context
	taken  atomic.Int64
	wg     sync.WaitGroup

	mu       sync.Mutex
	session  *Session
	jobs     map[string]*job // by claim key
	claiming map[string]bool // claim keys being claimed now
	engines  map[string]*cloudletEngine
	builds   map[string]*sync.Mutex // per cloudlet
	backoff  map[string]time.Time   // claim key -> not before
	settings *edgeproto.Settings    // the region's, nil until read
	idle     chan struct{}          // closed while no job runs
	draining bool
}

// job is one operation run under a claim.
type job struct {
	claim  *Claim
	cancel context.CancelFunc
}

// New checks cfg and returns a replica that is not running yet.
func New(cfg Config) (*Replica, error) {
	switch {
	case cfg.Store == nil:
		return nil, errors.New("ccrm: Config.Store is required")
	case cfg.Reports == nil:
		return nil, errors.New("ccrm: Config.Reports is required")
	case cfg.ReplicaID == "":
		return nil, errors.New("ccrm: Config.ReplicaID is required")
	case cfg.LeaseTTL < 0 || cfg.Workers < 0 || cfg.DrainTimeout < 0:
		return nil, fmt.Errorf("ccrm: negative LeaseTTL, Workers or DrainTimeout")
	}
	if cfg.LeaseTTL == 0 {
		cfg.LeaseTTL = DefaultLeaseTTL
	}
	if cfg.LeaseTTL < time.Second {
		return nil, fmt.Errorf("ccrm: LeaseTTL %v: want at least 1s", cfg.LeaseTTL)
	}
	if cfg.Workers == 0 {
		cfg.Workers = DefaultWorkers
	}
	if cfg.GCInterval == 0 {
		cfg.GCInterval = DefaultGCInterval
	}
	if cfg.DrainTimeout == 0 {
		cfg.DrainTimeout = DefaultDrainTimeout
	}
	if cfg.ReconcileInterval == 0 {
		cfg.ReconcileInterval = DefaultReconcileInterval
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = log.With(slog.String("replica", cfg.ReplicaID))
	if cfg.NewPlatform == nil {
		cfg.NewPlatform = RegistryPlatforms(cfg.StateDir, log)
	}
	r := &Replica{
		cfg: cfg, st: cfg.Store, cli: cfg.Store.Client(), reports: cfg.Reports, log: log,
		res:  cfg.Reservations,
		kick: make(chan struct{}, 1),
		jobs: map[string]*job{}, claiming: map[string]bool{}, engines: map[string]*cloudletEngine{}, builds: map[string]*sync.Mutex{}, backoff: map[string]time.Time{},
		idle: make(chan struct{}),
	}
	close(r.idle)
	if len(cfg.Platforms) > 0 {
		r.served = map[string]bool{}
		known := platforms.Names()
		for _, p := range cfg.Platforms {
			if p == "" {
				return nil, errors.New("ccrm: an empty platform type in Config.Platforms")
			}
			if cfg.Reservations == nil && !slices.Contains(known, p) {
				// With the registry, a type nobody registered can never be built.
				return nil, &platforms.UnknownPlatformError{Name: p, Known: known}
			}
			r.served[p] = true
		}
	}
	if r.res == nil {
		res, err := newEtcdReservations(cfg.Store, log)
		if err != nil {
			return nil, err
		}
		r.res = res
	}
	reg := cfg.Registerer
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	m, err := newMetrics(reg, func() float64 {
		r.mu.Lock()
		defer r.mu.Unlock()
		return float64(len(r.jobs))
	})
	if err != nil {
		return nil, fmt.Errorf("ccrm: metrics: %w", err)
	}
	r.metrics = m
	r.cloudletKind = store.NewKind[*edgeproto.Cloudlet](r.st)
	r.clusterKind = store.NewKind[*edgeproto.ClusterInst](r.st)
	r.appInstKind = store.NewKind[*edgeproto.AppInst](r.st)
	r.tpeKind = store.NewKind[*edgeproto.TrustPolicyException](r.st)
	r.objects = executor.Objects{
		Cloudlets:      claimedCloudlet(storeGetter[*edgeproto.CloudletKey](r.cloudletKind)),
		ClusterInsts:   storeGetter[*edgeproto.ClusterKey](r.clusterKind),
		Apps:           storeGetter[*edgeproto.AppKey](store.NewKind[*edgeproto.App](r.st)),
		AppInsts:       storeGetter[*edgeproto.AppInstKey](r.appInstKind),
		TrustPolicies:  storeGetter[*edgeproto.TrustPolicyKey](store.NewKind[*edgeproto.TrustPolicy](r.st)),
		ClusterInstsOn: storeLister(r.clusterKind),
		AppInstsOn:     storeLister(r.appInstKind),
	}
	r.index = newWorkIndex()
	r.cloudlets = store.NewCache(r.cloudletKind, store.OnEvent(cloudletIndexer(r, r.cloudletKind.Name())))
	r.clusters = store.NewCache(r.clusterKind, store.OnEvent(indexer(r, r.clusterKind.Name(), (*edgeproto.ClusterInst).GetCloudletKey)))
	r.appInsts = store.NewCache(r.appInstKind, store.OnEvent(indexer(r, r.appInstKind.Name(), (*edgeproto.AppInst).GetCloudletKey)))
	r.tpes = store.NewCache(r.tpeKind, store.OnEvent(tpeIndexer(r, r.tpeKind.Name())))
	r.claims = newKeySet(r.cli, r.st.Prefix()+controller.ClaimPrefix, log, r.wake)
	return r, nil
}

// ID is the replica's ID.
func (r *Replica) ID() string { return r.cfg.ReplicaID }

// Taken returns how many claims the replica took since it started.
func (r *Replica) Taken() int64 { return r.taken.Load() }

// Held returns how many claims the replica holds.
func (r *Replica) Held() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.jobs)
}

func (r *Replica) wake() {
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// Start runs the replica until ctx ends: it follows the region's objects,
// claims the operations of the cloudlets it serves while its pool has
// room, and runs them. When ctx ends it stops claiming, lets running
// operations finish for up to Config.DrainTimeout, hands the claims of
// those still running back (they report nothing more and make no more
// platform calls; another replica re-runs them), and revokes its lease.
func (r *Replica) Start(ctx context.Context) error {
	engCtx, engCancel := context.WithCancel(context.WithoutCancel(ctx))
	r.engCtx = engCtx
	mctx, mcancel := context.WithCancel(ctx)
	var mwg sync.WaitGroup
	mwg.Go(func() { _ = r.cloudlets.Start(mctx) })
	mwg.Go(func() { _ = r.clusters.Start(mctx) })
	mwg.Go(func() { _ = r.appInsts.Start(mctx) })
	mwg.Go(func() { _ = r.tpes.Start(mctx) })
	mwg.Go(func() { r.claims.start(mctx) })
	mwg.Go(func() { r.collectGarbage(mctx, r.cfg.GCInterval) })
	mwg.Go(func() { r.followSettings(mctx) })
	// In r.wg, which shutdown waits for before it stops the engines: a
	// reconciliation in progress uses its cloudlet's engine.
	r.wg.Go(func() { r.reconcileCloudlets(mctx, r.cfg.ReconcileInterval) })
	defer func() {
		mcancel()
		mwg.Wait()
	}()
	r.log.LogAttrs(ctx, slog.LevelInfo, "replica started", slog.Int("workers", r.cfg.Workers),
		slog.Duration("lease_ttl", r.cfg.LeaseTTL), slog.Any("platforms", r.cfg.Platforms),
		slog.Duration("reconcile_interval", r.cfg.ReconcileInterval))
	r.loop(ctx)
	r.shutdown(engCancel)
	return nil
}

// loop keeps a session and schedules work until ctx ends.
func (r *Replica) loop(ctx context.Context) {
	tick := time.NewTicker(rescanEvery)
	defer tick.Stop()
	for ctx.Err() == nil {
		s := r.currentSession()
		if s == nil {
			var err error
			gctx, cancel := context.WithTimeout(ctx, r.cfg.LeaseTTL)
			s, err = NewSession(gctx, r.cli, r.cfg.LeaseTTL, r.log)
			cancel()
			if err != nil {
				if ctx.Err() == nil {
					r.log.Warn("no session", slog.Any("error", err))
				}
				pause(ctx, 500*time.Millisecond)
				continue
			}
			r.mu.Lock()
			r.session = s
			r.mu.Unlock()
			r.log.Info("session started", slog.String("lease", fmt.Sprintf("%x", int64(s.Lease()))))
		}
		select {
		case <-ctx.Done():
			return
		case <-s.Done():
			r.sessionLost(s)
			continue
		case <-r.kick:
		case <-tick.C:
			r.retireGone()
		}
		r.schedule(ctx, s)
	}
}

func (r *Replica) currentSession() *Session {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.session
}

// sessionLost ends every claim held under s and cancels its operation:
// another replica (or this one, under its next session) runs it again.
func (r *Replica) sessionLost(s *Session) {
	r.metrics.sessionsLost.Inc()
	r.mu.Lock()
	r.session = nil
	n := 0
	for _, j := range r.jobs {
		if j.claim.session == s {
			j.claim.end()
			j.cancel()
			n++
		}
	}
	r.mu.Unlock()
	r.log.Warn("lease lost: claims ended", slog.Int("claims", n), slog.Any("cause", s.Err()))
}

// candidate is an object that needs work and has no claim.
type candidate struct {
	kind, key, path string
	cloudlet        string // the key string of the object's cloudlet
	takeover        bool
}

// needsWork maps an object's state to the state to submit it in: the
// *_REQUESTED state itself, or the request of an *ING state whose claim
// ended (the operation is run again; platforms adopt what exists).
func needsWork(s edgeproto.TrackedState) (edgeproto.TrackedState, bool) {
	switch s {
	case edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED,
		edgeproto.TrackedState_TRACKED_STATE_UPDATE_REQUESTED,
		edgeproto.TrackedState_TRACKED_STATE_DELETE_REQUESTED:
		return s, true
	case edgeproto.TrackedState_TRACKED_STATE_CREATING,
		edgeproto.TrackedState_TRACKED_STATE_CREATING_DEPENDENCIES,
		edgeproto.TrackedState_TRACKED_STATE_CRM_INITOK:
		return edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED, true
	case edgeproto.TrackedState_TRACKED_STATE_UPDATING:
		return edgeproto.TrackedState_TRACKED_STATE_UPDATE_REQUESTED, true
	case edgeproto.TrackedState_TRACKED_STATE_DELETING:
		return edgeproto.TrackedState_TRACKED_STATE_DELETE_REQUESTED, true
	}
	return 0, false
}

// serves reports whether the replica serves cloudlet cl: one without
// crm_on_edge, of a platform type it serves.
func (r *Replica) serves(cl *edgeproto.Cloudlet) bool {
	if cl == nil || cl.GetCrmOnEdge() {
		return false
	}
	return r.served == nil || r.served[cl.GetPlatformType()]
}

// candidates lists the objects that need work on the cloudlets the replica
// serves and have no claim, in random order so that replicas woken by the
// same change try different objects first.
func (r *Replica) candidates() []candidate {
	var out []candidate
	r.index.each(func(it workItem) {
		req, ok := needsWork(it.state)
		if !ok || r.claims.has(it.claimPath) {
			return
		}
		out = append(out, candidate{kind: it.kind, key: it.key, path: it.claimPath, cloudlet: it.cloudlet, takeover: req != it.state})
	})
	rand.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

func cloudletKeyString(k *edgeproto.CloudletKey) string {
	return (&edgeproto.Cloudlet{Key: k}).GetKeyString()
}

// schedule claims candidates while the pool has room. A replica that is
// busier waits a little longer before it tries, so that idle replicas
// take new work first.
func (r *Replica) schedule(ctx context.Context, s *Session) {
	r.mu.Lock()
	full := len(r.jobs)+len(r.claiming) >= r.cfg.Workers || r.draining
	r.mu.Unlock()
	if full {
		// Woken by a change while the pool has no room: the end of a job
		// wakes the loop again.
		return
	}
	cands := r.candidates()
	if len(cands) == 0 {
		return
	}
	r.mu.Lock()
	busy := len(r.jobs)
	r.mu.Unlock()
	if busy > 0 {
		pause(ctx, time.Duration(min(busy, 20))*time.Millisecond)
	}
	now := time.Now()
	for _, c := range cands {
		if ctx.Err() != nil || !s.Alive() {
			return
		}
		r.mu.Lock()
		full := len(r.jobs)+len(r.claiming) >= r.cfg.Workers || r.draining
		_, mine := r.jobs[c.path]
		mine = mine || r.claiming[c.path]
		notYet := r.backoff[c.path].After(now)
		take := !full && !mine && !notYet && !r.claims.has(c.path)
		if take {
			r.claiming[c.path] = true
		}
		r.mu.Unlock()
		if full {
			return
		}
		if take {
			// Claims are taken in parallel, each holding a slot of the pool.
			r.wg.Go(func() {
				r.claimAndRun(ctx, s, c)
				r.mu.Lock()
				delete(r.claiming, c.path)
				r.mu.Unlock()
				r.wake() // a slot may be free again
			})
		}
	}
}

// claimAndRun claims the object of c and, when it still needs work once
// read again from etcd, submits it to its cloudlet's engine under the
// claim; the claim is released when the operation ends.
func (r *Replica) claimAndRun(ctx context.Context, s *Session, c candidate) {
	if c.takeover && !r.abandoned(ctx, c) {
		return
	}
	reads := []string{r.pathOf(c.kind, c.objectKey())}
	if c.kind != r.cloudletKind.Name() {
		reads = append(reads, r.cloudletKind.Path(c.cloudlet))
	}
	claim, kvs, err := tryClaim(ctx, r.cli, s, c.path, c.kind, c.key, r.cfg.ReplicaID, reads...)
	if err != nil {
		if ctx.Err() == nil {
			r.log.Warn("claim", slog.String("kind", c.kind), slog.String("key", c.key), slog.Any("error", err))
		}
		return
	}
	if claim == nil {
		r.metrics.claims.WithLabelValues("contended").Inc()
		return
	}
	r.metrics.claims.WithLabelValues("taken").Inc()
	r.taken.Add(1)
	obj, cl, err := r.read(ctx, c, kvs)
	if err == nil && obj == nil {
		r.metrics.operations.WithLabelValues(c.kind, "skipped").Inc()
		r.releaseClaim(claim)
		return
	}
	var eng *executor.Engine
	if err == nil {
		eng, err = r.engineFor(cl)
	}
	if err != nil {
		r.log.Warn("cannot run", slog.String("kind", c.kind), slog.String("key", c.key), slog.Any("error", err))
		r.metrics.operations.WithLabelValues(c.kind, "skipped").Inc()
		r.mu.Lock()
		r.backoff[c.path] = time.Now().Add(5 * time.Second)
		r.mu.Unlock()
		r.releaseClaim(claim)
		return
	}
	if c.kind != r.cloudletKind.Name() {
		claim.cloudlet = cl
	}
	if c.takeover {
		r.metrics.takeovers.WithLabelValues(c.kind).Inc()
		r.log.Info("taking over", slog.String("kind", c.kind), slog.String("key", c.key), slog.Int64("claim", claim.Fence.Revision))
	}
	jctx, cancel := context.WithCancel(WithClaim(r.engCtx, claim))
	// The job is registered, unless the replica is stopping, in the same
	// critical section that checks it: a stopping replica hands back every
	// job it has and starts none after.
	r.mu.Lock()
	if r.draining {
		r.mu.Unlock()
		cancel()
		r.releaseClaim(claim)
		return
	}
	if len(r.jobs) == 0 {
		r.idle = make(chan struct{})
	}
	r.jobs[c.path] = &job{claim: claim, cancel: cancel}
	delete(r.backoff, c.path)
	r.mu.Unlock()
	h, err := eng.SubmitContext(jctx, obj)
	if err != nil {
		r.log.Warn("not submitted", slog.String("kind", c.kind), slog.String("key", c.key), slog.Any("error", err))
		cancel()
		r.finish(c, claim, fmt.Errorf("%w: %w", errSkipped, err))
		return
	}
	r.wg.Go(func() {
		<-h.Done()
		cancel()
		r.finish(c, claim, h.Err())
	})
}

// abandoned says whether an object in an *ING state whose claim is gone
// still needs work once the object's cache has seen every claim delete
// seen so far. The report that settles an object deletes its claim in the
// same revision (see settles), but the claims and the objects come
// through watches of their own: the claim's delete may come first, and
// the object, READY at that revision, would look abandoned in its
// *ING state. Taking it over would cost a claim and a release for
// nothing. An object whose cache cannot tell in time is taken over, as
// before (the claim's own read of the object decides then).
func (r *Replica) abandoned(ctx context.Context, c candidate) bool {
	var cache interface {
		WaitRev(context.Context, int64) error
	}
	switch c.kind {
	case r.clusterKind.Name():
		cache = r.clusters
	case r.appInstKind.Name():
		cache = r.appInsts
	case r.cloudletKind.Name():
		cache = r.cloudlets
	default:
		return true
	}
	wctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	if err := cache.WaitRev(wctx, r.claims.lastDelete()); err != nil {
		return true
	}
	it, ok := r.index.get(c.kind, c.key)
	if !ok {
		return false
	}
	req, needed := needsWork(it.state)
	return needed && req != it.state
}

// errSkipped marks an operation that was claimed and not run.
var errSkipped = errors.New("not run")

// finish records the outcome of an operation and releases its claim.
func (r *Replica) finish(c candidate, claim *Claim, err error) {
	result := "ok"
	switch {
	case err == nil:
	case errors.Is(err, errSkipped):
		result = "skipped"
	case errors.Is(err, executor.ErrReportRejected):
		result = "rejected"
	case errors.Is(err, executor.ErrReportFailed):
		result = "report_failed"
	case errors.Is(err, executor.ErrCanceled) || errors.Is(err, ErrNoClaim):
		result = "canceled"
	default:
		result = "error"
	}
	r.metrics.operations.WithLabelValues(c.kind, result).Inc()
	r.log.Debug("operation ended", slog.String("kind", c.kind), slog.String("key", c.key), slog.String("result", result), slog.Any("error", err))
	if result == "report_failed" {
		// The controller did not hear the outcome: run it again later.
		r.mu.Lock()
		r.backoff[c.path] = time.Now().Add(time.Second)
		r.mu.Unlock()
	}
	r.releaseClaim(claim)
	r.mu.Lock()
	delete(r.jobs, c.path)
	if len(r.jobs) == 0 {
		close(r.idle)
	}
	r.mu.Unlock()
	r.wake()
}

// releaseClaim deletes the claim key, bounded in time; a claim that cannot
// be deleted goes with the lease.
func (r *Replica) releaseClaim(c *Claim) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := release(ctx, r.cli, c); err != nil {
		r.log.Warn("release", slog.Any("error", err))
	}
}

// shutdown drains the running operations, hands back the claims of those
// that did not finish, stops the engines and revokes the lease.
func (r *Replica) shutdown(engCancel context.CancelFunc) {
	r.mu.Lock()
	r.draining = true
	idle, n := r.idle, len(r.jobs)
	r.mu.Unlock()
	log := r.log
	log.Info("stopping: draining", slog.Int("claims", n), slog.Duration("timeout", r.cfg.DrainTimeout))
	t := time.NewTimer(r.cfg.DrainTimeout)
	select {
	case <-idle:
	case <-t.C:
	}
	t.Stop()
	r.mu.Lock()
	handed := 0
	for _, j := range r.jobs {
		j.claim.end()
		j.cancel()
		handed++
	}
	s := r.session
	r.mu.Unlock()
	if handed > 0 {
		log.Info("handing claims back", slog.Int("claims", handed))
	}
	engCancel()
	r.wg.Wait()
	r.mu.Lock()
	engines := make([]*cloudletEngine, 0, len(r.engines))
	for _, ce := range r.engines {
		engines = append(engines, ce)
	}
	r.engines = map[string]*cloudletEngine{}
	r.mu.Unlock()
	for _, ce := range engines {
		r.stopEngine(ce, false)
	}
	if s != nil {
		if err := s.Close(); err != nil {
			log.Warn("revoke lease", slog.Any("error", err))
		}
	}
	log.Info("replica stopped")
}
