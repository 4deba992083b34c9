// Package controllertest starts a real controller for tests: embedded etcd
// on free loopback ports, the controller's gRPC API on 127.0.0.1:0, tokens
// for an admin, a CCRM and any organization, optionally the notify server
// that CRMs connect to (Options.Notify; see also CreateEdgeCloudlet), and
// optionally a Host: a CCRM replica (hosts/ccrm) on the fake platform
// playing the resource manager of every cloudlet without crm_on_edge.
// Everything is stopped in t.Cleanup.
package controllertest

import (
	"context"
	"github.com/edgekit/edgekit/atrest"
	"log/slog"
	"net"
	"runtime/pprof"
	"sync"
	"testing"
	"time"

	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/hosts/controller"
	"github.com/edgekit/edgekit/hosts/controller/notify"
	"github.com/edgekit/edgekit/internal/store"
	"github.com/edgekit/edgekit/internal/testenv/etcdtest"
	"github.com/edgekit/edgekit/platforms/fake"
	rmv1 "github.com/edgekit/edgekit/proto/edgekit/rm/v1"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// Options adapt the environment.
type Options struct {
	// Region; default "test".
	Region string
	// Host starts a Host on Platform (default: a new fake platform).
	Host bool
	// Platform is the host's platform.
	Platform executor.Platform
	// Logger receives the controller's and host's logs; nil discards.
	Logger *slog.Logger
	// Members is the size of the etcd cluster; 0 or 1 starts one member.
	Members int
	// Notify serves the CRMs' notify stream (as controller.Run does), with
	// NotifyConfig (its Store, Backend and Logger are set here).
	Notify       bool
	NotifyConfig notify.Config
	// ServerOptions are added to the controller's gRPC server
	// (interceptors that observe calls, for example).
	ServerOptions []grpc.ServerOption
	// StoreInterceptor, when set, sees every unary request of the etcd
	// client the controller's store uses (a client of its own, to count
	// or observe what the controller asks of etcd).
	StoreInterceptor grpc.UnaryClientInterceptor
	// StoreDialOptions, when set, are dial options of a client of its
	// own for the controller's store, as StoreInterceptor (with which
	// they combine): etcdtest.Counter's, to count the requests and the
	// watch events of the controller.
	StoreDialOptions []grpc.DialOption
	// StoreStreamInterceptor, when set, sees every stream (watches) of
	// that same client (to delay what the controller's watches receive,
	// for example).
	StoreStreamInterceptor grpc.StreamClientInterceptor
	// KeyProvider, when set, makes the store encrypt the secrets it holds
	// with data keys it wraps, as controller.Run does with its key file.
	KeyProvider atrest.KeyProvider
}

// Env is a running controller (and host).
type Env struct {
	t testing.TB
	// Addr is the controller's API address.
	Addr string
	// Controller is the running controller.
	Controller *controller.Controller
	// Store is the store the controller uses.
	Store *store.Store
	// Etcd is the etcd server of a one-member environment.
	Etcd *etcdtest.Server
	// Cluster is the etcd cluster when Options.Members > 1.
	Cluster *etcdtest.Cluster
	// Host is the fake host, when Options.Host was set.
	Host *Host
	// Platform is the host's platform, when it is the fake one.
	Platform *fake.Platform
	// Notify is the notify server, when Options.Notify was set.
	Notify *notify.Server

	opts   Options
	stop   func() // stops the controller that serves now
	tokens *controller.Tokens
	mu     sync.Mutex
	orgTok map[string]string
	admin  string
	ccrm   string
}

// ComponentLabel is the key of the CPU profiler label (runtime/pprof)
// under which the parts of an environment run, so that a benchmark that
// holds them all in one process can tell their CPU apart in a profile:
// ComponentEtcd for the etcd members and the goroutines of their clients
// (the controller's etcd requests are encoded and decoded on the caller's
// goroutine; the client's connection readers and keep-alives run under
// this label), ComponentController for everything the controller's New
// and Serve start (the gRPC API and its handlers, the caches, their
// watches).
const (
	ComponentLabel      = "component"
	ComponentEtcd       = "etcd"
	ComponentController = "controller"
)

// Start starts an environment; it is stopped in t.Cleanup.
func Start(t testing.TB, opts Options) *Env {
	t.Helper()
	if opts.Region == "" {
		opts.Region = "test"
	}
	e := &Env{t: t, tokens: controller.NewTokens(), orgTok: map[string]string{}}
	var cli *clientv3.Client
	// etcd, and the goroutines of the client it hands out, run under the
	// profiler label component=etcd, the controller's under
	// component=controller (see ComponentLabel).
	pprof.Do(context.Background(), pprof.Labels(ComponentLabel, ComponentEtcd), func(context.Context) {
		if opts.Members > 1 {
			e.Cluster = etcdtest.NewCluster(t, opts.Members)
			cli = e.Cluster.Client()
		} else {
			e.Etcd = etcdtest.New(t)
			cli = e.Etcd.Client()
		}
	})
	if opts.StoreInterceptor != nil || opts.StoreStreamInterceptor != nil || len(opts.StoreDialOptions) > 0 {
		dopts := append([]grpc.DialOption(nil), opts.StoreDialOptions...)
		if opts.StoreInterceptor != nil {
			dopts = append(dopts, grpc.WithChainUnaryInterceptor(opts.StoreInterceptor))
		}
		if opts.StoreStreamInterceptor != nil {
			dopts = append(dopts, grpc.WithChainStreamInterceptor(opts.StoreStreamInterceptor))
		}
		var err error
		// Its connection's goroutines are etcd's, as the shared client's.
		pprof.Do(context.Background(), pprof.Labels(ComponentLabel, ComponentEtcd), func(context.Context) {
			cli, err = clientv3.New(clientv3.Config{Endpoints: e.EtcdEndpoints(), DialTimeout: 10 * time.Second, DialOptions: dopts})
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cli.Close() })
	}
	sopts := []store.Option{store.WithLogger(opts.Logger)}
	if opts.KeyProvider != nil {
		sopts = append(sopts, store.WithEncryption(atrest.NewEnvelope(opts.KeyProvider)))
	}
	st, err := store.New(cli, opts.Region, sopts...)
	if err != nil {
		t.Fatal(err)
	}
	e.Store = st
	e.opts = opts
	e.admin = e.newToken(controller.Principal{Admin: true})
	e.ccrm = e.newToken(controller.Principal{CCRM: true})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	e.Addr = lis.Addr().String()
	e.serve(lis)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	if opts.Host {
		p := opts.Platform
		if p == nil {
			e.Platform = fake.New(fake.Options{Logger: opts.Logger})
			p = e.Platform
		}
		h, err := NewHost(st, rmv1.NewReportServiceClient(e.Conn(e.ccrm)), p, opts.Logger)
		if err != nil {
			cancel()
			e.stop()
			t.Fatal(err)
		}
		e.Host = h
		wg.Go(func() { _ = h.Start(ctx) })
	}
	t.Cleanup(func() {
		e.stop()
		cancel()
		wg.Wait()
	})
	return e
}

// serve starts a controller (and its notify server) on the environment's
// store, serving on lis until e.stop.
func (e *Env) serve(lis net.Listener) {
	t, opts := e.t, e.opts
	var c *controller.Controller
	var err error
	// The goroutines New starts (the gRPC server's workers, which run the
	// handlers) are the controller's, as those of Serve.
	pprof.Do(context.Background(), pprof.Labels(ComponentLabel, ComponentController), func(context.Context) {
		c, err = controller.New(controller.Config{Store: e.Store, Tokens: e.tokens, Logger: opts.Logger, StopTimeout: 5 * time.Second,
			SelfAuthenticated: []string{notify.ConnectMethod}, ServerOptions: opts.ServerOptions})
	})
	if err != nil {
		_ = lis.Close()
		t.Fatal(err)
	}
	e.Controller = c
	e.Notify = nil
	if opts.Notify {
		ncfg := opts.NotifyConfig
		ncfg.Store, ncfg.Backend, ncfg.Logger = e.Store, c.NotifyBackend(), opts.Logger
		ns, err := notify.New(ncfg)
		if err != nil {
			_ = lis.Close()
			t.Fatal(err)
		}
		ns.Register(c)
		e.Notify = ns
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		pprof.Do(ctx, pprof.Labels(ComponentLabel, ComponentController), func(ctx context.Context) {
			if err := c.Serve(ctx, lis); err != nil {
				t.Errorf("controller: %v", err)
			}
		})
	}()
	ns := e.Notify
	var once sync.Once
	e.stop = func() {
		once.Do(func() {
			if ns != nil {
				ns.Shutdown()
			}
			cancel()
			<-done
		})
	}
}

// Restart stops the controller (its notify streams end with Unavailable,
// as when the process stops) and starts a new one on the same store,
// serving at the same address, as a controller process restarted on the
// same etcd would. Controller and Notify are the new ones afterwards.
func (e *Env) Restart() {
	e.t.Helper()
	e.stop()
	var lis net.Listener
	var err error
	// The old listener is closed once stop returns; the port is free
	// again, though the kernel may take a moment to say so.
	for range 100 {
		if lis, err = net.Listen("tcp", e.Addr); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond) // bounded wait for the port, not synchronisation
	}
	if err != nil {
		e.t.Fatalf("restarting the controller on %s: %v", e.Addr, err)
	}
	e.serve(lis)
}

func (e *Env) newToken(p controller.Principal) string {
	tok, err := controller.NewToken()
	if err != nil {
		e.t.Fatal(err)
	}
	e.tokens.Add(tok, p)
	return tok
}

// EtcdEndpoints are the client URLs of the environment's etcd.
func (e *Env) EtcdEndpoints() []string {
	if e.Cluster != nil {
		return e.Cluster.Endpoints()
	}
	return e.Etcd.Endpoints()
}

// AdminToken is a token of an admin.
func (e *Env) AdminToken() string { return e.admin }

// CCRMToken is a token of an off-site resource manager.
func (e *Env) CCRMToken() string { return e.ccrm }

// OrgToken returns a token of organization org (the same one for every
// call).
func (e *Env) OrgToken(org string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	if tok, ok := e.orgTok[org]; ok {
		return tok
	}
	tok := e.newToken(controller.Principal{Organization: org})
	e.orgTok[org] = tok
	return tok
}

// Conn returns a client connection to the controller that sends token
// (none when token is ""); it is closed in t.Cleanup.
func (e *Env) Conn(token string) *grpc.ClientConn {
	e.t.Helper()
	opts := []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
	if token != "" {
		opts = append(opts, grpc.WithPerRPCCredentials(BearerToken(token)))
	}
	conn, err := grpc.NewClient(e.Addr, opts...)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// BearerToken sends a bearer token with every call. It allows plaintext
// connections: tests run on loopback.
type BearerToken string

// GetRequestMetadata implements credentials.PerRPCCredentials.
func (b BearerToken) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + string(b)}, nil
}

// RequireTransportSecurity implements credentials.PerRPCCredentials.
func (BearerToken) RequireTransportSecurity() bool { return false }

// WaitFor polls cond every few milliseconds until it holds or the deadline
// passes, then fails the test naming what.
func WaitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
