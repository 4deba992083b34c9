package crm

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/edgekit/edgekit/internal/cmdutil"
	"github.com/edgekit/edgekit/internal/devtls"
	"github.com/edgekit/edgekit/platforms"
)

// properties collects repeated --platform-property name=value flags.
type properties map[string]string

func (p properties) String() string { return fmt.Sprint(map[string]string(p)) }

func (p properties) Set(v string) error {
	name, val, ok := strings.Cut(v, "=")
	if !ok || name == "" {
		return fmt.Errorf("want name=value, got %q", v)
	}
	p[name] = val
	return nil
}

// Main runs a CRM process from command-line arguments until ctx ends: the
// whole of cmd/crm, importable so that a binary with other platforms
// linked in (imported for their registration) is one line, and so that the
// multi-call edgekit binary shares its flags. It returns flag.ErrHelp
// after -h, an error for bad arguments (after printing usage to stderr)
// and for a CRM that could not run.
func Main(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("crm", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		o        Options
		tlsFlags cmdutil.ClientTLS
		hf       cmdutil.HostFlags
	)
	o.PlatformProperties = properties{}
	fs.StringVar(&o.Controller, "controller", "127.0.0.1:55001", "address of the controller's API")
	fs.StringVar(&o.Cloudlet, "cloudlet", "", "the cloudlet this CRM manages, <organization>/<name> (required)")
	fs.StringVar(&o.AccessKey, "access-key", "", "the cloudlet's access key (prefer --access-key-file: arguments are visible to other users)")
	fs.StringVar(&o.AccessKeyFile, "access-key-file", "", "file holding the cloudlet's access key (mode 0600)")
	fs.StringVar(&o.Platform, "platform", "local", "platform: "+strings.Join(platforms.Names(), ", "))
	fs.Var(properties(o.PlatformProperties), "platform-property", "name=value handed to the platform (repeatable)")
	fs.StringVar(&o.StateDir, "state-dir", "", "directory for the platform's state (default: the platform's own)")
	fs.StringVar(&o.MetricsListen, "metrics-listen", "127.0.0.1:55003", "address of /metrics (empty: none)")
	fs.StringVar(&o.DevTLSDir, "dev-tls", "", "mutual TLS with the development authority in this directory (the controller's <data-dir>/tls)")
	fs.DurationVar(&o.DevTLSValidity, "dev-tls-validity", devtls.DefaultLeafValidity, "with --dev-tls: validity of the CRM's certificate, renewed at two thirds of its life")
	fs.StringVar(&tlsFlags.CAFile, "tls-ca-file", "", "CA certificate the controller's certificate must chain to (enables TLS)")
	fs.StringVar(&tlsFlags.CertFile, "tls-cert-file", "", "client certificate, for mutual TLS (PEM), reloaded when the files change")
	fs.StringVar(&tlsFlags.KeyFile, "tls-key-file", "", "key of --tls-cert-file (PEM)")
	fs.BoolVar(&o.RenewFromController, "tls-renew", false, "renew --tls-cert-file (a certificate of the controller's development authority) through the controller before it expires, writing the new certificate and key over --tls-cert-file and --tls-key-file")
	fs.StringVar(&tlsFlags.ServerName, "tls-server-name", "", "name the controller's certificate must carry (default: the host of --controller)")
	fs.DurationVar(&o.StopTimeout, "stop-timeout", 30*time.Second, "how long operations in flight may run after a stop signal")
	hf.Register(fs)
	if err := cmdutil.Parse(fs, args); err != nil {
		return err
	}
	if o.DevTLSValidity <= 0 {
		return fmt.Errorf("--dev-tls-validity %v: want a positive duration", o.DevTLSValidity)
	}
	if o.Cloudlet == "" {
		return fmt.Errorf("--cloudlet is required")
	}
	if o.AccessKey == "" && o.AccessKeyFile == "" {
		return fmt.Errorf("--access-key-file (or --access-key) is required")
	}
	log, err := hf.Logger(stderr)
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
		if tlsFlags.CertFile != "" {
			if o.TLSRenewer, err = devtls.FileRenewer(tlsFlags.CertFile, tlsFlags.KeyFile, 0, log); err != nil {
				return err
			}
			o.TLS.Certificates, o.TLS.GetClientCertificate = nil, o.TLSRenewer.GetClientCertificate
		}
	}
	defer hf.Done()
	o.Ready = func(r *Running) {
		hf.Ready(log, cmdutil.Ready{Listeners: map[string]string{"metrics": r.MetricsAddr}})
	}
	return Run(ctx, o)
}
