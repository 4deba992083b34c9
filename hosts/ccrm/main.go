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

	"github.com/edgekit/edgekit/internal/cmdutil"
	"github.com/edgekit/edgekit/internal/devtls"
)

// TokenEnv is the environment variable a replica reads its CCRM token from
// when no --token-file is given.
const TokenEnv = "EDGEKIT_CCRM_TOKEN"

// Main runs a replica process from command-line arguments until ctx ends:
// the whole of cmd/ccrm, importable so that a binary with other platforms
// linked in (imported for their registration) is one line. It returns an
// error for bad arguments (after printing usage to stderr) and for a
// replica that could not run. The multi-call edgekit binary runs it as
// "edgekit ccrm".
func Main(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("ccrm", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o Options
	host, _ := os.Hostname()
	var etcdEndpoints, platformsFlag, tokenFile string
	var hf cmdutil.HostFlags
	fs.StringVar(&etcdEndpoints, "etcd-endpoints", "", "comma-separated client URLs of the controller's etcd (required; the controller writes its embedded one to <data-dir>/etcd-endpoint)")
	fs.StringVar(&o.Controller, "controller", "127.0.0.1:55001", "address of the controller's gRPC API")
	fs.StringVar(&o.Region, "region", "local", "the controller's region")
	fs.StringVar(&platformsFlag, "platforms", "", "comma-separated platform types to serve (default: every one linked in)")
	fs.StringVar(&o.Replica.ReplicaID, "replica-id", fmt.Sprintf("%s-%d", host, os.Getpid()), "name of this replica in its claims and logs")
	fs.StringVar(&tokenFile, "token-file", "", "file holding a CCRM token of the controller (default: $"+TokenEnv+")")
	fs.StringVar(&o.DevTLSDir, "dev-tls", "", "the controller's development authority (<controller data-dir>/tls): mutual TLS with a \"ccrm\" certificate it issues")
	fs.DurationVar(&o.DevTLSValidity, "dev-tls-validity", devtls.DefaultLeafValidity, "with --dev-tls: validity of the replica's certificate (renewed when the controller asks, and at nine tenths of its life)")
	fs.StringVar(&o.TLSCAFile, "tls-ca-file", "", "verify the controller against these authorities (PEM); turns TLS on")
	fs.StringVar(&o.TLSCertFile, "tls-cert-file", "", "client certificate (PEM) presented to the controller")
	fs.StringVar(&o.TLSKeyFile, "tls-key-file", "", "key of --tls-cert-file (PEM)")
	fs.StringVar(&o.EtcdCAFile, "etcd-ca-file", "", "CA of the etcd cluster")
	fs.StringVar(&o.EtcdCertFile, "etcd-cert-file", "", "client certificate for etcd; its Common Name is the replica's etcd user (default with --dev-tls: one the authority issues, see --etcd-user)")
	fs.StringVar(&o.EtcdKeyFile, "etcd-key-file", "", "client key for etcd")
	fs.StringVar(&o.EtcdUser, "etcd-user", "", "with --dev-tls: the replica's etcd user, one of the controller's --etcd-ccrm-users (default \"ccrm\")")
	fs.StringVar(&o.EncryptionKeyFile, "encryption-key-file", "", "the controller's key file, to read the cloudlets' encrypted access variables (the controller's <data-dir>/encryption.keys by default)")
	fs.StringVar(&o.Replica.StateDir, "state-dir", "", "directory where platforms keep their state, per cloudlet (replicas of one machine share it)")
	fs.DurationVar(&o.Replica.LeaseTTL, "lease-ttl", DefaultLeaseTTL, "TTL of the replica's lease: how long its claims outlive it")
	fs.IntVar(&o.Replica.Workers, "workers", DefaultWorkers, "operations the replica runs at once (claims it holds)")
	fs.DurationVar(&o.Replica.DrainTimeout, "drain-timeout", DefaultDrainTimeout, "how long running operations may finish after a stop signal before their claims are handed back")
	fs.DurationVar(&o.Replica.ReconcileInterval, "reconcile-interval", DefaultReconcileInterval, "how often each served cloudlet is reconciled (beside once when the replica starts serving it): what its platform has and the region no longer has is removed; negative: never")
	fs.StringVar(&o.MetricsListen, "metrics-listen", "127.0.0.1:0", "address of /metrics (empty: none)")
	hf.Register(fs)
	if err := cmdutil.Parse(fs, args); err != nil {
		return err
	}
	if o.DevTLSValidity <= 0 {
		return fmt.Errorf("--dev-tls-validity %v: want a positive duration", o.DevTLSValidity)
	}
	if etcdEndpoints == "" {
		return fmt.Errorf("--etcd-endpoints is required")
	}
	o.EtcdEndpoints = cmdutil.SplitList(etcdEndpoints)
	o.Replica.Platforms = cmdutil.SplitList(platformsFlag)
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
	log, err := hf.Logger(stderr)
	if err != nil {
		return err
	}
	o.Replica.Logger = log
	defer hf.Done()
	o.Ready = func(r *Running) {
		if r.MetricsAddr != "" {
			log.Info("metrics", slog.String("addr", "http://"+r.MetricsAddr+"/metrics"))
		}
		hf.Ready(log, cmdutil.Ready{Listeners: map[string]string{"metrics": r.MetricsAddr}})
	}
	return Run(ctx, o)
}
