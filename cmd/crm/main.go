// Command crm runs the resource manager of one edge site (a cloudlet
// created with crm_on_edge): it connects to the region's controller,
// receives the cloudlet's objects and carries out every change on the
// platform, reporting progress back.
//
//	crm --controller 127.0.0.1:55001 --cloudlet operator/site1 \
//	    --access-key-file site1.key --platform local --state-dir ./site1
//
// The access key is the one shown once when the cloudlet was created (or
// rotated). SIGINT or SIGTERM stops it gracefully: operations in flight
// finish (bounded by --stop-timeout) and their reports reach the
// controller; processes the local platform started keep running and are
// adopted by the next start.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/edgekit/edgekit/hosts/crm"
	"github.com/edgekit/edgekit/internal/cmdutil"
	"github.com/edgekit/edgekit/platforms"
	_ "github.com/edgekit/edgekit/platforms/fake"  // registers "fake"
	_ "github.com/edgekit/edgekit/platforms/local" // registers "local"
)

func main() {
	if err := run(os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "crm:", err)
		os.Exit(1)
	}
}

// props collects repeated --platform-property name=value flags.
type props map[string]string

func (p props) String() string { return fmt.Sprint(map[string]string(p)) }

func (p props) Set(v string) error {
	name, val, ok := strings.Cut(v, "=")
	if !ok || name == "" {
		return fmt.Errorf("want name=value, got %q", v)
	}
	p[name] = val
	return nil
}

func run(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("crm", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		o                   crm.Options
		tlsFlags            cmdutil.ClientTLS
		logFormat, logLevel string
	)
	o.PlatformProperties = props{}
	fs.StringVar(&o.Controller, "controller", "127.0.0.1:55001", "address of the controller's API")
	fs.StringVar(&o.Cloudlet, "cloudlet", "", "the cloudlet this CRM manages, <organization>/<name> (required)")
	fs.StringVar(&o.AccessKey, "access-key", "", "the cloudlet's access key (prefer --access-key-file: arguments are visible to other users)")
	fs.StringVar(&o.AccessKeyFile, "access-key-file", "", "file holding the cloudlet's access key (mode 0600)")
	fs.StringVar(&o.Platform, "platform", "local", "platform: "+strings.Join(platforms.Names(), ", "))
	fs.Var(props(o.PlatformProperties), "platform-property", "name=value handed to the platform (repeatable)")
	fs.StringVar(&o.StateDir, "state-dir", "", "directory for the platform's state (default: the platform's own)")
	fs.StringVar(&o.MetricsListen, "metrics-listen", "127.0.0.1:55003", "address of /metrics (empty: none)")
	fs.StringVar(&o.DevTLSDir, "dev-tls", "", "mutual TLS with the development authority in this directory (the controller's <data-dir>/tls)")
	fs.StringVar(&tlsFlags.CAFile, "tls-ca-file", "", "CA certificate the controller's certificate must chain to (enables TLS)")
	fs.StringVar(&tlsFlags.CertFile, "tls-cert-file", "", "client certificate, for mutual TLS (PEM)")
	fs.StringVar(&tlsFlags.KeyFile, "tls-key-file", "", "key of --tls-cert-file (PEM)")
	fs.StringVar(&tlsFlags.ServerName, "tls-server-name", "", "name the controller's certificate must carry (default: the host of --controller)")
	fs.DurationVar(&o.StopTimeout, "stop-timeout", 30*time.Second, "how long operations in flight may run after a stop signal")
	fs.StringVar(&logFormat, "log-format", "text", "log format: text or json")
	fs.StringVar(&logLevel, "log-level", "info", "log level: debug, info, warn or error")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if o.Cloudlet == "" {
		return fmt.Errorf("--cloudlet is required")
	}
	if o.AccessKey == "" && o.AccessKeyFile == "" {
		return fmt.Errorf("--access-key-file (or --access-key) is required")
	}
	log, err := cmdutil.NewLogger(stderr, logFormat, logLevel)
	if err != nil {
		return err
	}
	o.Logger = log
	if tlsFlags.Enabled() {
		if o.DevTLSDir != "" {
			return fmt.Errorf("--dev-tls and --tls-* exclude each other")
		}
		if o.TLS, err = tlsFlags.Config(); err != nil {
			return err
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return crm.Run(ctx, o)
}
