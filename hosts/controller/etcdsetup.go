package controller

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/edgekit/edgekit/internal/cmdutil"
	"github.com/edgekit/edgekit/internal/etcd"
)

// EtcdSetupMain runs "controller etcd-setup": it gives an external etcd
// cluster the users and roles of a region (EtcdAuthPolicy), the same the
// controller sets up on its embedded etcd at every start, and turns the
// cluster's authentication on. It is idempotent. With --print it writes
// the equivalent etcdctl commands to stdout instead of connecting.
func EtcdSetupMain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("controller etcd-setup", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var endpoints, ccrms, nodes, region, controllerUser string
	var cc etcd.ClientConfig
	var print bool
	fs.StringVar(&endpoints, "etcd-endpoints", "", "comma-separated client URLs of the etcd cluster (required unless --print)")
	fs.StringVar(&cc.CAFile, "etcd-ca-file", "", "CA of the etcd servers' certificates")
	fs.StringVar(&cc.CertFile, "etcd-cert-file", "", "client certificate of an etcd administrator (once authentication is on: a user with the root role, the controller's for example)")
	fs.StringVar(&cc.KeyFile, "etcd-key-file", "", "key of --etcd-cert-file")
	fs.StringVar(&region, "region", "local", "the controller's region")
	fs.StringVar(&controllerUser, "controller-user", "", "the controller's etcd user, the Common Name of its etcd client certificate (default: that of --etcd-cert-file, else \""+devControllerName+"\")")
	fs.StringVar(&ccrms, "ccrm-users", DefaultEtcdCCRMUser, "comma-separated etcd users of the CCRM replicas (Common Names of their certificates)")
	fs.StringVar(&nodes, "fluidos-nodes", "", "comma-separated ids of FLUIDOS nodes keeping their store in this cluster (each gets a user named after it)")
	fs.BoolVar(&print, "print", false, "print the etcdctl commands that do the same, and do nothing")
	if err := cmdutil.Parse(fs, args); err != nil {
		return err
	}
	if controllerUser == "" {
		controllerUser = devControllerName
		if cc.CertFile != "" {
			name, err := certCommonName(cc.CertFile)
			if err != nil {
				return fmt.Errorf("--etcd-cert-file: %w", err)
			}
			controllerUser = name
		}
	}
	p, err := EtcdAuthPolicy(region, EtcdUsers{Controller: controllerUser, CCRMs: cmdutil.SplitList(ccrms), FluidosNodes: cmdutil.SplitList(nodes)})
	if err != nil {
		return err
	}
	if print {
		for _, c := range p.EtcdctlCommands() {
			fmt.Fprintln(stdout, c)
		}
		return nil
	}
	if cc.Endpoints = cmdutil.SplitList(endpoints); len(cc.Endpoints) == 0 {
		return fmt.Errorf("--etcd-endpoints is required (or --print)")
	}
	cli, err := etcd.NewClient(cc)
	if err != nil {
		return err
	}
	defer cli.Close()
	actx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := etcd.EnableAuth(actx, cli, p); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "etcd authentication is on for region %s: %d roles, %d users (and root)\n", region, len(p.Roles), len(p.Users))
	return nil
}
