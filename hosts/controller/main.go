package controller

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/edgekit/edgekit/internal/cmdutil"
	"github.com/edgekit/edgekit/internal/devtls"
	"github.com/edgekit/edgekit/internal/etcd"
)

// Main runs a controller process from command-line arguments until ctx
// ends: the whole of cmd/controller, importable so that the multi-call
// edgekit binary shares its flags. It returns flag.ErrHelp after -h, an
// error for bad arguments (after printing usage to stderr) and for a
// controller that could not run.
//
// "controller etcd-setup [flags]" sets up the etcd users and roles of a
// region on an external cluster instead (see EtcdSetupMain).
// "controller rewrap" and "controller keys list|add|remove" manage the
// keys that encrypt the stored secrets (see keysUsage).
func Main(ctx context.Context, args []string, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "etcd-setup" {
		return EtcdSetupMain(ctx, args[1:], os.Stdout, stderr)
	}
	if len(args) > 0 && (args[0] == "rewrap" || args[0] == "keys") {
		return keysMain(ctx, args, os.Stdout, stderr)
	}
	fs := flag.NewFlagSet("controller", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o Options
	var etcdEndpoints string
	var hf cmdutil.HostFlags
	var ff fluidosFlags
	fs.StringVar(&o.DataDir, "data-dir", "", "directory for the embedded etcd, the admin token and development certificates (required)")
	fs.StringVar(&o.Region, "region", "local", "name of the region")
	fs.StringVar(&o.Listen, "listen", "127.0.0.1:55001", "address of the gRPC API")
	fs.StringVar(&o.MetricsListen, "http-listen", "127.0.0.1:55002", "address of /metrics and the status page /ui, over HTTPS when the API serves TLS (empty: none)")
	fs.StringVar(&o.MetricsListen, "metrics-listen", "127.0.0.1:55002", "same as --http-listen")
	fs.StringVar(&etcdEndpoints, "etcd-endpoints", "", "comma-separated client URLs of an external etcd cluster (default: embedded etcd)")
	fs.StringVar(&o.EtcdListen, "etcd-listen", "", "client address of the embedded etcd (default: a free loopback port)")
	fs.Int64Var(&o.EtcdQuotaBytes, "etcd-quota-bytes", DefaultEtcdQuotaBytes,
		"database quota of the embedded etcd, in bytes: past it writes are refused (reads and deletes work) until deletes free space; start-up refuses when --data-dir's disk cannot hold it and etcd's WAL")
	fs.StringVar(&o.EtcdCAFile, "etcd-ca-file", "", "CA of the etcd servers' certificates (an external cluster, or the embedded etcd with --etcd-server-cert-file)")
	fs.StringVar(&o.EtcdCertFile, "etcd-cert-file", "", "the controller's etcd client certificate; its Common Name is its etcd user")
	fs.StringVar(&o.EtcdKeyFile, "etcd-key-file", "", "key of --etcd-cert-file")
	fs.StringVar(&o.EtcdServerCertFile, "etcd-server-cert-file", "", "serve the embedded etcd over TLS with this certificate, require client certificates and turn etcd authentication on (default with --dev-tls: certificates of the development authority)")
	fs.StringVar(&o.EtcdServerKeyFile, "etcd-server-key-file", "", "key of --etcd-server-cert-file")
	fs.StringVar(&o.EtcdClientCAFile, "etcd-client-ca-file", "", "CA of the etcd client certificates the embedded etcd accepts (with --etcd-server-cert-file)")
	var ccrmUsers string
	fs.StringVar(&ccrmUsers, "etcd-ccrm-users", DefaultEtcdCCRMUser, "comma-separated etcd users of the CCRM replicas (the Common Names of their etcd client certificates), when the embedded etcd authenticates")
	var tlsCert, tlsKey, tlsClientCA string
	fs.BoolVar(&o.DevTLS, "dev-tls", false, "serve TLS (the API, the status page and /metrics) with a local certificate authority created under <data-dir>/tls (clients trust <data-dir>/tls/ca.crt)")
	fs.DurationVar(&o.DevTLSValidity, "dev-tls-validity", devtls.DefaultLeafValidity, "with --dev-tls: validity of the controller's certificate (renewed at two thirds of its life) and of the CCRM replicas' (the controller tells them to renew at half)")
	fs.StringVar(&tlsCert, "tls-cert-file", "", "serve TLS with this certificate (PEM), reloaded when the files change")
	fs.StringVar(&tlsKey, "tls-key-file", "", "key of --tls-cert-file (PEM)")
	fs.StringVar(&tlsClientCA, "tls-client-ca-file", "", "verify client certificates, when given, against these authorities (PEM)")
	fs.StringVar(&o.EncryptionKeyFile, "encryption-key-file", "",
		"key file of the keys that encrypt stored secrets (default: <data-dir>/encryption.keys, created 0600 on the first start); back it up apart from etcd")
	fs.StringVar(&o.TokensFile, "tokens-file", "", "file of API tokens, one \"<token> admin|ccrm|org:<organization>\" per line")
	fs.DurationVar(&o.Notify.KeepaliveInterval, "notify-keepalive", 10*time.Second, "CRMs hear from the controller at least this often")
	fs.DurationVar(&o.StopTimeout, "stop-timeout", 10*time.Second, "how long in-flight calls may run after a stop signal")
	ff.register(fs)
	hf.Register(fs)
	err := cmdutil.Parse(fs, args)
	if err != nil {
		return err
	}
	if o.DataDir == "" {
		return fmt.Errorf("--data-dir is required")
	}
	if etcdEndpoints != "" {
		o.EtcdEndpoints = strings.Split(etcdEndpoints, ",")
	}
	o.EtcdCCRMUsers = cmdutil.SplitList(ccrmUsers)
	if o.EtcdCCRMUsers == nil {
		o.EtcdCCRMUsers = []string{}
	}
	if o.DevTLSValidity <= 0 {
		return fmt.Errorf("--dev-tls-validity %v: want a positive duration", o.DevTLSValidity)
	}
	if tlsCert != "" && o.DevTLS {
		return fmt.Errorf("--dev-tls and --tls-cert-file exclude each other")
	}
	log, err := hf.Logger(stderr)
	if err != nil {
		return err
	}
	if o.TLS, o.TLSRenewer, err = serverTLS(tlsCert, tlsKey, tlsClientCA, log); err != nil {
		return err
	}
	o.Logger = log
	srcs, closeSources, err := ff.sources(log)
	if err != nil {
		return err
	}
	defer closeSources()
	o.UISources = srcs
	defer hf.Done()
	o.Ready = func(r *Running) {
		files := map[string]string{"admin-token": r.AdminTokenFile}
		if r.CAFile != "" {
			files["ca"] = r.CAFile
		}
		hf.Ready(log, cmdutil.Ready{Listeners: map[string]string{"api": r.Addr, "http": r.MetricsAddr}, Etcd: r.EtcdEndpoints, Files: files})
	}
	err = Run(ctx, o)
	if se := (*etcd.SpaceError)(nil); errors.As(err, &se) {
		return fmt.Errorf("%w (--etcd-quota-bytes)", err)
	}
	return err
}

// serverTLS builds the API's TLS configuration from certificate files,
// which the returned Renewer reloads when they change; nil when none is
// given.
func serverTLS(certFile, keyFile, clientCAFile string, log *slog.Logger) (*tls.Config, *devtls.Renewer, error) {
	if certFile == "" && keyFile == "" {
		if clientCAFile != "" {
			return nil, nil, fmt.Errorf("--tls-client-ca-file needs --tls-cert-file and --tls-key-file")
		}
		return nil, nil, nil
	}
	if certFile == "" || keyFile == "" {
		return nil, nil, fmt.Errorf("--tls-cert-file and --tls-key-file go together")
	}
	r, err := devtls.FileRenewer(certFile, keyFile, 0, log)
	if err != nil {
		return nil, nil, fmt.Errorf("TLS certificate: %w", err)
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: r.GetCertificate}
	if clientCAFile != "" {
		pem, err := os.ReadFile(clientCAFile)
		if err != nil {
			return nil, nil, fmt.Errorf("--tls-client-ca-file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, nil, fmt.Errorf("--tls-client-ca-file %s holds no PEM certificate", clientCAFile)
		}
		cfg.ClientCAs = pool
		cfg.ClientAuth = tls.VerifyClientCertIfGiven
	}
	return cfg, r, nil
}
