package crm

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/hosts/controller/notify"
	"github.com/edgekit/edgekit/internal/devtls"
	"github.com/edgekit/edgekit/platforms"
	rmv1 "github.com/edgekit/edgekit/proto/edgekit/rm/v1"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
)

// Options configure Run: a whole CRM process.
type Options struct {
	// Controller is the address of the controller's API. Required.
	Controller string
	// Cloudlet is "<organization>/<name>". Required.
	Cloudlet string
	// AccessKey is the cloudlet's access key; AccessKeyFile a file holding
	// it (readable by its owner only). Exactly one is required.
	AccessKey, AccessKeyFile string
	// Platform is the registry name of the platform ("local", "fake"...);
	// it must be registered (imported) by the program. Required.
	Platform string
	// PlatformProperties are handed to the platform (see each platform's
	// documented properties).
	PlatformProperties map[string]string
	// StateDir is where the platform keeps its files, under
	// <StateDir>/<Platform>; "" lets the platform choose.
	StateDir string
	// TLS connects to the controller with this configuration (a client
	// certificate in it makes the link mutual TLS); nil connects without
	// TLS, for loopback only, unless DevTLSDir is set.
	TLS *tls.Config
	// DevTLSDir is the directory of a development certificate authority
	// (the controller's <data-dir>/tls with --dev-tls): the CRM gets a
	// certificate of it (named "crm-<organization>.<name>") and connects
	// with mutual TLS, trusting that authority.
	DevTLSDir string
	// DevTLSValidity is the validity of the CRM's certificates of the
	// development authority; devtls.DefaultLeafValidity when zero. The CRM
	// renews its own at two thirds of its life.
	DevTLSValidity time.Duration
	// TLSRenewer, when set, renews the client certificate TLS presents (a
	// TLS built on its GetClientCertificate, see devtls.FileRenewer); Run
	// runs it.
	TLSRenewer *devtls.Renewer
	// RenewFromController renews the client certificate of TLSRenewer (a
	// certificate of the controller's development authority, given without
	// the authority's key) through the controller's CertificateService,
	// for a new key each time, at two thirds of its life; a TLSRenewer over
	// files has the renewed certificate and key written back to them.
	RenewFromController bool
	// MetricsListen serves /metrics on this address; "" serves none.
	MetricsListen string
	// Logger receives logs; nil discards.
	Logger *slog.Logger
	// StopTimeout bounds the graceful stop (see Config.StopTimeout).
	StopTimeout time.Duration
	// ReconnectMin and ReconnectMax bound the reconnection back-off.
	ReconnectMin, ReconnectMax time.Duration
	// Ready, when set, is called once the CRM runs and metrics listen.
	Ready func(r *Running)
}

// Running describes a CRM started by Run.
type Running struct {
	// MetricsAddr is the address of /metrics, or "".
	MetricsAddr string
	// CRM is the running CRM.
	CRM *CRM
	// Certificate renews the CRM's client certificate, or is nil (no
	// certificate, or one without renewal).
	Certificate *devtls.Renewer
}

// ParseCloudletKey parses "<organization>/<name>".
func ParseCloudletKey(s string) (*edgeproto.CloudletKey, error) {
	org, name, ok := strings.Cut(s, "/")
	if !ok || org == "" || name == "" || strings.Contains(name, "/") {
		return nil, fmt.Errorf("%w: cloudlet %q: want <organization>/<name>", ErrConfig, s)
	}
	return &edgeproto.CloudletKey{Organization: org, Name: name}, nil
}

// ReadAccessKeyFile reads an access key from path: the file must not be
// readable by group or others, and must hold the key (surrounding space is
// trimmed).
func ReadAccessKeyFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("%w: access key file: %w", ErrConfig, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("%w: access key file %s is readable by group or others (mode %v): chmod 600 it",
			ErrConfig, path, fi.Mode().Perm())
	}
	b := make([]byte, 4096)
	n, err := f.Read(b)
	if err != nil {
		return "", fmt.Errorf("%w: access key file %s: %w", ErrConfig, path, err)
	}
	key := strings.TrimSpace(string(b[:n]))
	if key == "" {
		return "", fmt.Errorf("%w: access key file %s is empty", ErrConfig, path)
	}
	return key, nil
}

// Run runs a CRM process until ctx ends: it builds the platform from the
// registry, serves /metrics, runs the CRM and stops it gracefully.
func Run(ctx context.Context, o Options) error {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	key, err := ParseCloudletKey(o.Cloudlet)
	if err != nil {
		return err
	}
	access := o.AccessKey
	switch {
	case access != "" && o.AccessKeyFile != "":
		return fmt.Errorf("%w: give the access key or its file, not both", ErrConfig)
	case o.AccessKeyFile != "":
		if access, err = ReadAccessKeyFile(o.AccessKeyFile); err != nil {
			return err
		}
	case access == "":
		return fmt.Errorf("%w: the cloudlet's access key (or its file) is required", ErrConfig)
	}
	if o.Platform == "" {
		return fmt.Errorf("%w: a platform is required (registered: %s)", ErrConfig, strings.Join(platforms.Names(), ", "))
	}
	dir := ""
	if o.StateDir != "" {
		dir = filepath.Join(o.StateDir, o.Platform)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("crm: state directory: %w", err)
		}
	}
	p, err := platforms.New(o.Platform, platforms.Config{Logger: log, Dir: dir, Properties: o.PlatformProperties})
	if err != nil {
		return fmt.Errorf("crm: %w", err)
	}
	if closer, ok := p.(io.Closer); ok { // a platform that holds resources until closed
		defer closer.Close()
	}
	if o.DevTLSDir != "" && o.TLS == nil {
		if o.TLS, o.TLSRenewer, err = devClientTLS(o.DevTLSDir, key, o.DevTLSValidity, log); err != nil {
			return fmt.Errorf("crm: dev TLS: %w", err)
		}
	}
	if o.RenewFromController {
		if err := o.renewFromController(log); err != nil {
			return err
		}
	}
	if o.TLSRenewer != nil {
		rctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); _ = o.TLSRenewer.Start(rctx) }()
		defer func() { cancel(); <-done }()
	}
	creds := insecure.NewCredentials()
	if o.TLS != nil {
		creds = credentials.NewTLS(o.TLS)
	} else if !loopback(o.Controller) {
		log.Warn("connecting to a controller off this host without TLS: the access key crosses the network in clear",
			slog.String("controller", o.Controller))
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	c, err := New(Config{Controller: o.Controller, DialOptions: []grpc.DialOption{grpc.WithTransportCredentials(creds)},
		Cloudlet: key, AccessKey: access, AccessKeyFile: o.AccessKeyFile, Platform: p, Logger: log, Registerer: reg, StopTimeout: o.StopTimeout,
		ReconnectMin: o.ReconnectMin, ReconnectMax: o.ReconnectMax})
	if err != nil {
		return err
	}
	run := &Running{CRM: c, Certificate: o.TLSRenewer}
	if o.MetricsListen != "" {
		lis, err := net.Listen("tcp", o.MetricsListen)
		if err != nil {
			return fmt.Errorf("crm: metrics listen: %w", err)
		}
		run.MetricsAddr = lis.Addr().String()
		mux := http.NewServeMux()
		mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
		srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = srv.Serve(lis) }()
		defer func() {
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			_ = srv.Shutdown(sctx)
		}()
	}
	log.LogAttrs(ctx, slog.LevelInfo, "CRM ready", slog.String("cloudlet", o.Cloudlet), slog.String("platform", o.Platform),
		slog.String("controller", o.Controller), slog.String("metrics", run.MetricsAddr), slog.String("state_dir", dir))
	if o.Ready != nil {
		o.Ready(run)
	}
	return c.Start(ctx)
}

// loopback reports whether addr (host:port) names this host.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// devClientTLS gets the CRM's certificate from the development authority
// in dir and returns the client configuration of mutual TLS, which
// presents the current certificate of the returned Renewer on each
// handshake.
func devClientTLS(dir string, cloudlet *edgeproto.CloudletKey, validity time.Duration, log *slog.Logger) (*tls.Config, *devtls.Renewer, error) {
	ca, err := devtls.OpenCA(dir)
	if err != nil {
		return nil, nil, err
	}
	r, err := ca.Renewer(notify.CRMCertName(cloudlet), devtls.LeafOptions{Validity: validity}, log)
	if err != nil {
		return nil, nil, err
	}
	return r.Bundle(ca.Pool()).ClientConfig(), r, nil
}

// renewFromController replaces o.TLSRenewer by one that renews its
// certificate through the controller, over a new connection each time so
// that the controller sees the current certificate.
func (o *Options) renewFromController(log *slog.Logger) error {
	if o.TLS == nil || o.TLSRenewer == nil || o.DevTLSDir != "" {
		return fmt.Errorf("%w: renewing through the controller needs a client certificate given as files (not --dev-tls)", ErrConfig)
	}
	renew := func(ctx context.Context, csr []byte) ([]byte, error) {
		conn, err := grpc.NewClient(o.Controller, grpc.WithTransportCredentials(credentials.NewTLS(o.TLS)))
		if err != nil {
			return nil, err
		}
		defer conn.Close()
		resp, err := rmv1.NewCertificateServiceClient(conn).RenewCertificate(ctx, &rmv1.RenewCertificateRequest{Csr: csr})
		if err != nil {
			return nil, err
		}
		return resp.GetCertificate(), nil
	}
	r, err := devtls.RemoteRenewer(*o.TLSRenewer.Current(), renew, log)
	if err != nil {
		return fmt.Errorf("crm: %w", err)
	}
	if certFile, keyFile := o.TLSRenewer.Files(); certFile != "" {
		r.PersistTo(certFile, keyFile)
	}
	cfg := o.TLS.Clone()
	cfg.Certificates, cfg.GetClientCertificate = nil, r.GetClientCertificate
	o.TLS, o.TLSRenewer = cfg, r
	return nil
}
