package local

import (
	"testing"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/platforms/platformtest"
)

// TestConformance holds the local platform to the suite every platform
// passes, with the test server as the application: real processes, real
// ports, real health checks.
func TestConformance(t *testing.T) {
	platformtest.Run(t, func(t *testing.T) executor.Platform {
		root := t.TempDir()
		ports := freePortRange(t, 8*testRangeSize)
		p, err := New(Config{
			Root:           root,
			StopGrace:      2 * time.Second,
			HealthInterval: 20 * time.Millisecond,
			HealthTimeout:  20 * time.Second,
			PortMin:        ports.first,
			PortMax:        ports.last,
			PortRangeSize:  testRangeSize,
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			killAll(t, root)
			_ = p.Close()
		})
		return p
	}, platformtest.Options{
		App: func() *edgeproto.App {
			return &edgeproto.App{
				Key:             &edgeproto.AppKey{Organization: "dev", Name: "testapp", Version: "1"},
				Command:         testAppPath,
				HealthCheck:     edgeproto.HealthCheck_HEALTH_CHECK_HTTP,
				HealthCheckPath: "/healthz",
				Ports:           []*edgeproto.Port{{Proto: edgeproto.PortProtocol_PORT_PROTOCOL_TCP, InternalPort: 8080}},
			}
		},
	})
}
