package local

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/edgekit/edgekit/executor"
)

// PlatformType is the registry name of the local platform.
const PlatformType = "local"

// Defaults of Config.
const (
	DefaultStopGrace      = 10 * time.Second
	DefaultPortMin        = 20000
	DefaultPortMax        = 29999
	DefaultPortRangeSize  = 100
	DefaultHealthInterval = 100 * time.Millisecond
	DefaultHealthTimeout  = 60 * time.Second
)

// Config configures a local platform.
type Config struct {
	// Root is the state directory: every cloudlet, cluster and application
	// instance the platform manages lives under it. Required. Two
	// platforms over the same Root see (and adopt) the same processes.
	Root string
	// Logger receives structured logs; nil discards them.
	Logger *slog.Logger
	// StopGrace is how long a process may take to exit after SIGTERM
	// before its process group gets SIGKILL. 0 means DefaultStopGrace.
	StopGrace time.Duration
	// PortMin and PortMax bound (inclusive) the ports handed to clusters.
	// 0 means DefaultPortMin / DefaultPortMax. Keep them, and
	// PortRangeSize, unchanged while clusters exist: ranges are cut on a
	// grid starting at PortMin.
	PortMin, PortMax int
	// PortRangeSize is the number of ports each cluster reserves. 0 means
	// DefaultPortRangeSize.
	PortRangeSize int
	// HealthInterval is the pause between two health probes. 0 means
	// DefaultHealthInterval.
	HealthInterval time.Duration
	// HealthTimeout bounds the wait for a health check when the context
	// has no deadline. 0 means DefaultHealthTimeout.
	HealthTimeout time.Duration
	// InheritEnv names the variables of this process's environment that
	// application processes inherit. nil means just PATH; an empty,
	// non-nil slice means none. Nothing else of this process's
	// environment reaches an application.
	InheritEnv []string
}

// Platform runs clusters as directories and application instances as
// processes on this host. It implements executor.Platform. Its methods are
// safe for concurrent use.
type Platform struct {
	cfg   Config
	log   *slog.Logger
	locks keyLocks
}

var _ executor.Platform = (*Platform)(nil)

// New returns a local platform over cfg.Root, creating the directory if
// needed.
func New(cfg Config) (*Platform, error) {
	if cfg.Root == "" {
		return nil, fmt.Errorf("%w: Root is empty", ErrInvalidConfig)
	}
	root, err := filepath.Abs(cfg.Root)
	if err != nil {
		return nil, fmt.Errorf("%w: Root %q: %w", ErrInvalidConfig, cfg.Root, err)
	}
	cfg.Root = root
	if cfg.StopGrace <= 0 {
		cfg.StopGrace = DefaultStopGrace
	}
	if cfg.PortMin == 0 {
		cfg.PortMin = DefaultPortMin
	}
	if cfg.PortMax == 0 {
		cfg.PortMax = DefaultPortMax
	}
	if cfg.PortRangeSize == 0 {
		cfg.PortRangeSize = DefaultPortRangeSize
	}
	if cfg.HealthInterval <= 0 {
		cfg.HealthInterval = DefaultHealthInterval
	}
	if cfg.HealthTimeout <= 0 {
		cfg.HealthTimeout = DefaultHealthTimeout
	}
	if cfg.InheritEnv == nil {
		cfg.InheritEnv = []string{"PATH"}
	}
	if cfg.PortMin < 1 || cfg.PortMax > 65535 || cfg.PortMin > cfg.PortMax {
		return nil, fmt.Errorf("%w: port bounds %d-%d", ErrInvalidConfig, cfg.PortMin, cfg.PortMax)
	}
	if cfg.PortRangeSize < 1 || cfg.PortRangeSize > cfg.PortMax-cfg.PortMin+1 {
		return nil, fmt.Errorf("%w: PortRangeSize %d does not fit in %d-%d", ErrInvalidConfig, cfg.PortRangeSize, cfg.PortMin, cfg.PortMax)
	}
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, fmt.Errorf("%w: Root %q: %w", ErrInvalidConfig, root, err)
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Platform{cfg: cfg, log: log.With("platform", PlatformType)}, nil
}

// Root returns the absolute state directory.
func (p *Platform) Root() string { return p.cfg.Root }

// Features reports what the local platform supports.
func (p *Platform) Features() executor.Features {
	return executor.Features{PlatformType: PlatformType}
}

// keyLocks serialises operations on one key (a cluster, an application
// instance) within one Platform.
type keyLocks struct {
	mu    sync.Mutex
	locks map[string]chan struct{}
}

// lock waits for key's lock or for ctx to end; the returned function
// releases it.
func (k *keyLocks) lock(ctx context.Context, key string) (func(), error) {
	k.mu.Lock()
	if k.locks == nil {
		k.locks = map[string]chan struct{}{}
	}
	ch, ok := k.locks[key]
	if !ok {
		ch = make(chan struct{}, 1)
		k.locks[key] = ch
	}
	k.mu.Unlock()
	select {
	case ch <- struct{}{}:
		return func() { <-ch }, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for lock on %s: %w", key, ctx.Err())
	}
}

func step(pr executor.Progress, msg string) {
	if pr != nil {
		pr.Step(msg)
	}
}
