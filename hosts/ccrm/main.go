package ccrm

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"
)

// TokenEnv is the environment variable a replica reads its CCRM token from
// when no --token-file is given.
const TokenEnv = "EDGEKIT_CCRM_TOKEN"

// Main runs a replica process from command-line arguments until ctx ends:
// the whole of cmd/ccrm, importable so that a binary with other platforms
// linked in (imported for their registration) is one line. It returns an
// error for bad arguments (after printing usage to stderr) and for a
// replica that could not run.
func Main(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("ccrm", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o Options
	host, _ := os.Hostname()
	var etcdEndpoints, platformsFlag, tokenFile, logFormat, logLevel string
	fs.StringVar(&etcdEndpoints, "etcd-endpoints", "", "comma-separated client URLs of the controller's etcd (required; the controller writes its embedded one to <data-dir>/etcd-endpoint)")
	fs.StringVar(&o.Controller, "controller", "127.0.0.1:55001", "address of the controller's gRPC API")
	fs.StringVar(&o.Region, "region", "local", "the controller's region")
	fs.StringVar(&platformsFlag, "platforms", "", "comma-separated platform types to serve (default: every one linked in)")
	fs.StringVar(&o.Replica.ReplicaID, "replica-id", fmt.Sprintf("%s-%d", host, os.Getpid()), "name of this replica in its claims and logs")
	fs.StringVar(&tokenFile, "token-file", "", "file holding a CCRM token of the controller (default: $"+TokenEnv+")")
	fs.StringVar(&o.DevTLSDir, "dev-tls", "", "the controller's development authority (<controller data-dir>/tls): mutual TLS with a \"ccrm\" certificate it issues")
	fs.StringVar(&o.TLSCAFile, "tls-ca-file", "", "verify the controller against these authorities (PEM); turns TLS on")
	fs.StringVar(&o.TLSCertFile, "tls-cert-file", "", "client certificate (PEM) presented to the controller")
	fs.StringVar(&o.TLSKeyFile, "tls-key-file", "", "key of --tls-cert-file (PEM)")
	fs.StringVar(&o.EtcdCAFile, "etcd-ca-file", "", "CA of the etcd cluster")
	fs.StringVar(&o.EtcdCertFile, "etcd-cert-file", "", "client certificate for etcd")
	fs.StringVar(&o.EtcdKeyFile, "etcd-key-file", "", "client key for etcd")
	fs.StringVar(&o.Replica.StateDir, "state-dir", "", "directory where platforms keep their state, per cloudlet (replicas of one machine share it)")
	fs.DurationVar(&o.Replica.LeaseTTL, "lease-ttl", DefaultLeaseTTL, "TTL of the replica's lease: how long its claims outlive it")
	fs.IntVar(&o.Replica.Workers, "workers", DefaultWorkers, "operations the replica runs at once (claims it holds)")
	fs.DurationVar(&o.Replica.DrainTimeout, "drain-timeout", DefaultDrainTimeout, "how long running operations may finish after a stop signal before their claims are handed back")
	fs.StringVar(&o.MetricsListen, "metrics-listen", "127.0.0.1:0", "address of /metrics (empty: none)")
	fs.StringVar(&logFormat, "log-format", "text", "log format: text or json")
	fs.StringVar(&logLevel, "log-level", "info", "log level: debug, info, warn or error")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if etcdEndpoints == "" {
		return fmt.Errorf("--etcd-endpoints is required")
	}
	o.EtcdEndpoints = splitList(etcdEndpoints)
	o.Replica.Platforms = splitList(platformsFlag)
	switch {
	case tokenFile != "":
		b, err := os.ReadFile(tokenFile)
		if err != nil {
			return fmt.Errorf("--token-file: %w", err)
		}
		o.Token = strings.TrimSpace(string(b))
		if o.Token == "" {
			return fmt.Errorf("--token-file %s is empty", tokenFile)
		}
	default:
		o.Token = os.Getenv(TokenEnv)
	}
	if o.Replica.LeaseTTL < time.Second {
		return fmt.Errorf("--lease-ttl %v: want at least 1s", o.Replica.LeaseTTL)
	}
	if o.Replica.Workers < 1 {
		return fmt.Errorf("--workers %d: want at least 1", o.Replica.Workers)
	}
	log, err := NewLogger(stderr, logFormat, logLevel)
	if err != nil {
		return err
	}
	o.Replica.Logger = log
	o.Ready = func(r *Running) {
		if r.MetricsAddr != "" {
			log.Info("metrics", slog.String("addr", "http://"+r.MetricsAddr+"/metrics"))
		}
	}
	return Run(ctx, o)
}

// splitList splits a comma-separated list, dropping blanks.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// NewLogger returns a text or JSON logger of the given level writing to w.
func NewLogger(w io.Writer, format, level string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--log-format %q: want text or json", format)
}
