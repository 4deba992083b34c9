package crm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/internal/notify"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// Defaults of Config.
const (
	DefaultReconnectMin = 100 * time.Millisecond
	DefaultReconnectMax = 10 * time.Second
	DefaultStopTimeout  = 30 * time.Second
	// DefaultDeadAfter is how long a stream may stay silent before the CRM
	// takes it for dead, until the controller announced its keepalive
	// interval (then three intervals).
	DefaultDeadAfter = 30 * time.Second
	// DefaultReportRetry is the pause before a report the controller could
	// not judge is sent again.
	DefaultReportRetry = 500 * time.Millisecond
)

// Config is what a CRM needs.
type Config struct {
	// Controller is the address of the controller's API. Required.
	Controller string
	// DialOptions are used to reach the controller (transport credentials:
	// TLS, mutual TLS); nil connects without TLS, for loopback only.
	DialOptions []grpc.DialOption
	// Cloudlet is the cloudlet this CRM manages. Required.
	Cloudlet *edgeproto.CloudletKey
	// AccessKey is the cloudlet's access key, given when the cloudlet was
	// created. Required.
	AccessKey string
	// AccessKeyFile, when set, is the file AccessKey came from: after the
	// controller refuses the key, the CRM reads the file again before it
	// reconnects, so that a rotated key written into it takes effect
	// without a restart (ReadAccessKeyFile's rules apply).
	AccessKeyFile string
	// Platform does the work. Required.
	Platform executor.Platform
	// Instance names this process in the controller's logs; default
	// "<hostname>/<pid>".
	Instance string
	// Logger receives structured logs; nil discards them. Objects and the
	// access key are never logged.
	Logger *slog.Logger
	// Registerer receives the CRM's metrics; nil keeps them unexported.
	Registerer prometheus.Registerer
	// ReconnectMin and ReconnectMax bound the jittered, doubling pause
	// between connection attempts (defaults DefaultReconnectMin and
	// DefaultReconnectMax).
	ReconnectMin, ReconnectMax time.Duration
	// DeadAfter overrides how long a silent stream is kept (default: three
	// of the controller's keepalive intervals, DefaultDeadAfter before it
	// announced one).
	DeadAfter time.Duration
	// StopTimeout bounds the graceful stop: operations in flight get this
	// long to finish and their reports to be acknowledged (default
	// DefaultStopTimeout); past it they are cancelled (each reports its
	// error state, and is run again by a later request).
	StopTimeout time.Duration
	// ReportRetry is the pause before a report the controller could not
	// judge is sent again (default DefaultReportRetry).
	ReportRetry time.Duration
	// Workers is the engine's pool size (see executor.Config.Workers).
	Workers int
}

// CRM is the resource manager of one edge site: an executor.Engine fed by
// the controller's notify stream. Create it with New and run it with Start.
type CRM struct {
	cfg     Config
	log     *slog.Logger
	engine  *executor.Engine
	objs    *objects
	infos   *infos
	out     *outbox
	sub     *submitter
	metrics *metrics

	synced     chan struct{} // closed at the end of the first initial sync
	syncedOnce sync.Once
	// applied is the revision of the last SyncEnd or Update applied after
	// a sync (0 before the first sync ends): the next stream resumes from
	// it. Only the link's goroutine uses it.
	applied  int64
	bg       sync.WaitGroup // start-up reconciliation
	linkMu   sync.Mutex
	linkDown chan struct{} // closed while no synchronised stream is up
	draining chan struct{} // closed when the graceful stop begins
}

// infos are the caches of the CRM's reports.
type infos struct {
	cloudlets *executor.Cache[*edgeproto.CloudletInfo]
	clusters  *executor.Cache[*edgeproto.ClusterInstInfo]
	appInsts  *executor.Cache[*edgeproto.AppInstInfo]
	tpes      *executor.Cache[*edgeproto.TrustPolicyException]
	kinds     map[string]*infoKind // by object kind
}

// ErrConfig is matched by the errors of New about its Config.
var ErrConfig = errors.New("crm: bad configuration")

// New checks cfg and returns a CRM that is not running yet.
func New(cfg Config) (*CRM, error) {
	switch {
	case cfg.Controller == "":
		return nil, fmt.Errorf("%w: the controller's address is required", ErrConfig)
	case cfg.Cloudlet.GetOrganization() == "" || cfg.Cloudlet.GetName() == "":
		return nil, fmt.Errorf("%w: the cloudlet needs an organization and a name", ErrConfig)
	case cfg.AccessKey == "":
		return nil, fmt.Errorf("%w: the cloudlet's access key is required", ErrConfig)
	case cfg.Platform == nil:
		return nil, fmt.Errorf("%w: a platform is required", ErrConfig)
	}
	if cfg.ReconnectMin <= 0 {
		cfg.ReconnectMin = DefaultReconnectMin
	}
	if cfg.ReconnectMax < cfg.ReconnectMin {
		cfg.ReconnectMax = max(DefaultReconnectMax, cfg.ReconnectMin)
	}
	if cfg.StopTimeout <= 0 {
		cfg.StopTimeout = DefaultStopTimeout
	}
	if cfg.ReportRetry <= 0 {
		cfg.ReportRetry = DefaultReportRetry
	}
	if cfg.Instance == "" {
		host, _ := os.Hostname()
		cfg.Instance = host + "/" + strconv.Itoa(os.Getpid())
	}
	if cfg.DialOptions == nil {
		cfg.DialOptions = []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &CRM{cfg: cfg, log: log.With(slog.String("cloudlet", (&edgeproto.Cloudlet{Key: cfg.Cloudlet}).GetKeyString())),
		objs: newObjects(), synced: make(chan struct{}), draining: make(chan struct{}), linkDown: make(chan struct{})}
	close(c.linkDown)
	c.out = newOutbox(cfg.ReportRetry, c.objs.exists)
	in := &infos{
		cloudlets: executor.NewCache[*edgeproto.CloudletInfo](),
		clusters:  executor.NewCache[*edgeproto.ClusterInstInfo](),
		appInsts:  executor.NewCache[*edgeproto.AppInstInfo](),
		tpes:      executor.NewCache[*edgeproto.TrustPolicyException](),
	}
	cloudletKind := newInfoKind(in.cloudlets, edgeproto.CloudletInfoFieldState, func(i *edgeproto.CloudletInfo) bool {
		return i.GetState() == edgeproto.CloudletState_CLOUDLET_STATE_NOT_PRESENT
	})
	clusterKind := newInfoKind(in.clusters, edgeproto.ClusterInstInfoFieldState,
		func(i *edgeproto.ClusterInstInfo) bool { return trackedGone(i.GetState()) })
	appInstKind := newInfoKind(in.appInsts, edgeproto.AppInstInfoFieldState,
		func(i *edgeproto.AppInstInfo) bool { return trackedGone(i.GetState()) })
	// An exception's reports carry its instances entries: each report is a
	// phase of its own, so every entry state reaches the controller.
	tpeKind := newInfoKind(in.tpes, edgeproto.TrustPolicyExceptionFieldInstances, func(e *edgeproto.TrustPolicyException) bool {
		for _, i := range e.GetInstances() {
			if i.GetState() != edgeproto.TrackedState_TRACKED_STATE_DELETE_DONE {
				return false
			}
		}
		return true
	})
	in.kinds = map[string]*infoKind{"Cloudlet": cloudletKind, "ClusterInst": clusterKind, "AppInst": appInstKind, "TrustPolicyException": tpeKind}
	c.infos = in
	m, err := newMetrics(cfg.Registerer, func() float64 { return float64(c.out.pending()) })
	if err != nil {
		return nil, fmt.Errorf("crm: metrics: %w", err)
	}
	c.metrics = m
	eng, err := executor.New(executor.Config{
		Platform:              cfg.Platform,
		Objects:               c.objs.lookups(),
		CloudletInfos:         sender(c.out, in.cloudlets, cloudletKind),
		ClusterInstInfos:      sender(c.out, in.clusters, clusterKind),
		AppInstInfos:          sender(c.out, in.appInsts, appInstKind),
		TrustPolicyExceptions: sender(c.out, in.tpes, tpeKind),
		Workers:               cfg.Workers,
		Logger:                log,
	})
	if err != nil {
		return nil, fmt.Errorf("crm: %w", err)
	}
	c.engine = eng
	c.sub = newSubmitter(eng, c.log, m)
	return c, nil
}

// Engine returns the CRM's engine.
func (c *CRM) Engine() *executor.Engine { return c.engine }

// Synced is closed once the first initial sync ended: the CRM has its
// objects and submitted what they ask for.
func (c *CRM) Synced() <-chan struct{} { return c.synced }

// PendingReports is how many objects have Info changes the controller has
// not acknowledged yet.
func (c *CRM) PendingReports() int { return c.out.pending() }

// Start runs the CRM until ctx ends: it keeps a notify stream to the
// controller open (reconnecting with jittered back-off, resynchronising
// each time), submits every request to the engine and streams the engine's
// reports back. When ctx ends it stops gracefully: no new request is
// taken, operations in flight get Config.StopTimeout to finish and their
// reports to be acknowledged, then the engine and the stream stop.
func (c *CRM) Start(ctx context.Context) error {
	engCtx, stopEngine := context.WithCancel(context.WithoutCancel(ctx))
	linkCtx, stopLink := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	wg.Go(func() { _ = c.engine.Start(engCtx) })
	wg.Go(func() { c.link(linkCtx) })
	c.log.LogAttrs(ctx, slog.LevelInfo, "CRM started", slog.String("controller", c.cfg.Controller),
		slog.String("platform", c.cfg.Platform.Features().PlatformType))

	<-ctx.Done()
	close(c.draining)
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.cfg.StopTimeout)
	defer cancel()
	if err := c.engine.Wait(stopCtx); err != nil {
		c.log.LogAttrs(stopCtx, slog.LevelWarn, "operations still running at the stop timeout: cancelling them",
			slog.Duration("timeout", c.cfg.StopTimeout))
	}
	stopEngine()
	c.bg.Wait() // reconciliation returns once the engine stopped
	// Deliver what is left while the controller is reachable; reports it
	// never gets are rebuilt by the next start's reconciliation.
	select {
	case <-c.out.idleCh():
	case <-c.down():
		if n := c.out.pending(); n > 0 {
			c.log.LogAttrs(stopCtx, slog.LevelWarn, "stopping while the controller is unreachable: reports not delivered", slog.Int("objects", n))
		}
	case <-stopCtx.Done():
		c.log.LogAttrs(stopCtx, slog.LevelWarn, "reports not acknowledged at the stop timeout", slog.Int("objects", c.out.pending()))
	}
	stopLink()
	wg.Wait()
	c.log.LogAttrs(context.WithoutCancel(ctx), slog.LevelInfo, "CRM stopped")
	return nil
}

// up and down track whether a synchronised stream is up.
func (c *CRM) up() {
	c.linkMu.Lock()
	defer c.linkMu.Unlock()
	select {
	case <-c.linkDown:
		c.linkDown = make(chan struct{})
	default:
	}
}

func (c *CRM) setDown() {
	c.linkMu.Lock()
	defer c.linkMu.Unlock()
	select {
	case <-c.linkDown:
	default:
		close(c.linkDown)
	}
}

// down is closed while no synchronised stream is up.
func (c *CRM) down() <-chan struct{} {
	c.linkMu.Lock()
	defer c.linkMu.Unlock()
	return c.linkDown
}

// backoff returns the reconnection back-off of the CRM.
func (c *CRM) backoff() *notify.Backoff {
	return &notify.Backoff{Min: c.cfg.ReconnectMin, Max: c.cfg.ReconnectMax}
}
