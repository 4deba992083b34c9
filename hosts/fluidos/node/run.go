package node

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"github.com/edgekit/edgekit/atrest"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/protobuf/proto"

	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/fluidos/rear"
	"github.com/edgekit/edgekit/hosts/fluidos/allocator"
	"github.com/edgekit/edgekit/hosts/fluidos/consumer"
	"github.com/edgekit/edgekit/hosts/fluidos/provider"
	"github.com/edgekit/edgekit/internal/devtls"
	"github.com/edgekit/edgekit/internal/etcd"
	"github.com/edgekit/edgekit/internal/store"
	"github.com/edgekit/edgekit/platforms"
	_ "github.com/edgekit/edgekit/platforms/fake"       // registers "fake", for demos and tests
	_ "github.com/edgekit/edgekit/platforms/kubernetes" // registers "kubernetes"
	"github.com/edgekit/edgekit/platforms/local"
)

// Running describes a node started by Run.
type Running struct {
	// RearAddr is the REAR endpoint's listening address; Advertised is
	// the one peers are told.
	RearAddr, Advertised string
	// APIAddr and MetricsAddr are the API's and /metrics' addresses, or "".
	APIAddr, MetricsAddr string
	// EtcdEndpoints are the etcd client endpoints the node uses.
	EtcdEndpoints []string
	// Node is the running node.
	Node *Node
	// Certificate renews the node's certificate, or is nil (plain HTTP,
	// or a certificate without renewal).
	Certificate *devtls.Renewer
}

// Node is a running FLUIDOS node: its provider, its consumer and what
// they share.
type Node struct {
	// Self is the node as it names itself to peers.
	Self *fluidos.NodeIdentity
	// Provider sells, Consumer buys, Allocator provisions what was sold.
	Provider  *provider.Provider
	Consumer  *consumer.Consumer
	Allocator *allocator.Allocator
	// Store holds the node's objects.
	Store *store.Store

	insecure bool
}

// Run runs a node until ctx ends: it starts (or connects to) etcd,
// publishes the node's flavors, serves REAR, the API and metrics, runs the
// provider's expiries and the consumer's solvers, and when ctx ends stops
// in order (servers gracefully within StopTimeout, then the workers, then
// etcd), so that nothing acknowledged is lost.
func Run(ctx context.Context, o Options) error {
	if err := o.check(); err != nil {
		return fmt.Errorf("fluidos node: %w", err)
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = log.With("node", o.NodeID)
	if o.StopTimeout <= 0 {
		o.StopTimeout = DefaultStopTimeout
	}
	if err := os.MkdirAll(o.DataDir, 0o700); err != nil {
		return fmt.Errorf("fluidos node: %w", err)
	}
	bundle := o.TLS
	if bundle == nil && o.DevTLSDir != "" {
		var err error
		if bundle, err = devBundle(o.DevTLSDir, o.NodeID, o.Advertise, o.DevTLSValidity, log); err != nil {
			return fmt.Errorf("fluidos node: dev TLS: %w", err)
		}
	}
	if bundle != nil && bundle.Renewer() != nil {
		r := bundle.Renewer()
		// Renew the certificate (or reload its files) while the node runs;
		// stopped last, after the servers.
		rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		done := make(chan struct{})
		go func() { defer close(done); _ = r.Start(rctx) }()
		defer func() { cancel(); <-done }()
	}

	cli, endpoints, stopEtcd, err := openEtcd(ctx, o, log)
	if err != nil {
		return err
	}
	defer stopEtcd()
	env, _, err := atrest.HostKeys(o.KeyProvider, o.EncryptionKeyFile, o.DataDir)
	if err != nil {
		return fmt.Errorf("fluidos node: encryption keys: %w", err)
	}
	st, err := store.New(cli, o.NodeID, store.WithLogger(log), store.WithEncryption(env))
	if err != nil {
		return fmt.Errorf("fluidos node: %w", err)
	}

	// Listen first: the advertised address may be the one the listener got.
	rearLis, err := net.Listen("tcp", o.RearListen)
	if err != nil {
		return fmt.Errorf("fluidos node: REAR listen: %w", err)
	}
	closers := []func(){func() { rearLis.Close() }}
	defer func() {
		for _, c := range closers {
			c()
		}
	}()
	advertised := o.Advertise
	if advertised == "" {
		advertised = rearLis.Addr().String()
	}
	self := &fluidos.NodeIdentity{NodeId: o.NodeID, Domain: o.Domain, Ip: advertised,
		AdditionalInformation: &fluidos.NodeAdditionalInformation{LiqoId: o.NodeID}}

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	platform, closePlatform, err := openPlatform(o, log)
	if err != nil {
		return err
	}
	defer closePlatform()
	n, err := build(ctx, o, self, st, platform, bundle, reg, log)
	if err != nil {
		return err
	}
	// Every kind is registered by build: seal what is stored in clear or
	// under an older key.
	stopRewrap := st.StartRewrap(ctx)
	defer stopRewrap()

	var rearTLS *tls.Config
	if bundle != nil {
		rearTLS = bundle.ServerConfig()
	}
	rearMux := http.NewServeMux()
	rearMux.Handle("/api/v2/slices/", n.Allocator.SliceHandler(bundle != nil))
	rearMux.Handle("/", n.Provider.Handler(bundle != nil))
	rearSrv := &http.Server{Handler: refuseLargeBodies(provider.MaxRequestBody, rearMux), ReadHeaderTimeout: 10 * time.Second,
		MaxHeaderBytes: 64 << 10, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelDebug)}
	run := &Running{RearAddr: rearLis.Addr().String(), Advertised: advertised, EtcdEndpoints: endpoints, Node: n}
	if bundle != nil {
		run.Certificate = bundle.Renewer()
	}

	api, err := newAPI(n, o, bundle, reg, log)
	if err != nil {
		return err
	}
	var apiLis net.Listener
	if o.APIListen != "" {
		if apiLis, err = net.Listen("tcp", o.APIListen); err != nil {
			return fmt.Errorf("fluidos node: API listen: %w", err)
		}
		closers = append(closers, func() { apiLis.Close() })
		run.APIAddr = apiLis.Addr().String()
	}
	var metricsSrv *http.Server
	var metricsLis net.Listener
	if o.MetricsListen != "" {
		if metricsLis, err = net.Listen("tcp", o.MetricsListen); err != nil {
			return fmt.Errorf("fluidos node: metrics listen: %w", err)
		}
		closers = append(closers, func() { metricsLis.Close() })
		run.MetricsAddr = metricsLis.Addr().String()
		mux := http.NewServeMux()
		mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
		metricsSrv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	}

	// Workers: expiries, solvers and what they bought, provisioning, on a
	// context of their own so that they stop after the servers.
	wctx, stopWorkers := context.WithCancel(context.WithoutCancel(ctx))
	var workers sync.WaitGroup
	workers.Go(func() { _ = n.Provider.Start(wctx) })
	workers.Go(func() { _ = n.Consumer.Start(wctx) })
	workers.Go(func() {
		if err := n.Allocator.Start(wctx); err != nil {
			log.ErrorContext(wctx, "allocator stopped", "err", err)
		}
	})
	defer func() { stopWorkers(); workers.Wait() }()

	errc := make(chan error, 3)
	go func() {
		var err error
		if rearTLS != nil {
			err = rearSrv.Serve(tls.NewListener(rearLis, rearTLS))
		} else {
			err = rearSrv.Serve(rearLis)
		}
		errc <- fmt.Errorf("REAR server: %w", err)
	}()
	if apiLis != nil {
		go func() { errc <- api.serve(apiLis) }()
	}
	if metricsSrv != nil {
		go func() { errc <- fmt.Errorf("metrics server: %w", metricsSrv.Serve(metricsLis)) }()
	}
	log.InfoContext(ctx, "FLUIDOS node ready", "rear", run.RearAddr, "advertised", advertised, "api", run.APIAddr,
		"metrics", run.MetricsAddr, "etcd", endpoints, "tls", bundle != nil, "peers", o.Peers)
	if bundle == nil {
		log.WarnContext(ctx, "REAR is served over plain HTTP: any caller can reserve and buy in any node's name")
	}
	if o.Ready != nil {
		o.Ready(run)
	}
	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-errc:
		log.ErrorContext(ctx, "a server failed; stopping", "err", serveErr)
	}

	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), o.StopTimeout)
	defer cancel()
	if err := rearSrv.Shutdown(sctx); err != nil {
		log.WarnContext(sctx, "REAR server stop", "err", err)
		_ = rearSrv.Close()
	}
	api.stop(o.StopTimeout)
	if metricsSrv != nil {
		_ = metricsSrv.Shutdown(sctx)
	}
	log.InfoContext(sctx, "FLUIDOS node stopped")
	if serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		return fmt.Errorf("fluidos node: %w", serveErr)
	}
	return nil
}

// build makes the node's provider, allocator and consumer, seeds the
// blueprints and publishes the flavors.
func build(ctx context.Context, o Options, self *fluidos.NodeIdentity, st *store.Store, platform executor.Platform, bundle *devtls.Bundle, reg prometheus.Registerer, log *slog.Logger) (*Node, error) {
	for _, bp := range o.Blueprints {
		if err := allocator.CheckBlueprintFor(platform.Features(), bp); err != nil {
			return nil, fmt.Errorf("fluidos node: %w", err)
		}
		if _, err := store.NewKind[*fluidos.ServiceBlueprint](st).Create(ctx, bp); err != nil && !errors.Is(err, store.ErrAlreadyExists) {
			return nil, fmt.Errorf("fluidos node: blueprint %q: %w", bp.GetId(), err)
		}
	}
	capacity := o.Capacity
	if capacity == nil {
		pods := o.Pods
		if pods <= 0 {
			pods = provider.DefaultPods
		}
		capacity = provider.LocalCapacity(o.DataDir, pods)
	}
	policy, price := o.Policy, o.Price
	if policy == nil {
		policy = DefaultPolicy()
	}
	if price == nil {
		price = DefaultPrice()
	}
	peers, err := consumer.NewRegistry(o.Peers, o.PeerTTL)
	if err != nil {
		return nil, fmt.Errorf("fluidos node: %w", err)
	}
	acfg := allocator.Config{
		Self: proto.Clone(self).(*fluidos.NodeIdentity), Store: st, Platform: platform, Images: o.Images,
		HealthInterval: o.HealthInterval, OperationTimeout: o.OperationTimeout, MaxRestarts: o.MaxRestarts,
		StopTimeout: o.StopTimeout, Logger: log.With("side", "allocator"), Metrics: allocator.NewMetrics(reg),
	}
	if platform.Features().PlatformType == local.PlatformType {
		acfg.Probe = allocator.TCPProbe
	}
	alloc, err := allocator.New(acfg)
	if err != nil {
		return nil, fmt.Errorf("fluidos node: %w", err)
	}
	p, err := provider.New(provider.Config{
		Self: self, Store: st, Capacity: capacity, Policy: policy, K8SlicePrice: price, Location: o.Location, Flavors: o.Flavors,
		ReservationTTL: o.ReservationTTL, ContractLease: o.ContractLease, ContractTerm: o.ContractTerm, Contracts: o.Contracts, Allocator: alloc,
		Logger: log.With("side", "provider"), Metrics: provider.NewMetrics(reg),
		// A buyer vouched for by its certificate is a node to know: its
		// REAR endpoint becomes a learned peer.
		BuyerSeen: func(b *fluidos.NodeIdentity) { _ = peers.Add(b.GetIp()) },
	})
	if err != nil {
		return nil, fmt.Errorf("fluidos node: %w", err)
	}
	alloc.SetLedger(p)
	if err := p.Sync(ctx); err != nil {
		return nil, fmt.Errorf("fluidos node: %w", err)
	}
	var clientTLS *tls.Config
	if bundle != nil {
		clientTLS = bundle.ClientConfig()
	}
	c, err := consumer.New(consumer.Config{
		Self: proto.Clone(self).(*fluidos.NodeIdentity), Store: st, Client: rear.NewClient(clientTLS, 0), Peers: peers,
		PeerTimeout: o.PeerTimeout, DiscoveryTimeout: o.DiscoveryTimeout, ReservationTimeout: o.ReservationTimeout,
		PurchaseTimeout: o.PurchaseTimeout, AllocationTimeout: o.AllocationTimeout, PollInterval: o.PollInterval, RenewInterval: o.RenewInterval,
		Logger: log.With("side", "consumer"), Metrics: consumer.NewMetrics(reg),
	})
	if err != nil {
		return nil, fmt.Errorf("fluidos node: %w", err)
	}
	return &Node{Self: self, Provider: p, Consumer: c, Allocator: alloc, Store: st, insecure: bundle == nil}, nil
}

// openPlatform is the platform of o: Options.Platform, or the one
// registered as PlatformType over PlatformDir, closed by close.
func openPlatform(o Options, log *slog.Logger) (executor.Platform, func(), error) {
	if o.Platform != nil {
		return o.Platform, func() {}, nil
	}
	typ, dir := o.PlatformType, o.PlatformDir
	if typ == "" {
		typ = local.PlatformType
	}
	if dir == "" {
		dir = filepath.Join(o.DataDir, "platform")
	}
	p, err := platforms.New(typ, platforms.Config{Logger: log.With("side", "platform"), Dir: dir, Properties: o.PlatformProperties, AccessVars: o.PlatformAccessVars})
	if err != nil {
		return nil, nil, fmt.Errorf("fluidos node: %w", err)
	}
	return p, func() {
		if c, ok := p.(io.Closer); ok {
			if err := c.Close(); err != nil {
				log.Warn("closing the platform", "err", err)
			}
		}
	}, nil
}

// devBundle opens the development authority in dir and returns the node's
// bundle (with the advertised host as a SAN when it is not loopback),
// whose certificate, valid for validity, its Renewer renews.
func devBundle(dir, nodeID, advertise string, validity time.Duration, log *slog.Logger) (*devtls.Bundle, error) {
	ca, err := devtls.OpenCA(dir)
	if err != nil {
		return nil, err
	}
	opts := devtls.LeafOptions{Validity: validity}
	if host, _, err := net.SplitHostPort(advertise); err == nil && host != "" {
		if ip := net.ParseIP(host); ip != nil {
			opts.IPs = []net.IP{ip}
		} else {
			opts.DNSNames = []string{host}
		}
	}
	r, err := ca.Renewer(nodeID, opts, log)
	if err != nil {
		return nil, err
	}
	return r.Bundle(ca.Pool()), nil
}

// openEtcd connects to the external cluster of o, or starts the embedded
// one under DataDir/etcd. Under a development authority (DevTLSDir) the
// embedded etcd serves TLS, requires certificates of the authority and
// authenticates: the node, by its certificate (Common Name NodeID), is its
// only user. stop closes the client and stops the server.
func openEtcd(ctx context.Context, o Options, log *slog.Logger) (*clientv3.Client, []string, func(), error) {
	embed := etcd.EmbedConfig{DataDir: filepath.Join(o.DataDir, "etcd"), Logger: log}
	if len(o.EtcdEndpoints) == 0 && o.TLS == nil && o.DevTLSDir != "" {
		ca, err := devtls.OpenCA(o.DevTLSDir)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("fluidos node: embedded etcd: %w", err)
		}
		if embed.ClientTLS, err = etcd.DevServerTLS(ca, o.NodeID); err != nil {
			return nil, nil, nil, fmt.Errorf("fluidos node: embedded etcd: %w", err)
		}
		embed.Auth = &etcd.AuthPolicy{Users: []etcd.User{{Name: o.NodeID, Roles: []string{etcd.RootRole}}}}
	}
	e, err := etcd.Open(ctx, etcd.OpenConfig{
		Client: etcd.ClientConfig{Endpoints: o.EtcdEndpoints, CAFile: o.EtcdCAFile, CertFile: o.EtcdCertFile, KeyFile: o.EtcdKeyFile},
		Embed:  embed,
		Logger: log,
	})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("fluidos node: %w", err)
	}
	return e.Client, e.Endpoints, e.Close, nil
}

// refuseLargeBodies answers 413 to a request that declares a body over
// limit (the largest any REAR route accepts), before any route reads it;
// the routes check their own, smaller, limits.
func refuseLargeBodies(limit int64, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > limit {
			http.Error(w, fmt.Sprintf("request body of %d bytes exceeds %d bytes", r.ContentLength, limit), http.StatusRequestEntityTooLarge)
			return
		}
		next.ServeHTTP(w, r)
	})
}
