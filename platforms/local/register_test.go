package local

import (
	"errors"
	"testing"
	"time"

	"github.com/edgekit/edgekit/platforms"
)

func TestRegistered(t *testing.T) {
	dir := t.TempDir()
	p, err := platforms.New(PlatformType, platforms.Config{Dir: dir, Properties: map[string]string{
		PropStopGrace: "2s", PropPortMin: "40000", PropPortMax: "40999", PropPortRangeSize: "50", PropInheritEnv: "PATH, LANG",
	}})
	if err != nil {
		t.Fatal(err)
	}
	lp, ok := p.(*Platform)
	if !ok {
		t.Fatalf("registry built %T", p)
	}
	c := lp.cfg
	if c.Root != dir || c.StopGrace != 2*time.Second || c.PortMin != 40000 || c.PortMax != 40999 || c.PortRangeSize != 50 ||
		len(c.InheritEnv) != 2 || c.InheritEnv[1] != "LANG" {
		t.Errorf("config = %+v", c)
	}
	if _, err := platforms.New(PlatformType, platforms.Config{Dir: dir, Properties: map[string]string{PropStopGrace: "soon"}}); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("bad property: err = %v", err)
	}
}
