package fluidoscmd

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/fluidos/rear"
)

// solverFlags are the flags of "create solver".
type solverFlags struct {
	typ                  string
	filters              []string
	cpu, memory, storage string
	pods                 int64
	params               []string
	hosting              string
	discoverOnly         bool
	allocate             bool
	watch                bool
	discovery, reserve   time.Duration
	purchase, allocation time.Duration
}

func (c *cli) createSolverCommand() *cobra.Command {
	var f solverFlags
	cmd := &cobra.Command{
		Use:   "solver [NAME]",
		Short: "Create a solver: discover, reserve and buy a flavor",
		Long: `Create a solver: the node discovers its peers' flavors matching the selector,
reserves the best (lowest price, then least oversized) and buys it,
falling back to the next candidate when one is refused.

  --type k8slice --filter 'cpu>=2' --filter 'architecture=amd64' --cpu 2 --memory 4Gi --pods 10
  --type service --filter category=database --param password=s3cretpass --allocate

With --allocate the solver then waits for the seller to provision what was
bought, and ends with the credentials the seller handed over (show them
with "show credentials").`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := f.solver(args)
			if err != nil {
				return err
			}
			conn, err := c.dial()
			if err != nil {
				return err
			}
			ctx, cancel := c.context(cmd)
			defer cancel()
			resp, err := fluidos.NewSolverServiceClient(conn).CreateSolver(ctx, &fluidos.CreateSolverRequest{Solver: s})
			if err != nil {
				return err
			}
			if f.watch {
				return c.watchSolver(cmd, resp.GetSolver().GetId())
			}
			return print(c.opts.Out, c.output, solverView, []*fluidos.Solver{resp.GetSolver()}, true)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.typ, "type", "", "flavor type: k8slice, service, vm or sensor (required)")
	fl.StringArrayVar(&f.filters, "filter", nil, "filter KEY=VALUE, KEY>=VALUE, KEY<=VALUE or KEY~REGEX (repeatable)")
	fl.StringVar(&f.cpu, "cpu", "", "CPU of the K8Slice partition to buy, a quantity such as 2 or 500m (default: the whole flavor)")
	fl.StringVar(&f.memory, "memory", "", "memory of the partition, such as 4Gi")
	fl.Int64Var(&f.pods, "pods", 0, "pods of the partition")
	fl.StringVar(&f.storage, "storage", "", "storage of the partition, such as 10Gi")
	fl.StringArrayVar(&f.params, "param", nil, "service parameter NAME=VALUE (repeatable)")
	fl.StringVar(&f.hosting, "hosting-policy", "", "service hosting policy: Provider, Consumer or Shared")
	fl.BoolVar(&f.discoverOnly, "discover-only", false, "only discover candidates; reserve and buy nothing")
	fl.BoolVar(&f.allocate, "allocate", false, "once bought, wait for the seller to provision it and hand over its credentials (establish_peering)")
	fl.DurationVar(&f.allocation, "allocation-timeout", 0, "bound of the allocation (default: the node's)")
	fl.BoolVar(&f.watch, "watch", false, "follow the solver's phases until it ends; fail when it fails")
	fl.DurationVar(&f.discovery, "discovery-timeout", 0, "bound of the discovery (default: the node's)")
	fl.DurationVar(&f.reserve, "reservation-timeout", 0, "bound of the reservation (default: the node's)")
	fl.DurationVar(&f.purchase, "purchase-timeout", 0, "bound of the purchase (default: the node's)")
	return cmd
}

// solver builds the solver the flags ask for.
func (f *solverFlags) solver(args []string) (*fluidos.Solver, error) {
	if f.typ == "" {
		return nil, errors.New("--type is required (k8slice, service, vm or sensor)")
	}
	sel, err := selector(f.typ, f.filters)
	if err != nil {
		return nil, err
	}
	if f.allocate && f.discoverOnly {
		return nil, errors.New("--allocate and --discover-only exclude each other")
	}
	s := &fluidos.Solver{Selector: sel, FindCandidate: true, ReserveAndBuy: !f.discoverOnly, EstablishPeering: f.allocate}
	if len(args) == 1 {
		s.Id = args[0]
	}
	if s.Configuration, err = f.configuration(sel.GetFlavorType()); err != nil {
		return nil, err
	}
	if f.discovery > 0 || f.reserve > 0 || f.purchase > 0 || f.allocation > 0 {
		s.Timeouts = &fluidos.SolverTimeouts{}
		if f.allocation > 0 {
			s.Timeouts.Allocation = durationpb.New(f.allocation)
		}
		if f.discovery > 0 {
			s.Timeouts.Discovery = durationpb.New(f.discovery)
		}
		if f.reserve > 0 {
			s.Timeouts.Reservation = durationpb.New(f.reserve)
		}
		if f.purchase > 0 {
			s.Timeouts.Purchase = durationpb.New(f.purchase)
		}
	}
	return s, nil
}

func (f *solverFlags) configuration(t fluidos.FlavorType) (*fluidos.Configuration, error) {
	k8s := f.cpu != "" || f.memory != "" || f.pods != 0 || f.storage != ""
	svc := len(f.params) > 0 || f.hosting != ""
	switch {
	case k8s && t != fluidos.FlavorType_FLAVOR_TYPE_K8SLICE:
		return nil, errors.New("--cpu, --memory, --pods and --storage are for --type k8slice")
	case svc && t != fluidos.FlavorType_FLAVOR_TYPE_SERVICE:
		return nil, errors.New("--param and --hosting-policy are for --type service")
	case k8s:
		if f.cpu == "" || f.memory == "" || f.pods <= 0 {
			return nil, errors.New("a partition needs --cpu, --memory and --pods")
		}
		k := &fluidos.K8SliceConfiguration{Pods: f.pods}
		var err error
		if k.Cpu, err = rear.ParseCPU(f.cpu); err != nil {
			return nil, fmt.Errorf("--cpu: %w", err)
		}
		if k.Memory, err = rear.ParseBytes(f.memory); err != nil {
			return nil, fmt.Errorf("--memory: %w", err)
		}
		if f.storage != "" {
			if k.Storage, err = rear.ParseBytes(f.storage); err != nil {
				return nil, fmt.Errorf("--storage: %w", err)
			}
		}
		return &fluidos.Configuration{Spec: &fluidos.Configuration_K8Slice{K8Slice: k}}, nil
	case svc:
		sc := &fluidos.ServiceConfiguration{Parameters: map[string]string{}}
		for _, p := range f.params {
			name, val, ok := strings.Cut(p, "=")
			if !ok || name == "" {
				return nil, fmt.Errorf("--param %q: want NAME=VALUE", p)
			}
			sc.Parameters[name] = val
		}
		if f.hosting != "" {
			hp, ok := map[string]fluidos.HostingPolicy{"provider": fluidos.HostingPolicy_HOSTING_POLICY_PROVIDER,
				"consumer": fluidos.HostingPolicy_HOSTING_POLICY_CONSUMER, "shared": fluidos.HostingPolicy_HOSTING_POLICY_SHARED}[strings.ToLower(f.hosting)]
			if !ok {
				return nil, fmt.Errorf("--hosting-policy %q: want Provider, Consumer or Shared", f.hosting)
			}
			sc.HostingPolicy = hp
		}
		return &fluidos.Configuration{Spec: &fluidos.Configuration_Service{Service: sc}}, nil
	}
	return nil, nil
}

// watchSolver prints the solver at each change until it ends; a solver
// that ends FAILED or TIMED_OUT is an error.
func (c *cli) watchSolver(cmd *cobra.Command, id string) error {
	conn, err := c.dial()
	if err != nil {
		return err
	}
	ctx, cancel := c.context(cmd)
	defer cancel()
	stream, err := fluidos.NewSolverServiceClient(conn).WatchSolver(ctx, &fluidos.WatchSolverRequest{Id: id})
	if err != nil {
		return err
	}
	ft, _ := parseFormat(c.output)
	var last *fluidos.Solver
	printed := 0
	for {
		resp, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if resp.GetSolver() == nil {
			return fmt.Errorf("solver %s was deleted", id)
		}
		last = resp.GetSolver()
		if ft == formatTable {
			// One row per change, in fixed columns under one header.
			if printed == 0 {
				fmt.Fprintln(c.opts.Out, watchRow(solverView.header))
			}
			fmt.Fprintln(c.opts.Out, watchRow(solverView.row(last)))
		} else if err := print(c.opts.Out, c.output, solverView, []*fluidos.Solver{last}, true); err != nil {
			return err
		}
		printed++
	}
	if p := last.GetStatus().GetSolverPhase(); p != fluidos.Phase_PHASE_SOLVED {
		return fmt.Errorf("solver %s ended %s: %s", id, phase(p), last.GetStatus().GetMessage())
	}
	return nil
}

// watchRow lays out a solver row in fixed columns, so that rows printed
// one at a time line up.
func watchRow(cols []string) string { return fixedRow([]int{24, 9, 11, 11, 11, 11, 36}, cols) }

// fixedRow lays out cols in columns of widths (the last ones as they
// come).
func fixedRow(widths []int, cols []string) string {
	var b strings.Builder
	for i, c := range cols {
		if i < len(widths) {
			fmt.Fprintf(&b, "%-*s ", widths[i], c)
		} else {
			b.WriteString(c)
		}
	}
	return strings.TrimRight(b.String(), " ")
}
