package platforms

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/edgekit/edgekit/executor"
)

// Config is what a Factory gets to build a platform.
type Config struct {
	// Logger receives the platform's structured logs; nil discards them.
	Logger *slog.Logger
	// Dir is a directory the platform may keep files in (working
	// directories, logs, records of what it started); "" lets the platform
	// choose or keep nothing on disk.
	Dir string
	// Properties are platform-specific settings (for example a cloudlet's
	// env_vars); each platform documents the ones it reads and ignores the
	// others.
	Properties map[string]string
	// AccessVars are the cloudlet's access variables (credentials such as
	// a kubeconfig): secrets, which a platform never logs nor returns in
	// an error.
	AccessVars map[string]string
}

// Factory builds a platform from cfg.
type Factory func(cfg Config) (executor.Platform, error)

// ErrUnknownPlatform is matched by every *UnknownPlatformError.
var ErrUnknownPlatform = errors.New("unknown platform type")

// UnknownPlatformError says that no platform is registered under Name.
type UnknownPlatformError struct {
	Name  string
	Known []string // registered names, sorted
}

// Error names the unknown type and lists the known ones.
func (e *UnknownPlatformError) Error() string {
	return fmt.Sprintf("%v %q (known: %s)", ErrUnknownPlatform, e.Name, strings.Join(e.Known, ", "))
}

// Is matches ErrUnknownPlatform.
func (e *UnknownPlatformError) Is(target error) bool { return target == ErrUnknownPlatform }

var (
	mu        sync.RWMutex
	factories = map[string]Factory{}
)

// Register makes a platform available under name. It panics when name is
// empty, f is nil or name is registered already: registrations happen in
// init functions, where these are programming errors.
func Register(name string, f Factory) {
	if name == "" || f == nil {
		panic("platforms: Register needs a name and a factory")
	}
	mu.Lock()
	defer mu.Unlock()
	if _, dup := factories[name]; dup {
		panic("platforms: platform registered twice: " + name)
	}
	factories[name] = f
}

// New builds the platform registered under name.
func New(name string, cfg Config) (executor.Platform, error) {
	mu.RLock()
	f, ok := factories[name]
	mu.RUnlock()
	if !ok {
		return nil, &UnknownPlatformError{Name: name, Known: Names()}
	}
	p, err := f(cfg)
	if err != nil {
		return nil, fmt.Errorf("platform %q: %w", name, err)
	}
	return p, nil
}

// Names lists the registered platform names, sorted.
func Names() []string {
	mu.RLock()
	defer mu.RUnlock()
	return slices.Sorted(maps.Keys(factories))
}
