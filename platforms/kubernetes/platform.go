package kubernetes

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	k8s "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/platforms"
)

// PlatformType is the name the platform registers under.
const PlatformType = "kubernetes"

// AccessVarKubeconfig is the cloudlet access variable holding the
// kubeconfig (the file's content, not a path) of the cloudlet's cluster.
const AccessVarKubeconfig = "KUBECONFIG"

// FieldManager is the server-side apply field manager of every write.
const FieldManager = "edgekit"

// Config configures a Platform.
type Config struct {
	// Kubeconfig is used for a cloudlet whose access variables carry no
	// kubeconfig and that no earlier call named one for; when it is empty
	// too, the in-cluster configuration is used (a host running in a pod).
	// It is a secret: never logged.
	Kubeconfig []byte
	// Logger receives the platform's logs; nil discards them.
	Logger *slog.Logger
	// ProgressDeadline is the progressDeadlineSeconds of the Deployments
	// the platform writes: a rollout that makes no progress for that long
	// fails with the Deployment's ProgressDeadlineExceeded condition
	// (ErrRollout). 0 means nine tenths of the time the operation has left
	// (its context's deadline, which the engine sets from its timeouts),
	// at least 10 s; Kubernetes' default (600 s) when it has none.
	ProgressDeadline time.Duration
	// QPS and Burst of the client; 0 means 50 and 100.
	QPS   float32
	Burst int
}

// Platform drives one or more Kubernetes clusters, one per cloudlet. It
// keeps no state of its own beyond clients built from kubeconfigs.
type Platform struct {
	cfg Config
	log *slog.Logger

	mu    sync.Mutex
	conns map[string]*conn // by cloudlet key string
}

var (
	_ executor.Platform                   = (*Platform)(nil)
	_ executor.InventoryPlatform          = (*Platform)(nil)
	_ executor.ClusterCredentialsPlatform = (*Platform)(nil)
)

// conn is the clients of one cluster, or why they could not be built.
type conn struct {
	fp  [32]byte // hash of the kubeconfig it was built from
	rc  *rest.Config
	cs  k8s.Interface
	dyn dynamic.Interface
	err error // set instead of cs and dyn
	// mapper resolves the kinds of a manifest through discovery.
	mapper *restmapper.DeferredDiscoveryRESTMapper
}

// New returns a platform configured by cfg.
func New(cfg Config) (*Platform, error) {
	if cfg.QPS <= 0 {
		cfg.QPS = 50
	}
	if cfg.Burst <= 0 {
		cfg.Burst = 100
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Platform{cfg: cfg, log: log, conns: map[string]*conn{}}, nil
}

func init() {
	platforms.Register(PlatformType, func(rc platforms.Config) (executor.Platform, error) {
		c := Config{Logger: rc.Logger}
		if kc := rc.AccessVars[AccessVarKubeconfig]; kc != "" {
			c.Kubeconfig = []byte(kc)
		}
		return New(c)
	})
}

// Features reports a single cluster per cloudlet, multi-tenant (one
// namespace per ClusterInst) and trust policies.
func (p *Platform) Features() executor.Features {
	return executor.Features{
		PlatformType:               PlatformType,
		SupportsMultiTenantCluster: true,
		SupportsTrustPolicy:        true,
		IsSingleKubernetesCluster:  true,
	}
}

// connFor returns the clients of cloudlet's cluster: from its access
// variables when it carries a kubeconfig, else the clients an earlier call
// built for the same cloudlet, else from Config.Kubeconfig, else
// in-cluster. A cloudlet may carry no kubeconfig because the engine knows
// only its key (the delete of what a gone cloudlet had).
func (p *Platform) connFor(cloudlet *edgeproto.Cloudlet) (*conn, error) {
	return p.conn(cloudlet.GetKey(), []byte(cloudlet.GetAccessVars()[AccessVarKubeconfig]), false)
}

// initConn is connFor for InitCloudlet, which the engine runs with the
// cloudlet as its host has it whenever the cloudlet changes: what the
// cloudlet carries is authoritative. Clients built from a kubeconfig it
// no longer carries (replaced or removed) are dropped; when the new ones
// cannot be built, every later call that does not bring a kubeconfig
// fails with the same error, until a call builds usable ones.
func (p *Platform) initConn(cloudlet *edgeproto.Cloudlet) (*conn, error) {
	return p.conn(cloudlet.GetKey(), []byte(cloudlet.GetAccessVars()[AccessVarKubeconfig]), true)
}

// connByKey is connFor for calls that only know the cloudlet's key.
func (p *Platform) connByKey(key *edgeproto.CloudletKey) (*conn, error) {
	return p.conn(key, nil, false)
}

// conn returns the clients of the cloudlet of key built from kubeconfig;
// an empty one means the clients already built for the cloudlet (unless
// replace is set), else those of Config.Kubeconfig, else of the
// in-cluster configuration. With replace, a failure to build them is
// remembered in their place.
func (p *Platform) conn(key *edgeproto.CloudletKey, kubeconfig []byte, replace bool) (*conn, error) {
	id := executor.KeyString(key)
	p.mu.Lock()
	defer p.mu.Unlock()
	cur := p.conns[id]
	if len(kubeconfig) == 0 {
		if cur != nil && !replace {
			if cur.err != nil {
				return nil, cur.err
			}
			return cur, nil
		}
		kubeconfig = p.cfg.Kubeconfig
	}
	var fp [32]byte
	if len(kubeconfig) > 0 {
		fp = sha256.Sum256(kubeconfig)
	}
	if cur != nil && cur.err == nil && cur.fp == fp {
		return cur, nil
	}
	c, err := p.build(id, kubeconfig)
	if err != nil {
		if replace {
			p.conns[id] = &conn{fp: fp, err: err}
		}
		return nil, err
	}
	c.fp = fp
	p.conns[id] = c
	return c, nil
}

// build builds the clients of cloudlet id from kubeconfig, or from the
// in-cluster configuration when it is empty.
func (p *Platform) build(id string, kubeconfig []byte) (*conn, error) {
	var rc *rest.Config
	var err error
	if len(kubeconfig) > 0 {
		// The parse error may quote the kubeconfig: it is not passed on.
		if rc, err = clientcmd.RESTConfigFromKubeConfig(kubeconfig); err != nil {
			return nil, fmt.Errorf("%w: cloudlet %s: access variable %s is not a usable kubeconfig", ErrAccess, id, AccessVarKubeconfig)
		}
	} else if rc, err = rest.InClusterConfig(); err != nil {
		if errors.Is(err, rest.ErrNotInCluster) {
			return nil, fmt.Errorf("%w: cloudlet %s has no access variable %s and the platform runs outside a cluster", ErrAccess, id, AccessVarKubeconfig)
		}
		return nil, fmt.Errorf("%w: cloudlet %s: in-cluster configuration: %v", ErrAccess, id, err)
	}
	rc.QPS, rc.Burst = p.cfg.QPS, p.cfg.Burst
	rc.UserAgent = "edgekit"
	c := &conn{rc: rc}
	if c.cs, err = k8s.NewForConfig(rc); err != nil {
		return nil, fmt.Errorf("%w: cloudlet %s: %v", ErrAccess, id, err)
	}
	if c.dyn, err = dynamic.NewForConfig(rc); err != nil {
		return nil, fmt.Errorf("%w: cloudlet %s: %v", ErrAccess, id, err)
	}
	c.mapper = restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(c.cs.Discovery()))
	return c, nil
}

// forget drops the clients of a cloudlet.
func (p *Platform) forget(key *edgeproto.CloudletKey) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.conns, executor.KeyString(key))
}

func step(p executor.Progress, msg string) {
	if p != nil {
		p.Step(msg)
	}
}

// ctxErr maps a context error to the engine's sentinels.
func ctxErr(ctx context.Context) error {
	switch {
	case ctx.Err() == nil:
		return nil
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("%w: %w", executor.ErrTimeout, ctx.Err())
	default:
		return fmt.Errorf("%w: %w", executor.ErrCanceled, ctx.Err())
	}
}
