package controller

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/edgekit/edgekit/hosts/controller/ui"
	"github.com/edgekit/edgekit/hosts/controller/ui/fluidossource"
	"github.com/edgekit/edgekit/internal/cmdutil"
	"github.com/edgekit/edgekit/internal/devtls"
)

// fluidosFlags are the flags that put FLUIDOS nodes' trades on the status
// page.
type fluidosFlags struct {
	nodes                     string
	devTLS                    string
	certFile, keyFile, caFile string
}

func (f *fluidosFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.nodes, "fluidos-nodes", "", "comma-separated API addresses (host:port) of FLUIDOS nodes whose solvers, contracts and allocations the status page shows (to the admin)")
	fs.StringVar(&f.devTLS, "fluidos-dev-tls", "", "the nodes' development authority directory: the controller calls them with an \"admin\" certificate of it")
	fs.StringVar(&f.certFile, "fluidos-tls-cert-file", "", "client certificate the nodes accept (PEM)")
	fs.StringVar(&f.keyFile, "fluidos-tls-key-file", "", "key of --fluidos-tls-cert-file (PEM, PKCS#8)")
	fs.StringVar(&f.caFile, "fluidos-tls-ca-file", "", "authorities that verify the nodes (PEM)")
}

// sources dials the nodes and returns their status page sources; close
// ends the connections.
func (f *fluidosFlags) sources(log *slog.Logger) (srcs []ui.Source, closeAll func(), err error) {
	addrs := cmdutil.SplitList(f.nodes)
	files := f.certFile != "" || f.keyFile != "" || f.caFile != ""
	switch {
	case len(addrs) == 0 && (files || f.devTLS != ""):
		return nil, nil, errors.New("--fluidos-dev-tls and --fluidos-tls-* need --fluidos-nodes")
	case len(addrs) == 0:
		return nil, func() {}, nil
	case files && f.devTLS != "":
		return nil, nil, errors.New("--fluidos-dev-tls and --fluidos-tls-* exclude each other")
	case !files && f.devTLS == "":
		return nil, nil, errors.New("--fluidos-nodes needs the nodes' TLS: --fluidos-dev-tls DIR, or --fluidos-tls-cert-file, --fluidos-tls-key-file and --fluidos-tls-ca-file")
	}
	// The certificate is renewed (or its files reloaded) while the
	// controller runs, for the connections it makes afresh.
	var b *devtls.Bundle
	if files {
		b, err = devtls.LoadRenewingBundle(f.certFile, f.keyFile, f.caFile, 0, log)
	} else {
		var ca *devtls.CA
		var r *devtls.Renewer
		if ca, err = devtls.OpenCA(f.devTLS); err == nil {
			if r, err = ca.Renewer("admin", devtls.LeafOptions{}, log); err == nil {
				b = r.Bundle(ca.Pool())
			}
		}
	}
	if err != nil {
		return nil, nil, fmt.Errorf("--fluidos TLS: %w", err)
	}
	var conns []*grpc.ClientConn
	closeConns := func() {
		for _, c := range conns {
			_ = c.Close()
		}
	}
	for _, a := range addrs {
		conn, err := grpc.NewClient(a, grpc.WithTransportCredentials(credentials.NewTLS(b.ClientConfig())))
		if err != nil {
			closeConns()
			return nil, nil, fmt.Errorf("--fluidos-nodes %s: %w", a, err)
		}
		conns = append(conns, conn)
		src, err := fluidossource.New(fluidossource.Config{Conn: conn, Logger: log.With("fluidos_node", a)})
		if err != nil {
			closeConns()
			return nil, nil, err
		}
		srcs = append(srcs, src)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = b.Renewer().Start(ctx) }()
	closeAll = func() { closeConns(); cancel(); <-done }
	return srcs, closeAll, nil
}
