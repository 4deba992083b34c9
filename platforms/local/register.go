package local

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/platforms"
)

// Properties of platforms.Config that the local platform reads; every one
// is optional.
const (
	// PropStopGrace is Config.StopGrace, a Go duration ("10s").
	PropStopGrace = "LOCAL_STOP_GRACE"
	// PropPortMin and PropPortMax are Config.PortMin and Config.PortMax.
	PropPortMin = "LOCAL_PORT_MIN"
	PropPortMax = "LOCAL_PORT_MAX"
	// PropPortRangeSize is Config.PortRangeSize.
	PropPortRangeSize = "LOCAL_PORT_RANGE_SIZE"
	// PropHealthTimeout is Config.HealthTimeout, a Go duration.
	PropHealthTimeout = "LOCAL_HEALTH_TIMEOUT"
	// PropInheritEnv is Config.InheritEnv, comma-separated names.
	PropInheritEnv = "LOCAL_INHERIT_ENV"
)

func init() {
	platforms.Register(PlatformType, func(cfg platforms.Config) (executor.Platform, error) {
		c, err := ConfigFromRegistry(cfg)
		if err != nil {
			return nil, err
		}
		return New(c)
	})
}

// ConfigFromRegistry turns the registry's configuration into a Config:
// Dir becomes Root (when empty, "edgekit/local" under $XDG_STATE_HOME,
// else under ~/.local/state, else under the temporary directory), Logger
// is kept, and the LOCAL_* properties set the other fields.
func ConfigFromRegistry(rc platforms.Config) (Config, error) {
	c := Config{Root: rc.Dir, Logger: rc.Logger}
	if c.Root == "" {
		c.Root = defaultRoot()
	}
	props := rc.Properties
	dur := func(name string, dst *time.Duration) error {
		if v, ok := props[name]; ok {
			d, err := time.ParseDuration(v)
			if err != nil || d < 0 {
				return fmt.Errorf("%w: property %s=%q is not a duration", ErrInvalidConfig, name, v)
			}
			*dst = d
		}
		return nil
	}
	num := func(name string, dst *int) error {
		if v, ok := props[name]; ok {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return fmt.Errorf("%w: property %s=%q is not a port or count", ErrInvalidConfig, name, v)
			}
			*dst = n
		}
		return nil
	}
	for _, err := range []error{
		dur(PropStopGrace, &c.StopGrace),
		dur(PropHealthTimeout, &c.HealthTimeout),
		num(PropPortMin, &c.PortMin),
		num(PropPortMax, &c.PortMax),
		num(PropPortRangeSize, &c.PortRangeSize),
	} {
		if err != nil {
			return Config{}, err
		}
	}
	if v, ok := props[PropInheritEnv]; ok {
		c.InheritEnv = []string{}
		for _, n := range strings.Split(v, ",") {
			if n = strings.TrimSpace(n); n != "" {
				c.InheritEnv = append(c.InheritEnv, n)
			}
		}
	}
	return c, nil
}

func defaultRoot() string {
	if d := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "edgekit", "local")
	}
	if h, err := os.UserHomeDir(); err == nil && filepath.IsAbs(h) {
		return filepath.Join(h, ".local", "state", "edgekit", "local")
	}
	return filepath.Join(os.TempDir(), "edgekit-local-"+strconv.Itoa(os.Getuid()))
}
