package controller

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/edgekit/edgekit/atrest"
	"github.com/edgekit/edgekit/hosts/controller/notify"
	"github.com/edgekit/edgekit/hosts/controller/ui"
	"github.com/edgekit/edgekit/internal/devtls"
	"github.com/edgekit/edgekit/internal/etcd"
	"github.com/edgekit/edgekit/internal/store"
	rmv1 "github.com/edgekit/edgekit/proto/edgekit/rm/v1"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/keepalive"
)

// Options configure Run: a whole controller process.
type Options struct {
	// DataDir holds the embedded etcd's data, the admin token and, with
	// DevTLS, the development certificates. Required.
	DataDir string
	// Region names the region; objects live under /edgekit/<region>/.
	Region string
	// Listen is the API's address (host:port; port 0 picks a free one).
	Listen string
	// MetricsListen is the address of the HTTP server of /metrics and the
	// status page /ui; "" serves neither. It serves HTTPS, with the API's
	// certificate, whenever the API serves TLS (the page's login carries a
	// token).
	MetricsListen string
	// EtcdEndpoints selects an external etcd cluster; empty embeds one
	// under DataDir, listening on EtcdListen (loopback only).
	EtcdEndpoints []string
	// EtcdListen is the embedded etcd's client address ("" picks a free
	// loopback port). The address is written to DataDir/etcd-endpoint.
	EtcdListen string
	// EtcdQuotaBytes is the embedded etcd's database quota; 0 means
	// DefaultEtcdQuotaBytes. Past it etcd's NOSPACE alarm refuses writes
	// (the API answers ResourceExhausted; reads and deletes work) until
	// deletes make room: the controller then compacts and defragments the
	// database and disarms the alarm, without a restart. Run refuses to
	// start when DataDir's disk cannot hold the database up to the quota
	// and etcd's WAL, so that the alarm fires before the disk is full.
	EtcdQuotaBytes int64
	// SpaceCheckInterval is how often the controller reads etcd's alarms
	// and database size; 0 means etcd.DefaultSpaceCheckInterval. From 95%
	// of the quota on (etcd.FullPercent), the API refuses writes that add
	// data (deletes go on), so that the NOSPACE alarm, which refuses the
	// requests of deletion too, is a last resort.
	SpaceCheckInterval time.Duration
	// EtcdCAFile, EtcdCertFile and EtcdKeyFile are the controller's etcd
	// client TLS files: of an external cluster, or of the embedded one when
	// it serves EtcdServerCertFile.
	EtcdCAFile, EtcdCertFile, EtcdKeyFile string
	// EtcdServerCertFile and EtcdServerKeyFile, when set, make the
	// embedded etcd serve its clients over TLS with this certificate,
	// require client certificates signed by EtcdClientCAFile, and turn
	// etcd's authentication on (see EtcdAuthPolicy): the controller is
	// the user named by the Common Name of EtcdCertFile, the CCRMs those
	// of EtcdCCRMUsers. With DevTLS and none of them, the development
	// authority issues them all (the controller is "controller").
	// Without either, the embedded etcd serves plain HTTP without
	// authentication, for loopback use only.
	EtcdServerCertFile, EtcdServerKeyFile, EtcdClientCAFile string
	// EtcdCCRMUsers are the etcd users of the CCRM replicas when the
	// embedded etcd authenticates; nil means DefaultEtcdCCRMUser.
	EtcdCCRMUsers []string
	// TLS serves the API with this configuration; nil serves plaintext
	// (loopback use only) unless DevTLS is set.
	TLS *tls.Config
	// DevTLS creates (once) a local certificate authority under
	// DataDir/tls and a certificate for the controller (named
	// "controller"), and serves the API over TLS with it. Clients verify
	// the controller with DataDir/tls/ca.crt; resource managers may present
	// certificates of the same authority (they are verified when given).
	DevTLS bool
	// DevTLSValidity is the validity of the certificates the controller
	// issues itself from the development authority (its own, renewed at
	// two thirds of their life) and the horizon of its requests to the
	// CCRM replicas to renew theirs; devtls.DefaultLeafValidity when zero.
	DevTLSValidity time.Duration
	// TLSRenewer, when set, renews the certificate TLS presents (a TLS
	// built on its GetCertificate, see devtls.FileRenewer); Run runs it.
	TLSRenewer *devtls.Renewer
	// TokensFile lists the API's bearer tokens (see ParseTokens). Admin
	// tokens are also read from DataDir/admin.token, created on the first
	// start.
	TokensFile string
	// EncryptionKeyFile is the key file of the key-encryption keys that
	// seal the secrets (debug_redact fields) of stored objects; "" uses
	// DataDir/encryption.keys, created (0600) on the first start. See
	// package atrest for its format.
	EncryptionKeyFile string
	// KeyProvider, when set, wraps the data keys instead of a key file:
	// an external KMS.
	KeyProvider atrest.KeyProvider
	// Logger receives logs; nil discards.
	Logger *slog.Logger
	// StopTimeout bounds the graceful stop (see Config.StopTimeout).
	StopTimeout time.Duration
	// Notify tunes the notify server the CRMs connect to (Store, Backend,
	// Logger and Registerer are set by Run; RequireClientCert is forced on
	// when TLS verifies client certificates).
	Notify notify.Config
	// Setup, when set, runs after the controller is built and before it
	// serves (to register more services with c.RegisterService).
	Setup func(ctx context.Context, c *Controller) error
	// Ready, when set, is called once the API and metrics listen.
	Ready func(r *Running)
	// UISources are shown on the status page beside the controller's own
	// objects (the FLUIDOS nodes' trades, for example; see
	// ui/fluidossource).
	UISources []ui.Source
}

// DefaultEtcdQuotaBytes is the embedded etcd's database quota when
// Options.EtcdQuotaBytes is zero: etcd's own default, 2 GiB.
const DefaultEtcdQuotaBytes = etcd.DefaultQuotaBackendBytes

// Running describes a controller started by Run.
type Running struct {
	// Addr is the API's address.
	Addr string
	// MetricsAddr is the address of /metrics and /ui, or "".
	MetricsAddr string
	// MetricsTLS says whether MetricsAddr serves HTTPS (it does when the
	// API serves TLS).
	MetricsTLS bool
	// EtcdEndpoints are the etcd client endpoints the controller uses.
	EtcdEndpoints []string
	// AdminTokenFile holds an admin token.
	AdminTokenFile string
	// CAFile is the development authority's certificate, with DevTLS.
	CAFile string
	// EtcdAuth says whether the embedded etcd serves TLS and
	// authenticates its clients.
	EtcdAuth bool
	// Controller is the running controller.
	Controller *Controller
	// Notify is the notify server the CRMs connect to.
	Notify *notify.Server
}

// Run runs a controller process until ctx ends: it starts (or connects to)
// etcd, serves the API (with the CRMs' notify stream) and metrics, and on ctx's end stops in order (the
// API gracefully, then etcd), so nothing acknowledged is lost.
func Run(ctx context.Context, o Options) error {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if o.DataDir == "" {
		return errors.New("controller: a data directory is required")
	}
	if err := os.MkdirAll(o.DataDir, 0o700); err != nil {
		return fmt.Errorf("controller: %w", err)
	}
	if o.Region == "" {
		o.Region = "local"
	}
	tokens := NewTokens()
	if o.TokensFile != "" {
		t, err := LoadTokens(o.TokensFile)
		if err != nil {
			return fmt.Errorf("controller: %w", err)
		}
		tokens = t
	}
	adminFile := filepath.Join(o.DataDir, "admin.token")
	admin, err := EnsureAdminToken(adminFile)
	if err != nil {
		return fmt.Errorf("controller: admin token: %w", err)
	}
	tokens.Add(admin, Principal{Admin: true})

	if o.EtcdQuotaBytes == 0 {
		o.EtcdQuotaBytes = DefaultEtcdQuotaBytes
	}
	cli, endpoints, etcdAuth, stopEtcd, err := openEtcd(ctx, o, log)
	if err != nil {
		return err
	}
	defer stopEtcd()

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	sm, err := NewStoreMetrics(reg)
	if err != nil {
		return err
	}
	space, stopGuard, err := guardSpace(ctx, cli, o, reg, log)
	if err != nil {
		return err
	}
	defer stopGuard() // before etcd stops
	env, keyFile, err := atrest.HostKeys(o.KeyProvider, o.EncryptionKeyFile, o.DataDir)
	if err != nil {
		return fmt.Errorf("controller: encryption keys: %w", err)
	}
	st, err := store.New(cli, o.Region, store.WithLogger(log), store.WithEncryption(env), store.WithObserver(store.ObserverFunc(func(ob store.Observation) {
		sm.Observe(ob)
		if errors.Is(ob.Err, store.ErrNoSpace) {
			space.guard.Check()
		}
	})))
	if err != nil {
		return fmt.Errorf("controller: %w", err)
	}
	var devCA *devtls.CA
	if o.DevTLS {
		if devCA, err = devtls.OpenCA(filepath.Join(o.DataDir, "tls")); err != nil {
			return fmt.Errorf("controller: dev TLS: %w", err)
		}
	}
	if o.DevTLS && o.TLS == nil {
		cfg, r, err := devServerTLS(devCA, o.DevTLSValidity, log)
		if err != nil {
			return fmt.Errorf("controller: dev TLS: %w", err)
		}
		o.TLS, o.TLSRenewer = cfg, r
	}
	bg, stopBackground := background(ctx)
	defer stopBackground()
	if o.TLSRenewer != nil {
		bg(func(ctx context.Context) { _ = o.TLSRenewer.Start(ctx) })
	}
	if o.DevTLS {
		validity := o.DevTLSValidity
		if validity <= 0 {
			validity = devtls.DefaultLeafValidity
		}
		bg(func(ctx context.Context) { tellCCRMsToRenew(ctx, cli, o.Region, validity, log) })
	}
	sopts := []grpc.ServerOption{
		// CRMs keep their notify stream open for days: let their transport
		// keepalives through and probe idle connections ourselves.
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 5 * time.Second, PermitWithoutStream: true}),
		grpc.KeepaliveParams(keepalive.ServerParameters{Time: 30 * time.Second, Timeout: 10 * time.Second}),
	}
	if o.TLS != nil {
		sopts = append(sopts, grpc.Creds(credentials.NewTLS(o.TLS)))
	}
	sopts = append(sopts, grpc.ChainUnaryInterceptor(space.unary), grpc.ChainStreamInterceptor(space.stream))
	c, err := New(Config{Store: st, Tokens: tokens, Logger: log, Registerer: reg, ServerOptions: sopts, StopTimeout: o.StopTimeout,
		SelfAuthenticated: []string{notify.ConnectMethod, RenewCertificateMethod}})
	if err != nil {
		return err
	}
	if devCA != nil {
		// Hosts holding a certificate of the authority (not its key) renew
		// it here, for their own identity only.
		c.RegisterService(&rmv1.CertificateService_ServiceDesc, &certService{ca: devCA, validity: o.DevTLSValidity, log: log})
	}
	ncfg := o.Notify
	ncfg.Store, ncfg.Backend, ncfg.Logger, ncfg.Registerer = st, c.NotifyBackend(), log, reg
	if o.TLS != nil && o.TLS.ClientAuth >= tls.VerifyClientCertIfGiven {
		ncfg.RequireClientCert = true
	}
	if o.DevTLS && ncfg.CloudletCertName == nil {
		// The development authority names a CRM's certificate after its
		// cloudlet: hold each CRM to its own.
		ncfg.CloudletCertName = notify.CRMCertName
	}
	ns, err := notify.New(ncfg)
	if err != nil {
		return err
	}
	ns.Register(c)
	stopNotify := context.AfterFunc(ctx, ns.Shutdown) // before the graceful stop waits for streams
	defer stopNotify()
	stopMigrate := st.StartRewrap(ctx) // every kind is registered by New
	defer stopMigrate()                // before etcd stops
	if o.Setup != nil {
		if err := o.Setup(ctx, c); err != nil {
			return err
		}
	}
	lis, err := net.Listen("tcp", o.Listen)
	if err != nil {
		return fmt.Errorf("controller: listen: %w", err)
	}
	run := &Running{Addr: lis.Addr().String(), EtcdEndpoints: endpoints, AdminTokenFile: adminFile, Controller: c, Notify: ns}
	if o.DevTLS {
		run.CAFile = filepath.Join(o.DataDir, "tls", "ca.crt")
	}
	run.EtcdAuth = etcdAuth

	var metricsSrv *http.Server
	if o.MetricsListen != "" {
		mlis, err := net.Listen("tcp", o.MetricsListen)
		if err != nil {
			lis.Close()
			return fmt.Errorf("controller: metrics listen: %w", err)
		}
		run.MetricsAddr = mlis.Addr().String()
		page, err := ui.New(ui.Config{Authenticate: c.UIAuthenticator(), Sources: append(append(c.UISources(), space.uiSource()), o.UISources...), Logger: log})
		if err != nil {
			lis.Close()
			mlis.Close()
			return fmt.Errorf("controller: status page: %w", err)
		}
		go func() { _ = page.Start(ctx) }()
		mux := http.NewServeMux()
		mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
		mux.Handle("/ui", page)
		mux.Handle("/ui/", page)
		metricsSrv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		if o.TLS != nil {
			metricsSrv.TLSConfig = httpTLS(o.TLS)
			run.MetricsTLS = true
			go func() { _ = metricsSrv.ServeTLS(mlis, "", "") }()
		} else {
			go func() { _ = metricsSrv.Serve(mlis) }()
		}
	}
	log.LogAttrs(ctx, slog.LevelInfo, "controller ready", slog.String("region", o.Region), slog.String("addr", run.Addr),
		slog.String("metrics", run.MetricsAddr), slog.Any("etcd", endpoints), slog.String("admin_token_file", adminFile),
		slog.String("encryption_key_file", keyFile))
	if o.Ready != nil {
		o.Ready(run)
	}
	err = c.Serve(ctx, lis)
	if metricsSrv != nil {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		_ = metricsSrv.Shutdown(sctx)
		cancel()
	}
	return err
}

// openEtcd connects to the external cluster of o, or starts the embedded
// one under DataDir/etcd, over TLS with authentication when o gives it
// certificates (or DevTLS). stop closes the client and stops the server.
func openEtcd(ctx context.Context, o Options, log *slog.Logger) (cli *clientv3.Client, endpoints []string, auth bool, stop func(), err error) {
	embed := etcd.EmbedConfig{Name: "controller", DataDir: filepath.Join(o.DataDir, "etcd"), ClientAddr: o.EtcdListen, Logger: log,
		QuotaBackendBytes: o.EtcdQuotaBytes}
	if len(o.EtcdEndpoints) == 0 {
		if embed.ClientTLS, embed.Auth, err = embeddedEtcdAuth(o); err != nil {
			return nil, nil, false, nil, fmt.Errorf("controller: embedded etcd: %w", err)
		}
		if embed.Auth == nil {
			log.Warn("the embedded etcd serves plain HTTP without authentication (loopback use only); give --dev-tls or --etcd-server-cert-file")
		}
	}
	e, err := etcd.Open(ctx, etcd.OpenConfig{
		Client:       etcd.ClientConfig{Endpoints: o.EtcdEndpoints, CAFile: o.EtcdCAFile, CertFile: o.EtcdCertFile, KeyFile: o.EtcdKeyFile},
		Embed:        embed,
		EndpointFile: filepath.Join(o.DataDir, "etcd-endpoint"),
		Logger:       log,
	})
	if err != nil {
		return nil, nil, false, nil, fmt.Errorf("controller: %w", err)
	}
	if len(o.EtcdEndpoints) == 0 && embed.Auth == nil {
		// A data directory that ran with authentication keeps it.
		cctx, cancel := context.WithTimeout(ctx, etcd.DefaultReadyTimeout)
		_, err := e.Client.Get(cctx, store.Root, clientv3.WithPrefix(), clientv3.WithLimit(1), clientv3.WithKeysOnly())
		cancel()
		if errors.Is(err, rpctypes.ErrUserEmpty) || errors.Is(err, rpctypes.ErrPermissionDenied) {
			e.Close()
			return nil, nil, false, nil, fmt.Errorf("controller: the embedded etcd under %s has authentication on (it ran with --dev-tls or etcd server certificates): start the controller with them again", embed.DataDir)
		}
	}
	return e.Client, e.Endpoints, embed.Auth != nil, e.Close, nil
}

// embeddedEtcdAuth returns the TLS and the authorization of the embedded
// etcd o asks for: nil, nil without certificates nor DevTLS.
func embeddedEtcdAuth(o Options) (*etcd.ServerTLS, *etcd.AuthPolicy, error) {
	ccrms := o.EtcdCCRMUsers
	if ccrms == nil {
		ccrms = []string{DefaultEtcdCCRMUser}
	}
	var t *etcd.ServerTLS
	var controllerUser string
	switch {
	case o.EtcdServerCertFile != "" || o.EtcdServerKeyFile != "" || o.EtcdClientCAFile != "":
		if o.EtcdServerCertFile == "" || o.EtcdServerKeyFile == "" || o.EtcdClientCAFile == "" {
			return nil, nil, errors.New("the server certificate, its key and the client CA go together (--etcd-server-cert-file, --etcd-server-key-file, --etcd-client-ca-file)")
		}
		if o.EtcdCertFile == "" || o.EtcdKeyFile == "" || o.EtcdCAFile == "" {
			return nil, nil, errors.New("a TLS embedded etcd needs the controller's client certificate, its key and the CA of the server certificate (--etcd-cert-file, --etcd-key-file, --etcd-ca-file)")
		}
		name, err := certCommonName(o.EtcdCertFile)
		if err != nil {
			return nil, nil, fmt.Errorf("controller client certificate: %w", err)
		}
		controllerUser = name
		t = &etcd.ServerTLS{CertFile: o.EtcdServerCertFile, KeyFile: o.EtcdServerKeyFile, TrustedCAFile: o.EtcdClientCAFile,
			ClientCertAuth: true, ClientCertFile: o.EtcdCertFile, ClientKeyFile: o.EtcdKeyFile}
	case o.DevTLS:
		ca, err := devtls.OpenCA(filepath.Join(o.DataDir, "tls"))
		if err != nil {
			return nil, nil, err
		}
		controllerUser = devControllerName
		if t, err = etcd.DevServerTLS(ca, controllerUser); err != nil {
			return nil, nil, err
		}
	default:
		return nil, nil, nil
	}
	p, err := EtcdAuthPolicy(o.Region, EtcdUsers{Controller: controllerUser, CCRMs: ccrms})
	if err != nil {
		return nil, nil, err
	}
	return t, &p, nil
}

// guardSpace runs an etcd.SpaceGuard on cli until stop is called: it
// follows etcd's NOSPACE alarm and the database's size for /metrics, the
// status page, the log and the API (which refuses writes that add data
// while the store is full), and recovers the embedded etcd once deletes
// made room.
func guardSpace(ctx context.Context, cli *clientv3.Client, o Options, reg prometheus.Registerer, log *slog.Logger) (*storeSpace, func(), error) {
	space, err := newStoreSpace(reg)
	if err != nil {
		return nil, nil, err
	}
	cfg := etcd.SpaceGuardConfig{Client: cli, Interval: o.SpaceCheckInterval, Logger: log, Observe: space.observe}
	if len(o.EtcdEndpoints) == 0 {
		cfg.Recover, cfg.Quota = true, o.EtcdQuotaBytes
	}
	g, err := etcd.NewSpaceGuard(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("controller: %w", err)
	}
	space.guard = g
	gctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = g.Start(gctx)
	}()
	return space, func() { cancel(); <-done }, nil
}

// httpTLS is the configuration of the HTTP listener (the status page and
// /metrics) of a controller whose API serves api: the same certificate,
// and no request for a client certificate (browsers would ask their user
// for one; the page authenticates by token).
func httpTLS(api *tls.Config) *tls.Config {
	cfg := api.Clone()
	cfg.ClientAuth = tls.NoClientCert
	cfg.ClientCAs = nil
	cfg.VerifyPeerCertificate = nil
	cfg.NextProtos = nil // ServeTLS offers h2 and http/1.1
	return cfg
}

// devControllerName is the Common Name of the controller's certificates
// from the development authority: the API serves the one of that name
// (renewed while the controller runs), and the controller presents its
// etcd client certificate (files etcd.DevClientCertName, long-lived) to
// the embedded etcd, where it is the etcd user "controller".
const devControllerName = "controller"

// background runs functions until ctx ends or stop is called; stop
// returns once they all have.
func background(ctx context.Context) (run func(func(context.Context)), stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	return func(f func(context.Context)) { wg.Go(func() { f(ctx) }) }, func() { cancel(); wg.Wait() }
}
