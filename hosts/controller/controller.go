// Package controller is the region's API server: the one place users talk
// to. It keeps every object in etcd through the typed store, serves the
// gRPC API of proto/edgeproto/v1 (one service per kind, with server
// reflection and the standard health service), and drives the resource
// managers that do the work through the store alone: a create, update or
// delete of a Cloudlet, ClusterInst or AppInst writes the object in a
// *_REQUESTED state; the responsible host (the CRM of a crm_on_edge
// cloudlet, else the CCRM) sees it, does the work and reports progress as
// partial Info reports, which ApplyInfo checks against the transition table
// and applies, mirroring the state onto the object. The API call streams
// that progress back until the change ends.
//
// # Integrity
//
// Every change runs in one store transaction with the checks that span
// objects: a ClusterInst needs a READY cloudlet and an existing flavor; an
// AppInst its App and a READY ClusterInst of its organization (or a
// multi-tenant one) on the same cloudlet; a cloudlet with clusters, a
// cluster with instances and an App with instances cannot be deleted; nor
// can a cloudlet in a CloudletPool, or the pool or App a
// TrustPolicyException names. An approved exception is applied to the
// instances of its App on the cloudlets of its pool, following them as
// they change (see tpesync.go). An instance is refused on a cloudlet whose
// trust policy does not allow an outbound connection its App requires,
// unless an approved exception on a pool of the cloudlet does. A create
// of an existing key is AlreadyExists, an update or delete of a
// missing one NotFound. An update names the fields it changes as flags;
// flags of the key, of fields only the controller sets and of fields fixed
// at create are refused with an error naming them. An object larger than
// MaxObjectBytes as stored is refused with InvalidArgument naming it.
//
// # Access
//
// Callers authenticate with a bearer token (see Tokens) mapped to an
// organization or to admin. An organization sees and changes only what it
// owns (the organization in an object's key); admin sees everything;
// flavors and settings are changed by admins and seen by all. A refusal is
// PermissionDenied whether or not the object exists. Likewise an AppInst
// on another organization's cluster is refused with one PermissionDenied
// whether that cluster does not exist, is not multi-tenant or is not
// READY. Fields marked debug_redact never leave the controller in API
// answers.
package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/internal/grpcserver"
	"github.com/edgekit/edgekit/internal/store"
	"github.com/prometheus/client_golang/prometheus"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"
)

// Config is what a Controller needs.
type Config struct {
	// Store holds the region's objects. Required.
	Store *store.Store
	// Tokens authenticates API callers. Required (it may be empty, then
	// every user call is refused).
	Tokens *Tokens
	// Logger receives structured logs; nil discards them. Objects are never
	// logged, only kinds, keys, states and errors.
	Logger *slog.Logger
	// Registerer receives the controller's metrics; nil uses a new
	// registry (see Controller.Gatherer).
	Registerer prometheus.Registerer
	// ServerOptions are added to the gRPC server's (TLS credentials...).
	ServerOptions []grpc.ServerOption
	// SelfAuthenticated lists full gRPC method names that authenticate
	// their callers themselves (registered by a host with Server()), so the
	// token check skips them.
	SelfAuthenticated []string
	// StopTimeout bounds the graceful stop of the gRPC server when Serve's
	// context ends; in-flight calls still running then are cancelled.
	// 0 means 10 seconds.
	StopTimeout time.Duration
}

// Controller serves the API of one region.
type Controller struct {
	store    *store.Store
	tokens   *Tokens
	log      *slog.Logger
	metrics  *metrics
	gather   prometheus.Gatherer
	server   *grpc.Server
	health   *health.Server
	stopTO   time.Duration
	selfAuth map[string]bool
	// cachesRunning is set while Serve runs the kinds' caches.
	cachesRunning atomic.Bool
	// showWhole makes Show list every object before sending the first, as
	// it did before it streamed (benchmarks compare the two; see walkFresh).
	showWhole atomic.Bool

	cloudlets     *tracked[*edgeproto.Cloudlet, *edgeproto.CloudletInfo]
	clusters      *tracked[*edgeproto.ClusterInst, *edgeproto.ClusterInstInfo]
	appInsts      *tracked[*edgeproto.AppInst, *edgeproto.AppInstInfo]
	flavors       *kind[*edgeproto.Flavor]
	apps          *kind[*edgeproto.App]
	trustPolicies *kind[*edgeproto.TrustPolicy]
	tpes          *kind[*edgeproto.TrustPolicyException]
	alerts        *kind[*edgeproto.Alert]
	cloudletPools *kind[*edgeproto.CloudletPool]
	settings      *settingsStore
	accessKeys    *accessKeys
}

// New checks cfg and returns a controller that is not serving yet.
func New(cfg Config) (*Controller, error) {
	if cfg.Store == nil {
		return nil, errors.New("controller: Config.Store is required")
	}
	if cfg.Tokens == nil {
		return nil, errors.New("controller: Config.Tokens is required")
	}
	c := &Controller{store: cfg.Store, tokens: cfg.Tokens, log: cfg.Logger, stopTO: cfg.StopTimeout}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	c.selfAuth = map[string]bool{}
	for _, m := range cfg.SelfAuthenticated {
		c.selfAuth[m] = true
	}
	if c.stopTO <= 0 {
		c.stopTO = 10 * time.Second
	}
	s := cfg.Store
	c.cloudlets = newCloudlets(s, c.cloudletRules())
	c.clusters = newClusters(s, c.clusterRules())
	c.appInsts = newAppInsts(s, c.appInstRules())
	c.cloudlets.infoCache = store.NewCache(c.cloudlets.info)
	c.clusters.infoCache = store.NewCache(c.clusters.info)
	c.appInsts.infoCache = store.NewCache(c.appInsts.info)
	c.flavors = newKind(s, flavorOwner, nil)
	c.apps = newKind(s, appOwner, checkApp)
	c.trustPolicies = newKind(s, trustPolicyOwner, nil)
	c.tpes = newKind(s, tpeOwner, nil)
	c.cloudletPools = newKind(s, poolOwner, checkPool)
	c.cloudletPools.readers = poolReaders
	c.settings = newSettingsStore(s)
	c.accessKeys = newAccessKeys(s)
	c.alerts = newKind(s, alertOwner, nil)
	c.cloudlets.deleted = func(tx *store.Tx, cl *edgeproto.Cloudlet) {
		c.accessKeys.remove(tx, cl.Key)
		c.dropAlerts(tx, cl)
	}
	c.cloudlets.infoApplied = c.cloudletInfoApplied
	c.setParents()

	reg := cfg.Registerer
	if reg == nil {
		r := prometheus.NewRegistry()
		reg, c.gather = r, r
	}
	counter := newObjectCounter()
	m, err := newMetrics(reg, counter)
	if err != nil {
		return nil, fmt.Errorf("controller: metrics: %w", err)
	}
	c.metrics = m
	if err := reg.Register(newAlertCollector(c.Alerts)); err != nil {
		return nil, fmt.Errorf("controller: metrics: %w", err)
	}
	counter.count = c.countObjects

	recoverUnary, recoverStream := grpcserver.Recover(c.log)
	opts := append(grpcserver.ServerOptions(),
		grpc.ChainUnaryInterceptor(c.unaryMetrics, recoverUnary, c.unaryAuth),
		grpc.ChainStreamInterceptor(c.streamMetrics, recoverStream, c.streamAuth))
	opts = append(opts, cfg.ServerOptions...)
	c.server = grpc.NewServer(opts...)
	c.register(c)
	c.health = health.NewServer()
	healthpb.RegisterHealthServer(c, c.health)
	reflection.Register(grpcserver.Registrar(c.server))
	return c, nil
}

// RegisterService registers a service on the controller's gRPC server,
// before Serve, so that a host adds its own services (the resource
// managers' APIs) with the controller's handling of requests it cannot
// decode (InvalidArgument; see internal/grpcserver). Register through the
// controller rather than on Server() directly.
func (c *Controller) RegisterService(desc *grpc.ServiceDesc, impl any) {
	grpcserver.Registrar(c.server).RegisterService(desc, impl)
}

var _ grpc.ServiceRegistrar = (*Controller)(nil)

// Gatherer returns the registry of the controller's metrics when Config
// gave none (to serve on /metrics), else nil.
func (c *Controller) Gatherer() prometheus.Gatherer { return c.gather }

// Server returns the gRPC server. A host registers more services through
// the controller (RegisterService), not on the server directly.
func (c *Controller) Server() *grpc.Server { return c.server }

// Store returns the store the controller keeps the region in.
func (c *Controller) Store() *store.Store { return c.store }

// Serve serves the API on lis until ctx ends, then stops gracefully: new
// calls are refused, in-flight calls get Config.StopTimeout to finish and
// are cancelled after. It returns nil after a stop caused by ctx.
func (c *Controller) Serve(ctx context.Context, lis net.Listener) error {
	stopCaches := c.startCaches(ctx)
	defer stopCaches()
	c.health.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	errc := make(chan error, 1)
	go func() { errc <- c.server.Serve(lis) }()
	c.log.LogAttrs(ctx, slog.LevelInfo, "serving API", slog.String("addr", lis.Addr().String()))
	select {
	case err := <-errc:
		return fmt.Errorf("controller: serve: %w", err)
	case <-ctx.Done():
	}
	c.health.Shutdown()
	done := make(chan struct{})
	go func() {
		c.server.GracefulStop()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(c.stopTO):
		c.log.LogAttrs(context.WithoutCancel(ctx), slog.LevelWarn, "graceful stop timed out: cancelling in-flight calls",
			slog.Duration("timeout", c.stopTO))
		c.server.Stop()
		<-done
	}
	<-errc
	c.log.LogAttrs(context.WithoutCancel(ctx), slog.LevelInfo, "API stopped")
	return nil
}

// countObjects counts the objects of each tracked kind by state, for the
// objects metric.
func (c *Controller) countObjects(ctx context.Context) (map[[2]string]int, error) {
	out := map[[2]string]int{}
	add := func(kind string, state edgeproto.TrackedState) { out[[2]string{kind, stateName(state)}]++ }
	cls, _, err := c.cloudlets.store.List(ctx)
	if err != nil {
		return nil, err
	}
	for _, o := range cls {
		add(c.cloudlets.name, o.State)
	}
	cis, _, err := c.clusters.store.List(ctx)
	if err != nil {
		return nil, err
	}
	for _, o := range cis {
		add(c.clusters.name, o.State)
	}
	ais, _, err := c.appInsts.store.List(ctx)
	if err != nil {
		return nil, err
	}
	for _, o := range ais {
		add(c.appInsts.name, o.State)
	}
	return out, nil
}

// startCaches runs the watch-fed caches Show reads, until the returned
// function is called.
func (c *Controller) startCaches(ctx context.Context) func() {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	run := func(start func(context.Context) error) { wg.Go(func() { _ = start(ctx) }) }
	run(c.cloudlets.cache.Start)
	run(c.cloudlets.infoCache.Start)
	run(c.clusters.cache.Start)
	run(c.clusters.infoCache.Start)
	run(c.appInsts.cache.Start)
	run(c.appInsts.infoCache.Start)
	run(c.flavors.cache.Start)
	run(c.apps.cache.Start)
	run(c.trustPolicies.cache.Start)
	run(c.tpes.cache.Start)
	run(c.alerts.cache.Start)
	run(c.cloudletPools.cache.Start)
	c.cachesRunning.Store(true)
	return func() {
		c.cachesRunning.Store(false)
		cancel()
		wg.Wait()
	}
}

// currentRev is the store's current revision, read linearizably.
func (c *Controller) currentRev(ctx context.Context) (int64, error) {
	resp, err := c.store.Client().Get(ctx, c.store.Prefix(), clientv3.WithCountOnly())
	if err != nil {
		return 0, err
	}
	return resp.Header.Revision, nil
}
