package grpcsweep

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/edgekit/edgekit/internal/grpcserver"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// start serves a health service on loopback, registered through
// grpcserver.Registrar or not, with the recovery interceptors logging to
// panics, and returns a connection to it.
func start(t *testing.T, impl healthpb.HealthServer, registrar bool, panics *PanicLog) *grpc.ClientConn {
	t.Helper()
	u, st := grpcserver.Recover(slog.New(panics))
	s := grpc.NewServer(append(grpcserver.ServerOptions(), grpc.ChainUnaryInterceptor(u), grpc.ChainStreamInterceptor(st))...)
	if registrar {
		healthpb.RegisterHealthServer(grpcserver.Registrar(s), impl)
	} else {
		healthpb.RegisterHealthServer(s, impl)
	}
	return Serve(t, s)
}

// panicky panics in Check.
type panicky struct{ *health.Server }

func (panicky) Check(context.Context, *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	panic("boom")
}

// findings runs a sweep of the health service and returns what it
// reports, one string each, fatal ones prefixed "FATAL ".
func findings(conn *grpc.ClientConn, panics *PanicLog, alive func(context.Context) error) ([]Call, []string) {
	var out []string
	calls := sweep(Options{
		Services:   []string{"grpc.health.v1.Health"},
		Roles:      []Role{{Name: "anyone", Conn: conn}},
		Panics:     panics,
		StreamWait: 200 * time.Millisecond,
		Alive:      alive,
	}, func(fatal bool, format string, args ...any) {
		prefix := ""
		if fatal {
			prefix = "FATAL "
		}
		out = append(out, prefix+fmt.Sprintf(format, args...))
	})
	return calls, out
}

func alive(context.Context) error { return nil }

// TestSweepFindsTheBugsItLooksFor: a correct server passes; a panicking
// handler, undecodable requests answered Internal and a server that stops
// answering are each reported.
func TestSweepFindsTheBugsItLooksFor(t *testing.T) {
	t.Run("correct", func(t *testing.T) {
		panics := &PanicLog{}
		calls, got := findings(start(t, health.NewServer(), true, panics), panics, alive)
		if len(got) != 0 {
			t.Errorf("findings on a correct server: %q", got)
		}
		if len(calls) != 3*3 { // Check, List, Watch; three requests each
			t.Errorf("%d calls, want 9: %v", len(calls), calls)
		}
	})
	t.Run("panic", func(t *testing.T) {
		panics := &PanicLog{}
		_, got := findings(start(t, panicky{health.NewServer()}, true, panics), panics, alive)
		joined := strings.Join(got, "\n")
		if !strings.Contains(joined, "the handler panicked (recovered by the server): /grpc.health.v1.Health/Check: boom") ||
			!strings.Contains(joined, "/grpc.health.v1.Health/Check as anyone with empty request: Internal") {
			t.Errorf("findings on a panicking handler:\n%s", joined)
		}
	})
	t.Run("undecodable answered Internal", func(t *testing.T) {
		panics := &PanicLog{}
		_, got := findings(start(t, health.NewServer(), false, panics), panics, alive)
		joined := strings.Join(got, "\n")
		if !strings.Contains(joined, "/grpc.health.v1.Health/Check as anyone with garbage request: Internal") {
			t.Errorf("findings on gRPC's own answer to undecodable bytes:\n%s", joined)
		}
	})
	t.Run("dead", func(t *testing.T) {
		panics := &PanicLog{}
		_, got := findings(start(t, health.NewServer(), true, panics), panics, func(context.Context) error { return errors.New("gone") })
		if len(got) != 1 || !strings.HasPrefix(got[0], "FATAL the server no longer serves after calls of /grpc.health.v1.Health/Check: gone") {
			t.Errorf("findings on a server that stopped: %q", got)
		}
	})
}
