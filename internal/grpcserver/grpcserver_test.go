package grpcserver_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgekit/edgekit/internal/grpcserver"
	"github.com/edgekit/edgekit/internal/testenv/grpcsweep"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// garbage never decodes: field number 0 is invalid in every message.
var garbage = []byte{0x00, 0x01, 0x02}

func TestUndecodableRequestAnswersInvalidArgument(t *testing.T) {
	s := grpc.NewServer(grpcserver.ServerOptions()...)
	hs := health.NewServer()
	healthpb.RegisterHealthServer(grpcserver.Registrar(s), hs)
	conn := grpcsweep.Serve(t, s)
	ctx := testCtx(t)

	// Unary.
	err := conn.Invoke(ctx, "/grpc.health.v1.Health/Check", &garbage, new([]byte), grpc.ForceCodecV2(grpcsweep.RawCodec{}))
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "grpc.health.v1.HealthCheckRequest") {
		t.Errorf("unary call with undecodable bytes: got %v, want InvalidArgument naming the message", err)
	}
	// Server streaming.
	cs, err := conn.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true}, "/grpc.health.v1.Health/Watch", grpc.ForceCodecV2(grpcsweep.RawCodec{}))
	if err != nil {
		t.Fatal(err)
	}
	if err := cs.SendMsg(&garbage); err != nil {
		t.Fatal(err)
	}
	_ = cs.CloseSend()
	if err := cs.RecvMsg(new([]byte)); status.Code(err) != codes.InvalidArgument {
		t.Errorf("streaming call with undecodable bytes: got %v, want InvalidArgument", err)
	}
	// A request that decodes is served as before.
	hs.SetServingStatus("x", healthpb.HealthCheckResponse_SERVING)
	resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: "x"})
	if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("valid request: %v, %v", resp, err)
	}
	// A service registered on the server directly keeps gRPC's answer
	// (the codec defers only the errors of messages Registrar receives).
	s2 := grpc.NewServer(grpcserver.ServerOptions()...)
	healthpb.RegisterHealthServer(s2, health.NewServer())
	err = grpcsweep.Serve(t, s2).Invoke(ctx, "/grpc.health.v1.Health/Check", &garbage, new([]byte), grpc.ForceCodecV2(grpcsweep.RawCodec{}))
	if status.Code(err) != codes.Internal {
		t.Errorf("directly registered: got %v, want gRPC's Internal", err)
	}
}

// panicky panics in every call.
type panicky struct {
	healthpb.UnimplementedHealthServer
}

func (panicky) Check(context.Context, *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	panic("boom")
}

func (panicky) Watch(*healthpb.HealthCheckRequest, grpc.ServerStreamingServer[healthpb.HealthCheckResponse]) error {
	panic("bang")
}

func TestPanicAnswersInternalAndIsLogged(t *testing.T) {
	var buf bytes.Buffer
	var mu sync.Mutex
	log := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return buf.Write(p)
	}), nil))
	u, st := grpcserver.Recover(log)
	s := grpc.NewServer(append(grpcserver.ServerOptions(), grpc.ChainUnaryInterceptor(u), grpc.ChainStreamInterceptor(st))...)
	healthpb.RegisterHealthServer(grpcserver.Registrar(s), panicky{})
	conn := grpcsweep.Serve(t, s)
	ctx := testCtx(t)
	c := healthpb.NewHealthClient(conn)
	if _, err := c.Check(ctx, &healthpb.HealthCheckRequest{}); status.Code(err) != codes.Internal || strings.Contains(err.Error(), "boom") {
		t.Errorf("unary: got %v, want Internal without the panic's value", err)
	}
	w, err := c.Watch(ctx, &healthpb.HealthCheckRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Recv(); status.Code(err) != codes.Internal {
		t.Errorf("stream: got %v, want Internal", err)
	}
	// The server still serves.
	if _, err := c.Check(ctx, &healthpb.HealthCheckRequest{}); status.Code(err) != codes.Internal {
		t.Errorf("after the panics: %v", err)
	}
	mu.Lock()
	out := buf.String()
	mu.Unlock()
	for _, want := range []string{grpcserver.PanicMessage, "method=/grpc.health.v1.Health/Check", "panic=boom", "method=/grpc.health.v1.Health/Watch", "panic=bang", "level=ERROR", "stack="} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
