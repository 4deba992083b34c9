package platforms_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/platforms"
)

func TestRegistry(t *testing.T) {
	errBuild := errors.New("no access")
	platforms.Register("registry-test-broken", func(platforms.Config) (executor.Platform, error) { return nil, errBuild })
	if !slices.Contains(platforms.Names(), "registry-test-broken") {
		t.Fatalf("Names() = %v", platforms.Names())
	}
	if _, err := platforms.New("registry-test-broken", platforms.Config{}); !errors.Is(err, errBuild) {
		t.Errorf("factory error not wrapped: %v", err)
	}
	_, err := platforms.New("nope", platforms.Config{})
	var ue *platforms.UnknownPlatformError
	if !errors.As(err, &ue) || ue.Name != "nope" || !slices.Contains(ue.Known, "registry-test-broken") {
		t.Errorf("unknown platform error = %v", err)
	}
	defer func() {
		if recover() == nil {
			t.Error("registering a name twice did not panic")
		}
	}()
	platforms.Register("registry-test-broken", func(platforms.Config) (executor.Platform, error) { return nil, nil })
}
