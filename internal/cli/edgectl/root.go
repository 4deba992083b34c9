// Package edgectl is the command tree of edgectl, the command-line client
// of the controller: kubectl's habits (verb kind [name], -o table|json|yaml,
// --watch) over the controller's gRPC API, with the flags of every object
// reflected from its message descriptor (see package protoflags) and the
// fields users may set read from package apifields.
//
// NewRootCommand builds the tree over the given streams and environment so
// that tests run it in process; Execute runs it and returns the exit code:
// 0 on success, 1 when a call or a change failed, 2 when the command line
// or an input file is wrong (nothing was sent).
package edgectl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/edgekit/edgekit/internal/cli/clientconfig"
	"github.com/edgekit/edgekit/internal/cli/clientconn"
	"github.com/edgekit/edgekit/internal/cli/fluidoscmd"
	"github.com/edgekit/edgekit/internal/cli/output"
)

// Exit codes.
const (
	ExitOK      = 0
	ExitFailure = 1 // a call or a change failed
	ExitUsage   = 2 // bad command line or input: nothing was sent
)

// Options are the streams and environment edgectl runs with.
type Options struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
	// Getenv reads the environment; nil is os.Getenv.
	Getenv func(string) string
	// Terminal says that Out is a terminal, for the live progress line;
	// nil detects it (Out is an *os.File on a terminal).
	Terminal *Terminal
	// DialOptions are added to the connection's (tests).
	DialOptions []grpc.DialOption
}

// Terminal describes the terminal Out writes to.
type Terminal struct {
	Width int           // columns; 0 is 80
	Tick  time.Duration // redraw interval of the progress line; 0 redraws on updates only
}

// app is the state of one command line.
type app struct {
	opts    Options
	kinds   []*Kind
	conn    clientconn.Options
	context string
	config  string
	output  string
	timeout time.Duration
	// global holds the root's persistent flags, which field flags must not
	// hide.
	global *pflag.FlagSet

	grpcConn *grpc.ClientConn
}

// usageError is an error in the command line or an input file.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// NewRootCommand returns the edgectl command tree.
func NewRootCommand(o Options) *cobra.Command {
	a := newApp(o)
	return a.root()
}

func newApp(o Options) *app {
	if o.In == nil {
		o.In = os.Stdin
	}
	if o.Out == nil {
		o.Out = os.Stdout
	}
	if o.ErrOut == nil {
		o.ErrOut = os.Stderr
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.Terminal == nil {
		if f, ok := o.Out.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
			w, _, err := term.GetSize(int(f.Fd()))
			if err != nil {
				w = 0
			}
			o.Terminal = &Terminal{Width: w, Tick: time.Second}
		}
	}
	return &app{opts: o}
}

// Execute runs edgectl with args, prints any error on ErrOut and returns
// the exit code.
func Execute(ctx context.Context, o Options, args []string) int {
	a := newApp(o)
	root := a.root()
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if a.grpcConn != nil {
		a.grpcConn.Close()
	}
	if err == nil {
		return ExitOK
	}
	fmt.Fprintf(a.opts.ErrOut, "Error: %s\n", errorText(err))
	if hint := clientconn.Hint(err, a.conn.Insecure); hint != "" {
		fmt.Fprintf(a.opts.ErrOut, "Hint: %s\n", hint)
	}
	var ue usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(a.opts.ErrOut, "Run '%s --help' for usage.\n", cmd.CommandPath())
		return ExitUsage
	}
	return ExitFailure
}

// errorText renders an error; a bare gRPC status as "Code: message".
func errorText(err error) string {
	var ce *callError
	if errors.As(err, &ce) {
		return err.Error()
	}
	if s, ok := status.FromError(err); ok {
		return fmt.Sprintf("%s: %s", s.Code(), s.Message())
	}
	return err.Error()
}

func (a *app) root() *cobra.Command {
	kinds, kindErr := LoadKinds()
	a.kinds = kinds
	root := &cobra.Command{
		Use:   "edgectl",
		Short: "edgectl drives the edgekit controller: create, update, delete, show and watch its objects",
		Long: `edgectl drives the edgekit controller.

  edgectl create|update|delete KIND [NAME] [--field flags] [-f FILE]
  edgectl show KIND [NAME] [--field flags to filter] [-o table|json|yaml] [--watch]
  edgectl watch KINDINFO [NAME]

Run 'edgectl kinds' for the kinds, 'edgectl create KIND --help' for a kind's
field flags. Connection settings come from flags, $EDGECTL_TOKEN and a
context of the configuration file ('edgectl config --help').`,
		SilenceErrors: true,
		SilenceUsage:  true,
		Args:          a.noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cmd.Help()
		},
	}
	root.SetIn(a.opts.In)
	root.SetOut(a.opts.Out)
	root.SetErr(a.opts.ErrOut)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	pf := root.PersistentFlags()
	a.global = pf
	a.conn.AddFlags(pf)
	pf.StringVar(&a.context, "context", "", "context of the configuration file to use (default: its current context)")
	pf.StringVar(&a.config, "config-file", "", "configuration file (default $"+clientconfig.EnvPath+", or edgekit/edgectl.yaml in the user's configuration directory)")
	pf.StringVarP(&a.output, "output", "o", "table", "output format: table, json or yaml")
	pf.DurationVar(&a.timeout, "timeout", 0, "give up after this long (0: no limit; a change goes on at the controller)")
	root.PersistentPreRunE = func(*cobra.Command, []string) error {
		if kindErr != nil {
			return kindErr
		}
		if _, err := output.ParseFormat(a.output); err != nil {
			return usageError{err}
		}
		return nil
	}
	if kindErr != nil {
		return root
	}
	root.AddCommand(
		a.createCommand(),
		a.updateCommand(),
		a.deleteCommand(),
		a.showCommand(),
		a.watchCommand(),
		a.resetCommand(),
		a.kindsCommand(),
		a.configCommand(),
	)
	root.AddCommand(a.actionCommands()...)
	root.AddCommand(fluidoscmd.NewCommand(fluidoscmd.Options{Out: a.opts.Out, ErrOut: a.opts.ErrOut}))
	root.SuggestionsMinimumDistance = 2
	return root
}

// noArgs refuses arguments to a command that has subcommands only, naming
// the bad one.
func (a *app) noArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		msg += fmt.Sprintf("; did you mean %q?", s[0])
	}
	return usageError{errors.New(msg)}
}

// format returns the output format (checked in PersistentPreRunE).
func (a *app) format() output.Format {
	f, _ := output.ParseFormat(a.output)
	return f
}

// callContext returns the context of a call: cmd's, with --timeout.
func (a *app) callContext(cmd *cobra.Command) (context.Context, context.CancelFunc) {
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	if a.timeout > 0 {
		return context.WithTimeout(ctx, a.timeout)
	}
	return context.WithCancel(ctx)
}

// connect returns the connection and the context of a call (cancel it
// when the call is over).
func (a *app) connect(cmd *cobra.Command) (*grpc.ClientConn, context.Context, context.CancelFunc, error) {
	conn, err := a.dial(cmd)
	if err != nil {
		return nil, nil, nil, err
	}
	ctx, cancel := a.callContext(cmd)
	return conn, ctx, cancel, nil
}

// unary connects and calls a unary method; op names the call in its
// error.
func (a *app) unary(cmd *cobra.Command, md protoreflect.MethodDescriptor, req proto.Message, op string) (proto.Message, error) {
	conn, ctx, cancel, err := a.connect(cmd)
	if err != nil {
		return nil, err
	}
	defer cancel()
	resp, err := callUnary(ctx, conn, md, req)
	if err != nil {
		return nil, &callError{op: op, err: err}
	}
	return resp, nil
}

// dial returns the connection, made on first use from the flags, the
// environment and the configuration file's context.
func (a *app) dial(cmd *cobra.Command) (*grpc.ClientConn, error) {
	if a.grpcConn != nil {
		return a.grpcConn, nil
	}
	var ctx clientconfig.Context
	path, cfg, err := a.loadConfig()
	switch {
	case err != nil && (a.context != "" || a.config != ""):
		return nil, err
	case err == nil:
		if ctx, err = cfg.Lookup(a.context); err != nil {
			return nil, usageError{fmt.Errorf("%s: %w", path, err)}
		}
	}
	// Without a configuration directory and no context asked for, the
	// flags and the environment say everything.
	if err := a.conn.Resolve(cmd.Flags(), ctx, a.opts.Getenv); err != nil {
		return nil, usageError{err}
	}
	conn, err := a.conn.Dial(a.opts.DialOptions...)
	if err != nil {
		return nil, usageError{err}
	}
	a.grpcConn = conn
	return conn, nil
}
