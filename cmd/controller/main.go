// Command controller runs a region's controller: the API server users talk
// to (gRPC, with edgectl), its state in etcd (embedded under --data-dir by
// default, or an external cluster with --etcd-endpoints).
//
//	controller --data-dir ./region
//
// The first start writes an admin token to <data-dir>/admin.token. SIGINT
// or SIGTERM stops it gracefully: in-flight calls finish (bounded by
// --stop-timeout), then etcd closes.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/edgekit/edgekit/hosts/controller"
)

func main() {
	if err := run(os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "controller:", err)
		os.Exit(1)
	}
}

func run(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("controller", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o controller.Options
	var etcdEndpoints, logFormat, logLevel string
	fs.StringVar(&o.DataDir, "data-dir", "", "directory for the embedded etcd, the admin token and development certificates (required)")
	fs.StringVar(&o.Region, "region", "local", "name of the region")
	fs.StringVar(&o.Listen, "listen", "127.0.0.1:55001", "address of the gRPC API")
	fs.StringVar(&o.MetricsListen, "metrics-listen", "127.0.0.1:55002", "address of /metrics (empty: none)")
	fs.StringVar(&etcdEndpoints, "etcd-endpoints", "", "comma-separated client URLs of an external etcd cluster (default: embedded etcd)")
	fs.StringVar(&o.EtcdListen, "etcd-listen", "", "client address of the embedded etcd (default: a free loopback port)")
	fs.StringVar(&o.EtcdCAFile, "etcd-ca-file", "", "CA of an external etcd cluster")
	fs.StringVar(&o.EtcdCertFile, "etcd-cert-file", "", "client certificate for an external etcd cluster")
	fs.StringVar(&o.EtcdKeyFile, "etcd-key-file", "", "client key for an external etcd cluster")
	fs.StringVar(&o.TokensFile, "tokens-file", "", "file of API tokens, one \"<token> admin|ccrm|org:<organization>\" per line")
	fs.DurationVar(&o.StopTimeout, "stop-timeout", 10*time.Second, "how long in-flight calls may run after a stop signal")
	fs.StringVar(&logFormat, "log-format", "text", "log format: text or json")
	fs.StringVar(&logLevel, "log-level", "info", "log level: debug, info, warn or error")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if o.DataDir == "" {
		return fmt.Errorf("--data-dir is required")
	}
	if etcdEndpoints != "" {
		o.EtcdEndpoints = strings.Split(etcdEndpoints, ",")
	}
	log, err := newLogger(stderr, logFormat, logLevel)
	if err != nil {
		return err
	}
	o.Logger = log
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return controller.Run(ctx, o)
}

func newLogger(w io.Writer, format, level string) (*slog.Logger, error) {
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
