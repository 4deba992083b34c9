// Package etcdtest starts real etcd for tests: one embedded member (New) or
// a cluster of several (NewCluster), on free loopback ports, with data
// under the test's temporary directory, stopped when the test ends.
//
// Every host's tests use it instead of their own copies. Members run with
// fsync off (tests do not survive machine crashes anyway) and etcd's logs
// off unless WithLogger is given. Every wait is bounded: a member that does
// not start within the ready timeout fails the test.
package etcdtest

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/edgekit/edgekit/internal/etcd"
)

// readyTimeout bounds the start of a member (a cluster's members start
// together, so it bounds the cluster's start too).
const readyTimeout = 30 * time.Second

// Option changes how members start.
type Option func(*etcd.EmbedConfig)

// WithLogger sends etcd's warnings and errors to l. The logger must stay
// usable after the test ends (not t.Log), since etcd may log while it
// stops.
func WithLogger(l *slog.Logger) Option { return func(c *etcd.EmbedConfig) { c.Logger = l } }

// WithConfig lets f change the member's configuration before it starts
// (TLS, compaction, raft timing).
func WithConfig(f func(*etcd.EmbedConfig)) Option { return func(c *etcd.EmbedConfig) { f(c) } }

// Server is one embedded etcd member run for a test.
type Server struct {
	t      testing.TB
	cfg    etcd.EmbedConfig
	client *clientv3.Client

	mu sync.Mutex
	m  *etcd.Embedded // nil while stopped
}

// New starts a single-member cluster for t and stops it in t.Cleanup.
func New(t testing.TB, opts ...Option) *Server {
	t.Helper()
	cfg := etcd.EmbedConfig{DataDir: t.TempDir()}
	applyDefaults(&cfg, opts)
	m, err := etcd.StartEmbedded(context.Background(), cfg)
	if err != nil {
		t.Fatalf("etcdtest: %v", err)
	}
	s := &Server{t: t, cfg: m.Config(), m: m}
	t.Cleanup(s.close)
	s.client = s.NewClient()
	return s
}

func applyDefaults(cfg *etcd.EmbedConfig, opts []Option) {
	cfg.UnsafeNoFsync = true
	cfg.ReadyTimeout = readyTimeout
	for _, o := range opts {
		o(cfg)
	}
}

// Client returns a client of this member, kept across Stop and Restart and
// closed when the test ends.
func (s *Server) Client() *clientv3.Client { return s.client }

// NewClient returns a new client of this member, closed when the test ends.
func (s *Server) NewClient() *clientv3.Client {
	s.t.Helper()
	return newClient(s.t, s.Endpoints())
}

func newClient(t testing.TB, endpoints []string) *clientv3.Client {
	t.Helper()
	cli, err := etcd.NewClient(etcd.ClientConfig{Endpoints: endpoints})
	if err != nil {
		t.Fatalf("etcdtest: %v", err)
	}
	t.Cleanup(func() { _ = cli.Close() })
	return cli
}

// Endpoints returns the member's client URLs; they stay the same across
// Stop and Restart.
func (s *Server) Endpoints() []string { return []string{"http://" + s.cfg.ClientAddr} }

// Name returns the member's name.
func (s *Server) Name() string { return s.cfg.Name }

// Embedded returns the running member, or nil while it is stopped.
func (s *Server) Embedded() *etcd.Embedded {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m
}

// Running reports whether the member runs.
func (s *Server) Running() bool { return s.Embedded() != nil }

// Stop stops the member, keeping its data; stopping a stopped member does
// nothing.
func (s *Server) Stop() {
	s.t.Helper()
	s.mu.Lock()
	m := s.m
	s.m = nil
	s.mu.Unlock()
	if m == nil {
		return
	}
	if err := m.Close(); err != nil {
		s.t.Errorf("etcdtest: stop %s: %v", s.cfg.Name, err)
	}
}

// Restart starts a stopped member again on the same data and addresses. A
// member of a cluster is ready once it has rejoined its cluster's leader.
func (s *Server) Restart() {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m != nil {
		s.t.Fatalf("etcdtest: restart %s: it runs", s.cfg.Name)
	}
	m, err := etcd.StartEmbedded(context.Background(), s.cfg)
	if err != nil {
		s.t.Fatalf("etcdtest: restart %s: %v", s.cfg.Name, err)
	}
	s.m = m
}

// close stops the member at the end of the test.
func (s *Server) close() {
	s.mu.Lock()
	m := s.m
	s.m = nil
	s.mu.Unlock()
	if m != nil {
		if err := m.Close(); err != nil {
			s.t.Errorf("etcdtest: %v", err)
		}
	}
}
