package provider

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/fluidos/rear"
	"github.com/edgekit/edgekit/internal/store"
)

// Defaults of Config.
const (
	DefaultReservationTTL = time.Hour
	DefaultContractLease  = 10 * time.Minute
	DefaultPods           = 110
)

// ContractHandler is told of each contract the provider makes, once it is
// stored. A contract made just before a crash may not be told: a handler
// that must see every contract lists them at start.
type ContractHandler interface {
	ContractMade(ctx context.Context, c *fluidos.Contract)
}

// ContractHandlerFunc adapts a function to ContractHandler.
type ContractHandlerFunc func(ctx context.Context, c *fluidos.Contract)

// ContractMade calls f.
func (f ContractHandlerFunc) ContractMade(ctx context.Context, c *fluidos.Contract) { f(ctx, c) }

var _ ContractHandler = ContractHandlerFunc(nil)

// Config configures a Provider.
type Config struct {
	// Self is the node: owner of the flavors, seller of the contracts. Its
	// NodeId is required.
	Self *fluidos.NodeIdentity
	// Store keeps flavors, blueprints, transactions and contracts.
	Store *store.Store
	// Capacity is what the K8Slice flavor sells; nil publishes none.
	Capacity CapacitySource
	// Policy is how the K8Slice flavor may be split; nil sells it whole.
	Policy *fluidos.Partitionability
	// K8SlicePrice is the price of the K8Slice flavor.
	K8SlicePrice *fluidos.Price
	// Location of the flavors; nil for none.
	Location *fluidos.Location
	// Flavors are published as they are, beside the K8Slice and Service
	// flavors (VM and Sensor flavors); their owner is set to Self.
	Flavors []*fluidos.Flavor
	// ReservationTTL is how long a reservation holds; default
	// DefaultReservationTTL.
	ReservationTTL time.Duration
	// ContractLease is how long a contract lasts after its purchase and
	// after each renewal by its buyer; default DefaultContractLease.
	ContractLease time.Duration
	// Contracts is told of new contracts; nil for nobody.
	Contracts ContractHandler
	// Allocator provisions what is sold; nil provisions nothing (every
	// allocation stays INACTIVE). One that is also a KubeconfigIssuer has
	// the purchase of what it issues a kubeconfig for answered with it.
	Allocator Allocator
	// KubeconfigWait bounds how long a purchase answer waits for the
	// kubeconfig of its allocation (KubeconfigIssuer) before it goes
	// without; default DefaultKubeconfigWait.
	KubeconfigWait time.Duration
	// BuyerSeen, when set, is called with the identity of each buyer whose
	// certificate vouched for a reservation (a node to learn as a peer).
	BuyerSeen func(buyer *fluidos.NodeIdentity)
	// Logger; nil discards.
	Logger *slog.Logger
	// Metrics, when set, counts the provider's work.
	Metrics *Metrics
}

// Provider sells the node's flavors. It is safe for concurrent use.
type Provider struct {
	cfg         Config
	log         *slog.Logger
	flavors     *store.Kind[*fluidos.Flavor]
	open        *store.Kind[*fluidos.Transaction] // reserved, not yet bought or expired
	txns        *store.Kind[*fluidos.Transaction] // closed: purchased, expired, released
	contracts   *store.Kind[*fluidos.Contract]
	allocations *store.Kind[*fluidos.Allocation]
	blueprints  *store.Kind[*fluidos.ServiceBlueprint]

	wake chan struct{} // a reservation was made: the expiry timer re-plans

	mu        sync.Mutex
	templates map[string]*rear.Template // compiled, by template text
}

// New returns a provider; call Sync before serving, and run Start for
// expiries.
func New(cfg Config) (*Provider, error) {
	if cfg.Self.GetNodeId() == "" {
		return nil, errors.New("provider: Config.Self needs a node ID")
	}
	if cfg.Store == nil {
		return nil, errors.New("provider: Config.Store is required")
	}
	if cfg.ReservationTTL <= 0 {
		cfg.ReservationTTL = DefaultReservationTTL
	}
	if cfg.ContractLease <= 0 {
		cfg.ContractLease = DefaultContractLease
	}
	if cfg.KubeconfigWait <= 0 {
		cfg.KubeconfigWait = DefaultKubeconfigWait
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Provider{
		cfg:         cfg,
		log:         cfg.Logger,
		flavors:     store.NewKind[*fluidos.Flavor](cfg.Store),
		open:        store.NewKind[*fluidos.Transaction](cfg.Store, store.KindName(OpenTransactionKind)),
		txns:        store.NewKind[*fluidos.Transaction](cfg.Store),
		contracts:   store.NewKind[*fluidos.Contract](cfg.Store),
		allocations: store.NewKind[*fluidos.Allocation](cfg.Store),
		blueprints:  store.NewKind[*fluidos.ServiceBlueprint](cfg.Store),
		wake:        make(chan struct{}, 1),
		templates:   map[string]*rear.Template{},
	}, nil
}

// Self is the node the provider sells as.
func (p *Provider) Self() *fluidos.NodeIdentity { return p.cfg.Self }

// Flavors lists every flavor the provider publishes, available or not.
func (p *Provider) Flavors(ctx context.Context) ([]*fluidos.Flavor, error) {
	fs, _, err := p.flavors.List(ctx)
	return fs, err
}

// Flavor returns one flavor.
func (p *Provider) Flavor(ctx context.Context, id string) (*fluidos.Flavor, error) {
	f, _, err := p.flavors.Get(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("%w: %q", ErrFlavorNotFound, id)
	}
	return f, err
}

// OpenTransactionKind is the store kind of reserved transactions; a
// transaction moves to kind Transaction when it is bought, expires or is
// released, so that a reservation looks only at the open ones.
const OpenTransactionKind = "OpenTransaction"

// Transactions lists every transaction, open ones first.
func (p *Provider) Transactions(ctx context.Context) ([]*fluidos.Transaction, error) {
	open, _, err := p.open.List(ctx)
	if err != nil {
		return nil, err
	}
	closed, _, err := p.txns.List(ctx)
	return append(open, closed...), err
}

// Contracts lists the contracts the provider made.
func (p *Provider) Contracts(ctx context.Context) ([]*fluidos.Contract, error) {
	cs, _, err := p.contracts.List(ctx)
	return cs, err
}

// Contract returns one contract the provider made.
func (p *Provider) Contract(ctx context.Context, id string) (*fluidos.Contract, error) {
	c, _, err := p.contracts.Get(ctx, id)
	return c, err
}

// checkServiceConfiguration validates a service configuration (nil: none)
// against the flavor's template, compiled once per template text.
func (p *Provider) checkServiceConfiguration(f *fluidos.Flavor, sc *fluidos.ServiceConfiguration) error {
	s := f.GetService()
	text := s.GetConfigurationTemplate()
	if text == "" {
		raw, err := rear.TemplateOf(s.GetConfigurationSchema())
		if err != nil {
			return err
		}
		text = string(raw)
	}
	p.mu.Lock()
	tmpl := p.templates[text]
	p.mu.Unlock()
	if tmpl == nil {
		var err error
		if tmpl, err = rear.CompileTemplate([]byte(text)); err != nil {
			return fmt.Errorf("flavor %q: %w", f.GetId(), err)
		}
		p.mu.Lock()
		if len(p.templates) > 1024 {
			clear(p.templates)
		}
		p.templates[text] = tmpl
		p.mu.Unlock()
	}
	data, err := rear.ConfigurationData(sc, s.GetConfigurationSchema())
	if err != nil {
		return err
	}
	return tmpl.Validate(data)
}
