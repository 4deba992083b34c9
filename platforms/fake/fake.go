package fake

import (
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/platforms"
)

// Name is the registry name of the platform.
const Name = "fake"

func init() {
	platforms.Register(Name, func(cfg platforms.Config) (executor.Platform, error) {
		return New(Options{Logger: cfg.Logger}), nil
	})
}

// Options configure a Platform; the zero value is usable.
type Options struct {
	// Flavors offered by every cloudlet; empty uses DefaultFlavors().
	Flavors []*edgeproto.FlavorInfo
	// Capacity per resource of every cloudlet; missing resources use
	// DefaultCapacity.
	Capacity map[string]uint64
	// Latency of every operation (see SetLatency).
	Latency time.Duration
	// NoTrustPolicy makes the platform report that it does not support
	// trust policies.
	NoTrustPolicy bool
	// Logger receives debug logs of every call (keys only); nil discards.
	Logger *slog.Logger
}

// Platform is the fake platform. It is safe for concurrent use.
type Platform struct {
	log      *slog.Logger
	flavors  []*edgeproto.FlavorInfo
	capacity usage
	features executor.Features

	mu        sync.Mutex
	cloudlets map[string]*cloudletRec
	clusters  map[string]*clusterRec
	apps      map[string]*appRec
	tpes      map[tpeKey]*edgeproto.TrustPolicyException

	faults  []*fault
	latency map[Op]time.Duration
	gates   []*Gate
	calls   map[callKey]int
	stats   map[string]*KeyStats
}

var _ executor.Platform = (*Platform)(nil)

type cloudletRec struct {
	policy *edgeproto.TrustPolicy
}

type clusterRec struct {
	cloudlet string
	obj      *edgeproto.ClusterInst
	usage    usage
	subnet   string
	creating bool // a create started and did not finish
}

type appRec struct {
	obj      *edgeproto.AppInst // the keys of the instance
	cluster  string
	cloudlet string
	power    edgeproto.PowerState
	ports    []uint32
	reboots  int
	creating bool              // a create started and did not finish
	env      map[string]string // the App's environment as the platform gave it to the instance, secrets included
}

// New returns an empty fake platform.
func New(opts Options) *Platform {
	p := &Platform{
		log:       opts.Logger,
		flavors:   opts.Flavors,
		capacity:  usage{},
		cloudlets: map[string]*cloudletRec{},
		clusters:  map[string]*clusterRec{},
		apps:      map[string]*appRec{},
		tpes:      map[tpeKey]*edgeproto.TrustPolicyException{},
		latency:   map[Op]time.Duration{},
		calls:     map[callKey]int{},
		stats:     map[string]*KeyStats{},
		features: executor.Features{
			PlatformType:               Name,
			SupportsMultiTenantCluster: true,
			SupportsTrustPolicy:        !opts.NoTrustPolicy,
		},
	}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	if len(p.flavors) == 0 {
		p.flavors = DefaultFlavors()
	}
	for r, v := range DefaultCapacity {
		p.capacity[r] = v
	}
	maps.Copy(p.capacity, opts.Capacity)
	if opts.Latency > 0 {
		p.latency[OpAny] = opts.Latency
	}
	return p
}

// Features implements executor.FeatureReporter.
func (p *Platform) Features() executor.Features { return p.features }

// CloudletInitialized reports whether InitCloudlet ran for the cloudlet with
// key and CleanupCloudlet did not since.
func (p *Platform) CloudletInitialized(key string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.cloudlets[key]
	return ok
}

// TrustPolicy returns the trust policy applied to a cloudlet (nil: none).
func (p *Platform) TrustPolicy(cloudlet string) *edgeproto.TrustPolicy {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c := p.cloudlets[cloudlet]; c != nil {
		return c.policy.Clone()
	}
	return nil
}

// Cluster returns a clone of the cluster with key as last created or
// updated, and whether it exists.
func (p *Platform) Cluster(key string) (*edgeproto.ClusterInst, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	c, ok := p.clusters[key]
	if !ok {
		return nil, false
	}
	return c.obj.Clone(), true
}

// AppInstState is what the fake holds for an application instance.
type AppInstState struct {
	Cluster string
	Power   edgeproto.PowerState
	Ports   []uint32
	Reboots int
	// Env is the environment the instance was given (secret values
	// included, as a real platform hands them to its workload).
	Env map[string]string
}

// AppInst returns the state of the instance with key, and whether it exists.
func (p *Platform) AppInst(key string) (AppInstState, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	a, ok := p.apps[key]
	if !ok {
		return AppInstState{}, false
	}
	return AppInstState{Cluster: a.cluster, Power: a.power, Ports: slices.Clone(a.ports), Reboots: a.reboots, Env: maps.Clone(a.env)}, true
}

// AppInstKeys returns the keys of the instances the fake holds, sorted.
func (p *Platform) AppInstKeys() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Sorted(maps.Keys(p.apps))
}

// Usage returns what the clusters of a cloudlet use, per resource.
func (p *Platform) Usage(cloudlet string) map[string]uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.usedLocked(cloudlet, "")
}

// tpeKey names an exception applied to one instance in one cluster, by
// key strings.
type tpeKey struct{ exc, cluster, inst string }

// HasTrustPolicyException reports whether the exception with key is applied
// to any instance in the cluster with key.
func (p *Platform) HasTrustPolicyException(exc, cluster string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for k := range p.tpes {
		if k.exc == exc && k.cluster == cluster {
			return true
		}
	}
	return false
}

// Counts returns how many clusters and application instances exist.
func (p *Platform) Counts() (clusters, appInsts int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.clusters), len(p.apps)
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
