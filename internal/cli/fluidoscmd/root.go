package fluidoscmd

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/edgekit/edgekit/internal/devtls"
)

// DefaultNode is a node's default API address.
const DefaultNode = "127.0.0.1:7001"

// Options configure the command.
type Options struct {
	// Out receives results, ErrOut progress notes; default os.Stdout and
	// os.Stderr.
	Out, ErrOut io.Writer
}

// cli holds the flags and the connection of one run.
type cli struct {
	opts     Options
	node     string
	devTLS   string
	as       string
	caFile   string
	certFile string
	keyFile  string
	insecure bool
	output   string
	timeout  time.Duration

	conn *grpc.ClientConn
}

// NewCommand returns the "fluidos" command and its subcommands.
func NewCommand(o Options) *cobra.Command {
	if o.Out == nil {
		o.Out = os.Stdout
	}
	if o.ErrOut == nil {
		o.ErrOut = os.Stderr
	}
	c := &cli{opts: o}
	cmd := &cobra.Command{
		Use:   "fluidos",
		Short: "Drive a FLUIDOS node: solvers, flavors, contracts, allocations, blueprints, slices, peers",
		Long: `Drive a FLUIDOS node through its API.

  fluidos create solver [NAME] --type k8slice --filter 'cpu>=2' --cpu 2 --memory 4Gi --pods 10 [--allocate] --watch
  fluidos create solver [NAME] --type service --filter tags=kv --param password=PASS --allocate --watch
  fluidos show|watch|delete solver NAME       (delete releases what it bought)
  fluidos show flavors [--peers] [--type TYPE] [--filter KEY=VALUE ...]
  fluidos show contracts [ID] [--role sold|bought]; fluidos release contract ID
  fluidos show allocations [ID] [--role sold|bought]; fluidos watch allocation ID
  fluidos show credentials ID [--kubeconfig FILE]   (what a seller handed over for what was bought:
                                              the only command that shows secrets; gone once the contract ends;
                                              a K8Slice's kubeconfig, when it has one, to FILE, mode 0600)
  fluidos create instance NAME --contract ID --image IMAGE --cpu Q --memory Q [--port P/PROTO] [--env K=V]
  fluidos show instances --contract ID; fluidos delete instance NAME --contract ID
  fluidos create blueprint -f FILE; fluidos show blueprints; fluidos delete blueprint ID
  fluidos show discovery NAME | node | peers; fluidos create peer HOST:PORT`,
		SilenceErrors: true,
		SilenceUsage:  true,
		Args:          cobra.NoArgs,
		RunE:          func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
		PersistentPreRunE: func(*cobra.Command, []string) error {
			_, err := parseFormat(c.output)
			return err
		},
		PersistentPostRun: func(*cobra.Command, []string) { c.close() },
	}
	cmd.SetOut(o.Out)
	cmd.SetErr(o.ErrOut)
	pf := cmd.PersistentFlags()
	pf.StringVar(&c.node, "node", DefaultNode, "address of the node's API, host:port")
	pf.StringVar(&c.devTLS, "dev-tls", "", "the node's development authority directory: a certificate named --as is issued from it")
	pf.StringVar(&c.as, "as", "admin", "name of the certificate issued with --dev-tls")
	pf.StringVar(&c.caFile, "ca-file", "", "PEM certificates that verify the node")
	pf.StringVar(&c.certFile, "cert-file", "", "client certificate (PEM)")
	pf.StringVar(&c.keyFile, "key-file", "", "client private key (PEM)")
	pf.BoolVar(&c.insecure, "insecure", false, "talk plaintext, to a node run with --insecure-rear")
	pf.StringVarP(&c.output, "output", "o", "table", "output format: table, json or yaml")
	pf.DurationVar(&c.timeout, "timeout", 0, "give up after this long (0: no limit)")
	cmd.AddCommand(c.createCommand(), c.showCommand(), c.deleteCommand(), c.watchCommand(), c.releaseCommand())
	return cmd
}

// dial connects to the node (once per run).
func (c *cli) dial() (*grpc.ClientConn, error) {
	if c.conn != nil {
		return c.conn, nil
	}
	var creds credentials.TransportCredentials
	tlsFiles := c.caFile != "" || c.certFile != "" || c.keyFile != ""
	switch {
	case c.insecure && (tlsFiles || c.devTLS != ""):
		return nil, errors.New("--insecure excludes --dev-tls and the TLS files")
	case c.insecure:
		creds = insecure.NewCredentials()
	case c.devTLS != "" && tlsFiles:
		return nil, errors.New("--dev-tls excludes --ca-file, --cert-file and --key-file")
	case c.devTLS != "":
		ca, err := devtls.OpenCA(c.devTLS)
		if err != nil {
			return nil, err
		}
		b, err := ca.Issue(c.as, devtls.LeafOptions{})
		if err != nil {
			return nil, err
		}
		creds = credentials.NewTLS(b.ClientConfig())
	case c.certFile != "" && c.keyFile != "" && c.caFile != "":
		b, err := devtls.LoadBundle(c.certFile, c.keyFile, c.caFile)
		if err != nil {
			return nil, err
		}
		creds = credentials.NewTLS(b.ClientConfig())
	case c.caFile != "":
		pem, err := os.ReadFile(c.caFile)
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--ca-file %s: no certificate", c.caFile)
		}
		creds = credentials.NewTLS(&tls.Config{MinVersion: tls.VersionTLS13, RootCAs: pool})
	default:
		return nil, errors.New("the node's API needs mutual TLS: give --dev-tls DIR, or --ca-file, --cert-file and --key-file (or --insecure for a plaintext node)")
	}
	conn, err := grpc.NewClient(c.node, grpc.WithTransportCredentials(creds))
	if err != nil {
		return nil, fmt.Errorf("--node %s: %w", c.node, err)
	}
	c.conn = conn
	return conn, nil
}

func (c *cli) close() {
	if c.conn != nil {
		_ = c.conn.Close()
		c.conn = nil
	}
}

// context bounds a command by --timeout.
func (c *cli) context(cmd *cobra.Command) (context.Context, context.CancelFunc) {
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	if c.timeout > 0 {
		return context.WithTimeout(ctx, c.timeout)
	}
	return context.WithCancel(ctx)
}
