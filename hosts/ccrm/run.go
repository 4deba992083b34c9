package ccrm

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"github.com/edgekit/edgekit/atrest"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/edgekit/edgekit/hosts/controller"
	"github.com/edgekit/edgekit/internal/devtls"
	"github.com/edgekit/edgekit/internal/etcd"
	"github.com/edgekit/edgekit/internal/store"
	rmv1 "github.com/edgekit/edgekit/proto/edgekit/rm/v1"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
)

// Options configure Run: a whole replica process.
type Options struct {
	// EtcdEndpoints are the client URLs of the controller's etcd. Required.
	EtcdEndpoints []string
	// EtcdCAFile, EtcdCertFile and EtcdKeyFile are etcd client TLS files;
	// the certificate's Common Name is the replica's etcd user. With
	// DevTLSDir and no etcd files, the development authority issues them
	// (see EtcdUser).
	EtcdCAFile, EtcdCertFile, EtcdKeyFile string
	// EtcdUser is, with DevTLSDir and no etcd files, the name of the etcd
	// client certificate the authority issues, and so the replica's etcd
	// user; "" means controller.DefaultEtcdCCRMUser. The controller gives
	// it the CCRM role when it is one of its --etcd-ccrm-users.
	EtcdUser string
	// EncryptionKeyFile is the controller's key file (its
	// --encryption-key-file, by default <data-dir>/encryption.keys): the
	// CCRM reads the cloudlets' encrypted access variables with it. ""
	// reads no encrypted value (a cloudlet's is then an error naming it).
	EncryptionKeyFile string
	// KeyProvider, when set, is used instead of EncryptionKeyFile (an
	// external KMS, the controller's).
	KeyProvider atrest.KeyProvider
	// Region is the controller's region (default "local").
	Region string
	// Controller is the address of the controller's gRPC API. Required.
	Controller string
	// Token is the bearer token of a CCRM principal ("<token> ccrm" in the
	// controller's tokens file); "" sends none (a certificate then
	// identifies the replica).
	Token string
	// DevTLSDir is the controller's development authority
	// (<data-dir>/tls): the replica trusts its ca.crt and presents a
	// certificate it issues to controller.CCRMCertName.
	DevTLSDir string
	// DevTLSValidity is the validity of the replica's certificate of the
	// development authority; devtls.DefaultLeafValidity when zero. The
	// replica renews it when the controller asks (see
	// controller.CertRenewalKey), when it starts, and, should the
	// controller not ask, at nine tenths of its life.
	DevTLSValidity time.Duration
	// TLSCAFile verifies the controller; TLSCertFile and TLSKeyFile are the
	// replica's client certificate. Setting TLSCAFile turns TLS on.
	TLSCAFile, TLSCertFile, TLSKeyFile string
	// MetricsListen serves /metrics; "" serves none.
	MetricsListen string
	// Replica is the replica's configuration; Store and Reports are set
	// by Run.
	Replica Config
	// Ready, when set, is called once the replica runs.
	Ready func(r *Running)
}

// Running describes a replica started by Run.
type Running struct {
	// MetricsAddr is the address of /metrics, or "".
	MetricsAddr string
	// Certificate renews the replica's client certificate, or is nil
	// (no certificate, or one without renewal).
	Certificate *devtls.Renewer
	// RenewalsAsked counts the renewals the controller asked for that
	// replaced the replica's certificate.
	RenewalsAsked func() int64
	// Replica is the running replica.
	Replica *Replica
}

// Run runs a replica process until ctx ends: it connects to etcd and to the
// controller, serves /metrics, runs the replica, and on ctx's end stops it
// gracefully (see Replica.Start).
func Run(ctx context.Context, o Options) error {
	if len(o.EtcdEndpoints) == 0 {
		return errors.New("ccrm: the controller's etcd endpoints are required")
	}
	if o.Controller == "" {
		return errors.New("ccrm: the controller's address is required")
	}
	if o.Region == "" {
		o.Region = "local"
	}
	log := o.Replica.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	creds, renewer, err := o.transport(log)
	if err != nil {
		return err
	}
	if o.Token == "" && o.DevTLSDir == "" && o.TLSCertFile == "" {
		return errors.New("ccrm: no identity: give a CCRM token or a client certificate")
	}
	dopts := []grpc.DialOption{grpc.WithTransportCredentials(creds)}
	if o.Token != "" {
		dopts = append(dopts, grpc.WithPerRPCCredentials(bearer(o.Token)))
	}
	conn, err := grpc.NewClient(o.Controller, dopts...)
	if err != nil {
		return fmt.Errorf("ccrm: controller %s: %w", o.Controller, err)
	}
	defer conn.Close()
	ecfg, err := o.etcdClient()
	if err != nil {
		return err
	}
	ecfg.Logger = log
	cli, err := etcd.NewClient(ecfg)
	if err != nil {
		return fmt.Errorf("ccrm: %w", err)
	}
	defer cli.Close()
	env, _, err := atrest.HostKeys(o.KeyProvider, o.EncryptionKeyFile, "")
	if err != nil {
		return fmt.Errorf("ccrm: encryption keys: %w", err)
	}
	st, err := store.New(cli, o.Region, store.WithLogger(log), store.WithEncryption(env))
	if err != nil {
		return fmt.Errorf("ccrm: %w", err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	cfg := o.Replica
	cfg.Store, cfg.Reports, cfg.Registerer, cfg.Logger = st, rmv1.NewReportServiceClient(conn), reg, log
	r, err := New(cfg)
	if err != nil {
		return err
	}
	run := &Running{Replica: r, Certificate: renewer, RenewalsAsked: func() int64 { return 0 }}
	if renewer != nil {
		bctx, cancel := context.WithCancel(ctx)
		var asked atomic.Int64
		var wg sync.WaitGroup
		wg.Go(func() { _ = renewer.Start(bctx) })
		if o.DevTLSDir != "" {
			wg.Go(func() { followCertRenewals(bctx, cli, o.Region, renewer, &asked, log) })
		}
		run.RenewalsAsked = asked.Load
		defer func() { cancel(); wg.Wait() }()
	}
	var metricsSrv *http.Server
	if o.MetricsListen != "" {
		lis, err := net.Listen("tcp", o.MetricsListen)
		if err != nil {
			return fmt.Errorf("ccrm: metrics listen: %w", err)
		}
		run.MetricsAddr = lis.Addr().String()
		mux := http.NewServeMux()
		mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
		metricsSrv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = metricsSrv.Serve(lis) }()
	}
	log.LogAttrs(ctx, slog.LevelInfo, "ccrm ready", slog.String("replica", cfg.ReplicaID), slog.String("controller", o.Controller),
		slog.Any("etcd", o.EtcdEndpoints), slog.String("region", o.Region), slog.String("metrics", run.MetricsAddr))
	if o.Ready != nil {
		o.Ready(run)
	}
	err = r.Start(ctx)
	if metricsSrv != nil {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		_ = metricsSrv.Shutdown(sctx)
		cancel()
	}
	return err
}

// etcdClient returns how the replica reaches etcd: with the files given,
// or with a certificate of the development authority.
func (o *Options) etcdClient() (etcd.ClientConfig, error) {
	if o.DevTLSDir == "" || o.EtcdCAFile != "" || o.EtcdCertFile != "" || o.EtcdKeyFile != "" {
		if o.EtcdUser != "" {
			return etcd.ClientConfig{}, errors.New("ccrm: an etcd user names a certificate of the development authority: give it with --dev-tls and without etcd TLS files")
		}
		return etcd.ClientConfig{Endpoints: o.EtcdEndpoints, CAFile: o.EtcdCAFile, CertFile: o.EtcdCertFile, KeyFile: o.EtcdKeyFile}, nil
	}
	user := o.EtcdUser
	if user == "" {
		user = controller.DefaultEtcdCCRMUser
	}
	ca, err := devtls.OpenCA(o.DevTLSDir)
	if err != nil {
		return etcd.ClientConfig{}, fmt.Errorf("ccrm: dev TLS: %w", err)
	}
	cc, err := etcd.DevClientConfig(ca, user, o.EtcdEndpoints)
	if err != nil {
		return etcd.ClientConfig{}, fmt.Errorf("ccrm: etcd user: %w", err)
	}
	return cc, nil
}

// transport returns the credentials to reach the controller with, and the
// Renewer of the client certificate they present (nil without one).
func (o *Options) transport(log *slog.Logger) (credentials.TransportCredentials, *devtls.Renewer, error) {
	switch {
	case o.DevTLSDir != "" && (o.TLSCAFile != "" || o.TLSCertFile != ""):
		return nil, nil, errors.New("ccrm: a development authority and TLS files exclude each other")
	case o.DevTLSDir != "":
		ca, err := devtls.OpenCA(o.DevTLSDir)
		if err != nil {
			return nil, nil, fmt.Errorf("ccrm: dev TLS: %w", err)
		}
		r, err := ca.Renewer(controller.CCRMCertName, devtls.LeafOptions{Validity: o.DevTLSValidity}, log)
		if err != nil {
			return nil, nil, fmt.Errorf("ccrm: dev TLS: %w", err)
		}
		// The controller asks for renewals at about half the life; this is
		// the fallback.
		r.SetDue(0.9)
		return credentials.NewTLS(r.Bundle(ca.Pool()).ClientConfig()), r, nil
	case o.TLSCAFile != "":
		if (o.TLSCertFile == "") != (o.TLSKeyFile == "") {
			return nil, nil, errors.New("ccrm: a TLS certificate file and key file go together")
		}
		if o.TLSCertFile == "" {
			pem, err := os.ReadFile(o.TLSCAFile)
			if err != nil {
				return nil, nil, fmt.Errorf("ccrm: %w", err)
			}
			cfg := &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: newPool(pem)}
			if cfg.RootCAs == nil {
				return nil, nil, fmt.Errorf("ccrm: %s holds no PEM certificate", o.TLSCAFile)
			}
			return credentials.NewTLS(cfg), nil, nil
		}
		b, err := devtls.LoadRenewingBundle(o.TLSCertFile, o.TLSKeyFile, o.TLSCAFile, 0, log)
		if err != nil {
			return nil, nil, fmt.Errorf("ccrm: %w", err)
		}
		return credentials.NewTLS(b.ClientConfig()), b.Renewer(), nil
	case o.TLSCertFile != "":
		return nil, nil, errors.New("ccrm: a client certificate needs the authority of the controller's (TLS CA file)")
	}
	if host, _, err := net.SplitHostPort(o.Controller); err == nil && !isLoopback(host) {
		return nil, nil, fmt.Errorf("ccrm: controller %s is not on loopback: use TLS", o.Controller)
	}
	return insecure.NewCredentials(), nil, nil
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// bearer sends the CCRM's token with every call.
type bearer string

func (b bearer) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + string(b)}, nil
}

// RequireTransportSecurity allows a token over plaintext only on loopback,
// which transport checked.
func (b bearer) RequireTransportSecurity() bool { return false }
