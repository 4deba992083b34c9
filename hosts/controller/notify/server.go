package notify

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/fieldmap"
	"github.com/edgekit/edgekit/internal/devtls"
	"github.com/edgekit/edgekit/internal/store"
	notifyv1 "github.com/edgekit/edgekit/proto/edgekit/notify/v1"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// ConnectMethod is the full gRPC name of the notify stream: it
// authenticates its callers itself (by cloudlet access key), so the
// controller's token check lets it through.
const ConnectMethod = notifyv1.NotifyService_Connect_FullMethodName

// Defaults of Config.
const (
	DefaultKeepaliveInterval = 10 * time.Second
	DefaultHelloTimeout      = 10 * time.Second
	DefaultMaxQueue          = 1 << 17
	DefaultReportWorkers     = 8
	DefaultMaxSyncs          = 16
	DefaultMaxWaitingSyncs   = 256
)

// Sentinel errors a Backend wraps.
var (
	// ErrBadAccessKey says that a cloudlet's access key is wrong, or that
	// the cloudlet has none.
	ErrBadAccessKey = errors.New("bad cloudlet access key")
	// ErrRejected says that the controller judged a report and did not
	// apply it (a stale state, an object gone or of another cloudlet).
	ErrRejected = errors.New("report rejected")
)

// Backend is what the server needs of the controller.
type Backend interface {
	// VerifyAccessKey checks the key a cloudlet's CRM presents; an error
	// matching ErrBadAccessKey refuses it, any other error is a failure to
	// check.
	VerifyAccessKey(ctx context.Context, cloudlet *edgeproto.CloudletKey, key string) error
	// ApplyReport applies a partial Info report of the CRM of cloudlet
	// (info is a *CloudletInfo, *ClusterInstInfo or *AppInstInfo). An error
	// matching ErrRejected is a verdict; any other error a failure to
	// judge the report.
	ApplyReport(ctx context.Context, cloudlet *edgeproto.CloudletKey, info proto.Message, fm *fieldmap.FieldMap) error
}

// Config is what a Server needs.
type Config struct {
	// Store is the region's store. Required.
	Store *store.Store
	// Backend checks access keys and applies reports. Required.
	Backend Backend
	// Logger receives structured logs; nil discards them. Objects and keys
	// are never logged, only kinds, object keys, states and errors.
	Logger *slog.Logger
	// Registerer receives the server's metrics; nil keeps them unexported.
	Registerer prometheus.Registerer
	// KeepaliveInterval: the server sends a Keepalive after this long
	// without anything to send (default DefaultKeepaliveInterval).
	KeepaliveInterval time.Duration
	// HelloTimeout bounds the wait for a stream's Hello (default
	// DefaultHelloTimeout).
	HelloTimeout time.Duration
	// MaxQueue bounds each stream's send queue (default DefaultMaxQueue).
	MaxQueue int
	// ReportWorkers is how many reports of one stream are applied at once
	// (default DefaultReportWorkers).
	ReportWorkers int
	// RequireClientCert refuses streams whose connection did not present a
	// verified TLS client certificate (mutual TLS).
	RequireClientCert bool
	// CloudletCertName, when set, binds certificates to cloudlets: a
	// stream whose connection presented a verified client certificate is
	// refused unless the certificate's Common Name is CloudletCertName of
	// the Hello's cloudlet, so that a cloudlet's access key alone does not
	// let another site's CRM in. The controller sets CRMCertName under a
	// development authority, which names its CRM certificates so.
	CloudletCertName func(*edgeproto.CloudletKey) string
	// MaxSyncs bounds the initial syncs under way at once (default
	// DefaultMaxSyncs): a sync holds its slot from its reads until its
	// SyncEnd is sent. MaxWaitingSyncs (default DefaultMaxWaitingSyncs;
	// negative: none) streams wait for a slot; past that a stream ends
	// with Unavailable and a RetryInfo saying when to connect again, later
	// for each CRM turned away, so that every CRM reconnecting at once is
	// synchronised at a bounded pace with bounded memory.
	MaxSyncs        int
	MaxWaitingSyncs int
	// WatchPerSession gives every stream a watch of the region of its own
	// instead of one watch that all share (the design before the shared
	// watch, whose cost grows with every session for every change): for
	// comparing the two in benchmarks only.
	WatchPerSession bool
}

// CRMCertName is the name (Common Name) of the certificate a development
// authority issues to the CRM of cloudlet k: "crm-<organization>.<name>",
// every character but letters, digits, '.', '-' and '_' replaced by '_',
// cut to 63 bytes.
func CRMCertName(k *edgeproto.CloudletKey) string {
	name := []byte("crm-" + k.GetOrganization() + "." + k.GetName())
	for i, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_') {
			name[i] = '_'
		}
	}
	return string(name[:min(len(name), 63)])
}

// Server serves NotifyService. Create it with New and register it on the
// controller's gRPC server with Register.
type Server struct {
	notifyv1.UnimplementedNotifyServiceServer
	cfg     Config
	log     *slog.Logger
	metrics *metrics
	kinds   *kinds

	mu       sync.Mutex
	sessions map[string]*session // by cloudlet key string
	closed   bool
	hub      *hub // the watch of the region the sessions share; nil when none runs
	adm      *admission
	watches  int // hubs running
}

// New checks cfg and returns a server.
func New(cfg Config) (*Server, error) {
	if cfg.Store == nil || cfg.Backend == nil {
		return nil, errors.New("notify: Config.Store and Config.Backend are required")
	}
	if cfg.KeepaliveInterval <= 0 {
		cfg.KeepaliveInterval = DefaultKeepaliveInterval
	}
	if cfg.HelloTimeout <= 0 {
		cfg.HelloTimeout = DefaultHelloTimeout
	}
	if cfg.MaxQueue <= 0 {
		cfg.MaxQueue = DefaultMaxQueue
	}
	if cfg.ReportWorkers <= 0 {
		cfg.ReportWorkers = DefaultReportWorkers
	}
	if cfg.MaxSyncs <= 0 {
		cfg.MaxSyncs = DefaultMaxSyncs
	}
	if cfg.MaxWaitingSyncs == 0 {
		cfg.MaxWaitingSyncs = DefaultMaxWaitingSyncs
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	m, err := newMetrics(cfg.Registerer)
	if err != nil {
		return nil, fmt.Errorf("notify: metrics: %w", err)
	}
	return &Server{cfg: cfg, log: log.With(slog.String("component", "notify")), metrics: m,
		kinds: newKinds(cfg.Store), sessions: map[string]*session{}, adm: newAdmission(cfg.MaxSyncs, cfg.MaxWaitingSyncs)}, nil
}

// Register registers the service on gs.
func (s *Server) Register(gs grpc.ServiceRegistrar) { notifyv1.RegisterNotifyServiceServer(gs, s) }

// Sessions returns how many CRMs are connected.
func (s *Server) Sessions() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sessions)
}

// Watches returns how many watches of the region the server runs: one
// while any CRM is connected (one per CRM with Config.WatchPerSession),
// none otherwise.
func (s *Server) Watches() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.watches
}

// errStopping ends the streams of a controller that stops.
var errStopping = status.Error(codes.Unavailable, "the controller is stopping")

// Shutdown ends every stream (Unavailable: their CRMs connect again, to
// this controller once it is back or to another) and refuses new ones, so
// that the gRPC server's graceful stop need not wait for streams that
// never end by themselves.
func (s *Server) Shutdown() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for _, sess := range s.sessions {
		sess.cancel(errStopping)
	}
}

// errReplaced ends a stream that a newer stream of the same cloudlet
// replaced.
var errReplaced = status.Error(codes.Aborted, "a newer notify stream of this cloudlet replaced this one")

// Connect serves one CRM's stream until it ends.
func (s *Server) Connect(stream grpc.BidiStreamingServer[notifyv1.ConnectRequest, notifyv1.ConnectResponse]) error {
	ctx := stream.Context()
	remote := ""
	if p, ok := peer.FromContext(ctx); ok {
		remote = p.Addr.String()
	}
	log := s.log.With(slog.String("peer", remote))
	hello, err := s.hello(stream)
	if err != nil {
		s.metrics.refused.WithLabelValues(refusalReason(err)).Inc()
		log.LogAttrs(ctx, slog.LevelWarn, "notify stream refused", slog.Any("error", err))
		return err
	}
	ck := cloudletKeyString(hello.GetCloudletKey())
	log = log.With(slog.String("cloudlet", ck), slog.String("instance", hello.GetInstance()))

	sctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	sess := newSession(s, sctx, cancel, stream, hello.GetCloudletKey(), log)
	sess.resumeAt = hello.GetResumeRevision()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return errStopping
	}
	if old := s.sessions[ck]; old != nil {
		old.cancel(errReplaced)
	}
	s.sessions[ck] = sess
	s.mu.Unlock()
	s.metrics.sessions.Inc()
	defer func() {
		s.mu.Lock()
		if s.sessions[ck] == sess {
			delete(s.sessions, ck)
		}
		s.mu.Unlock()
		s.metrics.sessions.Dec()
	}()
	log.LogAttrs(ctx, slog.LevelInfo, "CRM connected")
	err = sess.run()
	log.LogAttrs(context.WithoutCancel(ctx), slog.LevelInfo, "CRM disconnected", slog.Any("reason", err))
	return err
}

// hello reads and checks the first message of a stream.
func (s *Server) hello(stream grpc.BidiStreamingServer[notifyv1.ConnectRequest, notifyv1.ConnectResponse]) (*notifyv1.Hello, error) {
	ctx := stream.Context()
	if s.cfg.RequireClientCert && !verifiedClientCert(ctx) {
		return nil, status.Error(codes.Unauthenticated, "notify needs a verified TLS client certificate")
	}
	type recvd struct {
		m   *notifyv1.ConnectRequest
		err error
	}
	ch := make(chan recvd, 1)
	go func() {
		m, err := stream.Recv()
		ch <- recvd{m, err}
	}()
	t := time.NewTimer(s.cfg.HelloTimeout)
	defer t.Stop()
	var r recvd
	select {
	case r = <-ch:
	case <-t.C:
		return nil, status.Errorf(codes.DeadlineExceeded, "no Hello within %v", s.cfg.HelloTimeout)
	case <-ctx.Done():
		return nil, status.FromContextError(ctx.Err()).Err()
	}
	if r.err != nil {
		return nil, r.err
	}
	h := r.m.GetHello()
	if h == nil {
		return nil, status.Error(codes.InvalidArgument, "the first message of a notify stream must be a Hello")
	}
	k := h.GetCloudletKey()
	if k.GetOrganization() == "" || k.GetName() == "" {
		return nil, status.Error(codes.InvalidArgument, "Hello: cloudlet_key needs an organization and a name")
	}
	if s.cfg.CloudletCertName != nil {
		if err := s.checkCloudletCert(ctx, k); err != nil {
			return nil, err
		}
	}
	if err := s.cfg.Backend.VerifyAccessKey(ctx, k, h.GetAccessKey()); err != nil {
		if errors.Is(err, ErrBadAccessKey) {
			return nil, status.Errorf(codes.Unauthenticated, "cloudlet %s: wrong access key, or the cloudlet has none", cloudletKeyString(k))
		}
		return nil, status.Errorf(codes.Unavailable, "checking the access key: %v", err)
	}
	return h, nil
}

// checkCloudletCert refuses a connection whose verified client
// certificate names another cloudlet than k.
func (s *Server) checkCloudletCert(ctx context.Context, k *edgeproto.CloudletKey) error {
	if !verifiedClientCert(ctx) {
		return nil
	}
	id, err := devtls.PeerFromContext(ctx)
	if err != nil {
		return status.Errorf(codes.Unauthenticated, "cloudlet %s: reading the client certificate: %v", cloudletKeyString(k), err)
	}
	if want := s.cfg.CloudletCertName(k); id.Name != want {
		return status.Errorf(codes.Unauthenticated, "cloudlet %s: the client certificate is %q's, not this cloudlet's (%q)", cloudletKeyString(k), id.Name, want)
	}
	return nil
}

func verifiedClientCert(ctx context.Context) bool {
	p, ok := peer.FromContext(ctx)
	if !ok {
		return false
	}
	ti, ok := p.AuthInfo.(credentials.TLSInfo)
	return ok && len(ti.State.VerifiedChains) > 0
}

func refusalReason(err error) string {
	switch status.Code(err) {
	case codes.Unauthenticated:
		return "unauthenticated"
	case codes.InvalidArgument:
		return "bad_hello"
	case codes.DeadlineExceeded:
		return "hello_timeout"
	}
	return "error"
}

func cloudletKeyString(k *edgeproto.CloudletKey) string {
	return (&edgeproto.Cloudlet{Key: k}).GetKeyString()
}
