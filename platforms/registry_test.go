package platforms_test

import (
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/platforms"
)

// runs numbers the registrations of TestRegistry, since the registry is
// global and the test may run more than once (-count).
var runs atomic.Int32

func TestRegistry(t *testing.T) {
	errBuild := errors.New("no access")
	name := fmt.Sprintf("registry-test-broken-%d", runs.Add(1))
	platforms.Register(name, func(platforms.Config) (executor.Platform, error) { return nil, errBuild })
	if !slices.Contains(platforms.Names(), name) {
		t.Fatalf("Names() = %v", platforms.Names())
	}
	if _, err := platforms.New(name, platforms.Config{}); !errors.Is(err, errBuild) {
		t.Errorf("factory error not wrapped: %v", err)
	}
	_, err := platforms.New("nope", platforms.Config{})
	var ue *platforms.UnknownPlatformError
	if !errors.As(err, &ue) || ue.Name != "nope" || !slices.Contains(ue.Known, name) {
		t.Errorf("unknown platform error = %v", err)
	}
	defer func() {
		if recover() == nil {
			t.Error("registering a name twice did not panic")
		}
	}()
	platforms.Register(name, func(platforms.Config) (executor.Platform, error) { return nil, nil })
}
