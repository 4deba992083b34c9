package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/status"

	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/fluidos/rear"
	"github.com/edgekit/edgekit/hosts/fluidos/consumer"
	"github.com/edgekit/edgekit/hosts/fluidos/provider"
	"github.com/edgekit/edgekit/internal/devtls"
	"github.com/edgekit/edgekit/internal/grpcserver"
	"github.com/edgekit/edgekit/internal/store"
)

// api is the node's gRPC server.
type api struct {
	server *grpc.Server
	health *health.Server
	log    *slog.Logger
}

// newAPI builds the gRPC server: the node's services, health and
// reflection, with authentication, logging, metrics, the recovery of a
// handler's panic (an Internal answer and a log line) and the redaction of
// every answer's secrets (but the credentials call's) in interceptors.
// Over TLS a caller must present a certificate of the trusted authorities
// whose name is one of the allowed clients.
func newAPI(n *Node, o Options, bundle *devtls.Bundle, reg prometheus.Registerer, log *slog.Logger) (*api, error) {
	allowed := o.APIClients
	if len(allowed) == 0 {
		allowed = []string{DefaultAdminName, o.NodeID}
	}
	calls := prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "edgekit", Subsystem: "fluidos", Name: "api_calls_total", Help: "API calls, by method and status code.",
	}, []string{"method", "code"})
	if err := reg.Register(calls); err != nil {
		return nil, err
	}
	authorize := func(ctx context.Context) error {
		if bundle == nil {
			return nil
		}
		id, err := devtls.PeerFromContext(ctx)
		if err != nil {
			return status.Error(codes.Unauthenticated, err.Error())
		}
		if !slices.Contains(allowed, id.Name) {
			return status.Errorf(codes.PermissionDenied, "%q may not use this node's API", id.Name)
		}
		return nil
	}
	observe := func(ctx context.Context, method string, start time.Time, err error) {
		code := status.Code(err)
		calls.WithLabelValues(method, code.String()).Inc()
		lvl := slog.LevelDebug
		if code == codes.Internal || code == codes.Unknown {
			lvl = slog.LevelWarn
		}
		log.Log(ctx, lvl, "API call", "method", method, "code", code.String(), "took", time.Since(start), "err", err)
	}
	recoverUnary, recoverStream := grpcserver.Recover(log)
	opts := append(grpcserver.ServerOptions(),
		grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			start := time.Now()
			if err := authorize(ctx); err != nil {
				observe(ctx, info.FullMethod, start, err)
				return nil, err
			}
			resp, err := h(ctx, req)
			err = statusOf(err)
			observe(ctx, info.FullMethod, start, err)
			return resp, err
		}, recoverUnary, redactUnary),
		grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			start := time.Now()
			if err := authorize(ss.Context()); err != nil {
				observe(ss.Context(), info.FullMethod, start, err)
				return err
			}
			err := statusOf(h(srv, ss))
			observe(ss.Context(), info.FullMethod, start, err)
			return err
		}, recoverStream, redactStream))
	if bundle != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(bundle.ServerConfig())))
	}
	s := grpc.NewServer(opts...)
	a := &api{server: s, health: health.NewServer(), log: log}
	svc := &services{n: n, log: log}
	// Every service through the registrar: a request that does not decode
	// answers InvalidArgument.
	r := grpcserver.Registrar(s)
	fluidos.RegisterSolverServiceServer(r, svc)
	fluidos.RegisterFlavorServiceServer(r, svc)
	fluidos.RegisterServiceBlueprintServiceServer(r, svc)
	fluidos.RegisterContractServiceServer(r, svc)
	fluidos.RegisterAllocationServiceServer(r, svc)
	fluidos.RegisterNodeServiceServer(r, svc)
	fluidos.RegisterSliceServiceServer(r, svc)
	healthpb.RegisterHealthServer(r, a.health)
	reflection.Register(r)
	return a, nil
}

func (a *api) serve(lis net.Listener) error {
	a.health.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	return fmt.Errorf("API server: %w", a.server.Serve(lis))
}

// stop stops the server gracefully within timeout, then cancels what is
// left.
func (a *api) stop(timeout time.Duration) {
	a.health.Shutdown()
	done := make(chan struct{})
	go func() { a.server.GracefulStop(); close(done) }()
	select {
	case <-done:
	case <-time.After(timeout):
		a.log.Warn("API graceful stop timed out: cancelling in-flight calls", "timeout", timeout)
		a.server.Stop()
		<-done
	}
}

// statusOf gives an error of the node's packages its gRPC code.
func statusOf(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	code := codes.Internal
	var se *rear.StatusError
	switch {
	case errors.As(err, &se):
		code = peerCode(se.Code)
	case errors.Is(err, context.Canceled):
		code = codes.Canceled
	case errors.Is(err, context.DeadlineExceeded):
		code = codes.DeadlineExceeded
	case errors.Is(err, store.ErrNotFound), errors.Is(err, provider.ErrFlavorNotFound), errors.Is(err, provider.ErrContractNotFound):
		code = codes.NotFound
	case errors.Is(err, consumer.ErrNoSlice), errors.Is(err, consumer.ErrNoReleaseRoute):
		code = codes.FailedPrecondition
	case errors.Is(err, rear.ErrImpersonation), errors.Is(err, rear.ErrGarbage), errors.Is(err, rear.ErrInvalid):
		code = codes.Unavailable
	case errors.Is(err, store.ErrAlreadyExists):
		code = codes.AlreadyExists
	case errors.Is(err, store.ErrConflict):
		code = codes.Aborted
	case errors.Is(err, consumer.ErrInvalidSolver), errors.Is(err, fluidos.ErrInvalidSelector), errors.Is(err, errInvalid),
		errors.Is(err, consumer.ErrAmbiguousContract):
		code = codes.InvalidArgument
	}
	return status.Error(code, err.Error())
}

// errInvalid: a request the API refuses as it is.
var errInvalid = errors.New("invalid request")

// peerCode is the gRPC code of what a peer answered over REAR.
func peerCode(status int) codes.Code {
	switch status {
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge:
		return codes.InvalidArgument
	case http.StatusUnauthorized, http.StatusForbidden:
		return codes.PermissionDenied
	case http.StatusNotFound, http.StatusGone:
		return codes.NotFound
	case http.StatusConflict:
		return codes.FailedPrecondition
	}
	return codes.Unavailable
}
