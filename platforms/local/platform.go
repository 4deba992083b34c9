package local

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
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
	// instance the platform manages lives under it. Required. Several
	// platforms, in this process or others, may use it at once: each
	// operation locks the objects it works on (see the package doc), and
	// a platform adopts the processes another one started and recorded
	// there.
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
// processes on this host. It implements executor.Platform and
// executor.InventoryPlatform. Its methods are safe for concurrent use,
// also beside other Platforms over the same state directory.
type Platform struct {
	cfg Config
	log *slog.Logger
	key []byte // the state directory's key (config hashes)
	id  string // rootID(key): the prefix of every process marker
	// tag is random per Platform and part of the names of the temporary
	// files it writes. Records are written under their object's
	// exclusive lock, so a temporary file of a record found by the
	// holder of that lock without its tag is the leftover of a write that
	// a kill interrupted.
	tag    string
	closed atomic.Bool
	locks  lockTable
	// hook, when set (by tests), is called at named points of an
	// operation, so a test can stop or kill the engine at an exact instant.
	hook func(point string)
	// signalHook, when set (by tests), receives every signal instead of
	// the process: kill(2) for groups (negative pid), the pidfd for single
	// processes. The guard runs before it.
	signalHook func(pid int, sig syscall.Signal) error
}

var (
	_ executor.Platform          = (*Platform)(nil)
	_ executor.InventoryPlatform = (*Platform)(nil)
	_ io.Closer                  = (*Platform)(nil)
)

// New returns a local platform over cfg.Root, creating the directory if
// needed. It holds no lock on the directory once it returns: other
// platforms over the same directory may be open at the same time (see
// the package doc).
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
	for _, name := range cfg.InheritEnv {
		if name == MarkerEnv {
			return nil, fmt.Errorf("%w: InheritEnv names %s, which the platform sets itself", ErrInvalidConfig, MarkerEnv)
		}
	}
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, fmt.Errorf("%w: Root %q: %w", ErrInvalidConfig, root, err)
	}
	key, err := prepareRoot(root)
	if err != nil {
		return nil, err
	}
	tag := make([]byte, 8)
	if _, err := rand.Read(tag); err != nil {
		return nil, fmt.Errorf("%w: generating a tag: %w", ErrInvalidConfig, err)
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Platform{cfg: cfg, log: log.With("platform", PlatformType), key: key, id: rootID(key), tag: hex.EncodeToString(tag), locks: lockTable{dir: filepath.Join(root, locksDir)}}, nil
}

// Close makes later calls fail with ErrClosed; the locks of operations
// still running are released when they end. The processes the platform
// started keep running (another Platform over the directory adopts them).
// Closing twice is a no-op.
func (p *Platform) Close() error {
	p.closed.Store(true)
	return nil
}

// enter fails once the platform is closed.
func (p *Platform) enter() error {
	if p.closed.Load() {
		return ErrClosed
	}
	return nil
}

// Points of an operation at which the test hook is called.
const (
	hookBegin           = "operation: before the object's locks"
	hookAppIntent       = "app: launch recorded, process not started"
	hookAppStarted      = "app: process started, not recorded"
	hookAppRecorded     = "app: process recorded, not healthy yet"
	hookAppStopped      = "app: processes stopped, directory not removed"
	hookClusterIntent   = "cluster: record written, range not reserved"
	hookClusterDeleting = "cluster: marked deleting, processes not stopped"
	// hookTempWritten, followed by a file name (hookTempWritten +
	// clusterFile), is the point where a record's temporary file is
	// written and not yet renamed.
	hookTempWritten = "temporary file written, not renamed: "
)

// at calls the test hook, if any, at a named point.
func (p *Platform) at(point string) {
	if p.hook != nil {
		p.hook(point)
	}
}

// Root returns the absolute state directory.
func (p *Platform) Root() string { return p.cfg.Root }

// Features reports what the local platform supports.
func (p *Platform) Features() executor.Features {
	return executor.Features{PlatformType: PlatformType}
}

func step(pr executor.Progress, msg string) {
	if pr != nil {
		pr.Step(msg)
	}
}
