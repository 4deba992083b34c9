package consumer

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/fluidos/rear"
	"github.com/edgekit/edgekit/internal/store"
)

// Defaults of Config.
const (
	DefaultPeerTimeout        = 5 * time.Second
	DefaultDiscoveryTimeout   = 30 * time.Second
	DefaultReservationTimeout = 30 * time.Second
	DefaultPurchaseTimeout    = 30 * time.Second
	DefaultAllocationTimeout  = 2 * time.Minute
	DefaultPollInterval       = 500 * time.Millisecond
	DefaultRenewInterval      = 10 * time.Second
)

// BoughtContractKind is the store kind of the contracts this node bought
// (the contracts it sold are of kind Contract).
const BoughtContractKind = "BoughtContract"

// Config configures a Consumer.
type Config struct {
	// Self is the buying node; its NodeId is required.
	Self *fluidos.NodeIdentity
	// Store keeps solvers, discoveries, candidates, reservations and the
	// contracts bought.
	Store *store.Store
	// Client speaks REAR to the peers.
	Client *rear.Client
	// Peers are the peers asked.
	Peers *Registry
	// PeerTimeout bounds each peer's answer to a discovery; default
	// DefaultPeerTimeout.
	PeerTimeout time.Duration
	// Timeouts of the solver phases, where a solver sets none; defaults
	// DefaultDiscoveryTimeout, DefaultReservationTimeout,
	// DefaultPurchaseTimeout, DefaultAllocationTimeout.
	DiscoveryTimeout, ReservationTimeout, PurchaseTimeout, AllocationTimeout time.Duration
	// PollInterval is how often a seller is asked for an allocation being
	// provisioned or released; default DefaultPollInterval.
	PollInterval time.Duration
	// RenewInterval is how often a contract in use is renewed, which also
	// tells this node how its seller finds what it delivered (sooner when
	// the contract's end is nearer); default DefaultRenewInterval.
	RenewInterval time.Duration
	// Logger; nil discards.
	Logger *slog.Logger
	// Metrics, when set, measures discoveries and solvers.
	Metrics *Metrics
}

// Consumer buys for the node. It is safe for concurrent use.
type Consumer struct {
	cfg          Config
	log          *slog.Logger
	solvers      *store.Kind[*fluidos.Solver]
	discoveries  *store.Kind[*fluidos.Discovery]
	candidates   *store.Kind[*fluidos.PeeringCandidate]
	reservations *store.Kind[*fluidos.Reservation]
	bought       *store.Kind[*fluidos.Contract]
	boughtAllocs *store.Kind[*fluidos.Allocation]
	kick         chan struct{} // a bought allocation needs the keeper

	mu      sync.Mutex
	ctx     context.Context // Start's; nil before Start
	running map[string]*runningSolver
	wg      sync.WaitGroup
}

// runningSolver is a solver's goroutine.
type runningSolver struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// New returns a consumer; run Start to run solvers.
func New(cfg Config) (*Consumer, error) {
	switch {
	case cfg.Self.GetNodeId() == "":
		return nil, errors.New("consumer: Config.Self needs a node ID")
	case cfg.Store == nil || cfg.Client == nil || cfg.Peers == nil:
		return nil, errors.New("consumer: Config.Store, Client and Peers are required")
	}
	defaults := []struct {
		d   *time.Duration
		def time.Duration
	}{
		{&cfg.PeerTimeout, DefaultPeerTimeout}, {&cfg.DiscoveryTimeout, DefaultDiscoveryTimeout},
		{&cfg.ReservationTimeout, DefaultReservationTimeout}, {&cfg.PurchaseTimeout, DefaultPurchaseTimeout},
		{&cfg.AllocationTimeout, DefaultAllocationTimeout}, {&cfg.PollInterval, DefaultPollInterval},
		{&cfg.RenewInterval, DefaultRenewInterval},
	}
	for _, d := range defaults {
		if *d.d <= 0 {
			*d.d = d.def
		}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Consumer{
		cfg:          cfg,
		log:          cfg.Logger,
		solvers:      store.NewKind[*fluidos.Solver](cfg.Store),
		discoveries:  store.NewKind[*fluidos.Discovery](cfg.Store),
		candidates:   store.NewKind[*fluidos.PeeringCandidate](cfg.Store),
		reservations: store.NewKind[*fluidos.Reservation](cfg.Store),
		bought:       store.NewKind[*fluidos.Contract](cfg.Store, store.KindName(BoughtContractKind)),
		boughtAllocs: store.NewKind[*fluidos.Allocation](cfg.Store, store.KindName(BoughtAllocationKind)),
		kick:         make(chan struct{}, 1),
		running:      map[string]*runningSolver{},
	}, nil
}

// Peers is the consumer's peer registry.
func (c *Consumer) Peers() *Registry { return c.cfg.Peers }

// Solvers are the solvers, for reading and watching.
func (c *Consumer) Solvers() *store.Kind[*fluidos.Solver] { return c.solvers }

// Discoveries are the discoveries run.
func (c *Consumer) Discoveries() *store.Kind[*fluidos.Discovery] { return c.discoveries }

// Candidates are the peering candidates found.
func (c *Consumer) Candidates() *store.Kind[*fluidos.PeeringCandidate] { return c.candidates }

// Reservations are the reservations made.
func (c *Consumer) Reservations() *store.Kind[*fluidos.Reservation] { return c.reservations }

// BoughtContracts are the contracts this node bought.
func (c *Consumer) BoughtContracts() *store.Kind[*fluidos.Contract] { return c.bought }

// Start resumes the solvers left unfinished, then runs the solvers created
// until ctx ends, and follows the allocations of what the node bought
// (renewing and releasing their contracts); it waits for its goroutines
// and returns ctx's error. Solvers interrupted by the end of ctx stay
// RUNNING and resume at the next Start.
func (c *Consumer) Start(ctx context.Context) error {
	c.mu.Lock()
	c.ctx = ctx
	c.mu.Unlock()
	if err := c.rekey(ctx); err != nil && ctx.Err() == nil {
		// What is not re-stored is still followed under its old id.
		c.log.ErrorContext(ctx, "re-storing contracts bought under their seller's id", "err", err)
	}
	c.wg.Go(func() { c.keep(ctx) })
	solvers, _, err := c.solvers.List(ctx)
	if err != nil {
		c.log.WarnContext(ctx, "listing solvers to resume", "err", err)
	}
	for _, s := range solvers {
		if !finished(s) {
			c.launch(s.GetId())
		}
	}
	<-ctx.Done()
	c.wg.Wait()
	c.mu.Lock()
	c.ctx = nil
	c.mu.Unlock()
	return ctx.Err()
}

// launch runs a solver's goroutine unless one runs already or the
// consumer is not started (Start will resume it).
func (c *Consumer) launch(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ctx == nil || c.ctx.Err() != nil || c.running[id] != nil {
		return
	}
	ctx, cancel := context.WithCancel(c.ctx)
	r := &runningSolver{cancel: cancel, done: make(chan struct{})}
	c.running[id] = r
	c.wg.Go(func() {
		defer func() {
			cancel()
			c.mu.Lock()
			delete(c.running, id)
			c.mu.Unlock()
			close(r.done)
		}()
		c.run(ctx, id)
	})
}

// stop cancels a solver's goroutine, if it runs, and waits for it to end
// (or ctx to).
func (c *Consumer) stop(ctx context.Context, id string) error {
	c.mu.Lock()
	r := c.running[id]
	c.mu.Unlock()
	if r == nil {
		return nil
	}
	r.cancel()
	select {
	case <-r.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// finished reports whether a solver reached a final state.
func finished(s *fluidos.Solver) bool {
	p := s.GetStatus().GetSolverPhase()
	return p == fluidos.Phase_PHASE_SOLVED || p == fluidos.Phase_PHASE_FAILED || p == fluidos.Phase_PHASE_TIMED_OUT
}
