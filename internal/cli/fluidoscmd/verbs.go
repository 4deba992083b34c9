package fluidoscmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/proto"

	"github.com/edgekit/edgekit/fluidos"
)

// verb is a command whose subcommands are kinds.
func verb(name, short string, kinds ...*cobra.Command) *cobra.Command {
	var names []string
	for _, k := range kinds {
		names = append(names, k.Name())
	}
	cmd := &cobra.Command{
		Use:   name + " KIND",
		Short: short,
		Long:  short + ".\n\nKinds: " + strings.Join(names, ", ") + ".",
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return fmt.Errorf("%s needs a kind: %s", cmd.CommandPath(), strings.Join(names, ", "))
			}
			return fmt.Errorf("unknown kind %q for %s; kinds: %s", args[0], cmd.CommandPath(), strings.Join(names, ", "))
		},
	}
	cmd.AddCommand(kinds...)
	return cmd
}

func (c *cli) createCommand() *cobra.Command {
	return verb("create", "Create a solver, a service blueprint, a peer or an instance on a bought slice",
		c.createSolverCommand(), c.createBlueprintCommand(), c.createPeerCommand(), c.createInstanceCommand())
}

func (c *cli) showCommand() *cobra.Command {
	return verb("show", "Show solvers, flavors, contracts, blueprints, discoveries, allocations, credentials, instances, peers or the node",
		c.showSolverCommand(), c.showFlavorsCommand(), c.showContractsCommand(), c.showBlueprintsCommand(),
		c.showDiscoveryCommand(), c.showAllocationsCommand(), c.showCredentialsCommand(), c.showInstancesCommand(),
		c.showPeersCommand(), c.showNodeCommand())
}

func (c *cli) deleteCommand() *cobra.Command {
	return verb("delete", "Delete a solver (releasing what it bought), a service blueprint or an instance on a bought slice",
		c.deleteSolverCommand(), c.deleteBlueprintCommand(), c.deleteInstanceCommand())
}

func (c *cli) watchCommand() *cobra.Command {
	var roleName string
	alloc := &cobra.Command{
		Use:   "allocation ID",
		Short: "Follow an allocation until it is released or failed; fail when it failed",
		Args:  cobra.ExactArgs(1),
		RunE:  func(cmd *cobra.Command, args []string) error { return c.watchAllocation(cmd, args[0], roleName) },
	}
	alloc.Flags().StringVar(&roleName, "role", "", "sold or bought (default: bought, else sold)")
	return verb("watch", "Follow a solver or an allocation as it changes", &cobra.Command{
		Use:   "solver NAME",
		Short: "Follow a solver's phases until it ends; fail when it fails",
		Args:  cobra.ExactArgs(1),
		RunE:  func(cmd *cobra.Command, args []string) error { return c.watchSolver(cmd, args[0]) },
	}, alloc)
}

// call dials, bounds the context and runs fn.
func (c *cli) call(cmd *cobra.Command, fn func(api apiClients) error) error {
	conn, err := c.dial()
	if err != nil {
		return err
	}
	ctx, cancel := c.context(cmd)
	defer cancel()
	return fn(apiClients{
		ctx:          ctx,
		solvers:      fluidos.NewSolverServiceClient(conn),
		flavors:      fluidos.NewFlavorServiceClient(conn),
		blueprints:   fluidos.NewServiceBlueprintServiceClient(conn),
		contracts:    fluidos.NewContractServiceClient(conn),
		allocations:  fluidos.NewAllocationServiceClient(conn),
		nodeServices: fluidos.NewNodeServiceClient(conn),
		slices:       fluidos.NewSliceServiceClient(conn),
	})
}

func (c *cli) showSolverCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "solver [NAME]",
		Aliases: []string{"solvers"},
		Short:   "Show one solver, or every solver",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return showOneOrAll(c, cmd, args, solverView,
				func(api apiClients, id string) (*fluidos.Solver, error) {
					resp, err := api.solvers.GetSolver(api.ctx, &fluidos.GetSolverRequest{Id: id})
					return resp.GetSolver(), err
				},
				func(api apiClients) ([]*fluidos.Solver, error) {
					resp, err := api.solvers.ListSolvers(api.ctx, &fluidos.ListSolversRequest{})
					return resp.GetSolvers(), err
				})
		},
	}
}

func (c *cli) deleteSolverCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "solver NAME",
		Short: "Stop a solver and delete it; what it bought goes back to its seller",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return c.call(cmd, func(api apiClients) error {
				if _, err := api.solvers.DeleteSolver(api.ctx, &fluidos.DeleteSolverRequest{Id: args[0]}); err != nil {
					return err
				}
				fmt.Fprintf(c.opts.ErrOut, "solver %s deleted\n", args[0])
				return nil
			})
		},
	}
}

func (c *cli) showFlavorsCommand() *cobra.Command {
	var peers bool
	var typ string
	var filters []string
	cmd := &cobra.Command{
		Use:     "flavors",
		Aliases: []string{"flavor"},
		Short:   "Show the node's flavors, or with --peers what its peers offer",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sel, err := selector(typ, filters)
			if err != nil {
				return err
			}
			return c.call(cmd, func(api apiClients) error {
				if !peers {
					resp, err := api.flavors.ListFlavors(api.ctx, &fluidos.ListFlavorsRequest{Selector: sel})
					if err != nil {
						return err
					}
					return print(c.opts.Out, c.output, flavorView, resp.GetFlavors(), false)
				}
				resp, err := api.flavors.ListPeerFlavors(api.ctx, &fluidos.ListPeerFlavorsRequest{Selector: sel})
				if err != nil {
					return err
				}
				for _, r := range resp.GetPeerResults() {
					if r.GetError() != "" {
						fmt.Fprintf(c.opts.ErrOut, "peer %s: %s\n", r.GetAddress(), r.GetError())
					}
				}
				return print(c.opts.Out, c.output, peerFlavorView, resp.GetFlavors(), false)
			})
		},
	}
	cmd.Flags().BoolVar(&peers, "peers", false, "ask every peer (a discovery that is not stored)")
	cmd.Flags().StringVar(&typ, "type", "", "flavor type: k8slice, service, vm or sensor")
	cmd.Flags().StringArrayVar(&filters, "filter", nil, "filter KEY=VALUE, KEY>=VALUE, KEY<=VALUE or KEY~REGEX (repeatable; needs --type)")
	return cmd
}

func (c *cli) showContractsCommand() *cobra.Command {
	var roleName string
	cmd := &cobra.Command{
		Use:     "contracts [ID]",
		Aliases: []string{"contract"},
		Short:   "Show the contracts the node sold and bought, without credentials (see show credentials)",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := parseRole(roleName)
			if err != nil {
				return err
			}
			return showOneOrAll(c, cmd, args, contractView,
				func(api apiClients, id string) (*fluidos.ContractEntry, error) {
					resp, err := api.contracts.GetContract(api.ctx, &fluidos.GetContractRequest{Id: id, Role: r})
					return &fluidos.ContractEntry{Contract: resp.GetContract(), Role: resp.GetRole()}, err
				},
				func(api apiClients) ([]*fluidos.ContractEntry, error) {
					resp, err := api.contracts.ListContracts(api.ctx, &fluidos.ListContractsRequest{Role: r})
					return resp.GetContracts(), err
				})
		},
	}
	cmd.Flags().StringVar(&roleName, "role", "", "sold or bought (default: both)")
	return cmd
}

func (c *cli) createBlueprintCommand() *cobra.Command {
	var file string
	cmd := &cobra.Command{
		Use:   "blueprint -f FILE",
		Short: "Create a service blueprint (protojson names, or the FLUIDOS reference's ServiceBlueprint resource, in JSON or YAML) and publish its Service flavor",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if file == "" {
				return errors.New("-f FILE is required")
			}
			b, err := os.ReadFile(file)
			if err != nil {
				return err
			}
			bp, err := fluidos.DecodeServiceBlueprint(b)
			if err != nil {
				return fmt.Errorf("%s: %w", file, err)
			}
			return c.call(cmd, func(api apiClients) error {
				resp, err := api.blueprints.CreateServiceBlueprint(api.ctx, &fluidos.CreateServiceBlueprintRequest{Blueprint: bp})
				if err != nil {
					return err
				}
				return print(c.opts.Out, c.output, blueprintView, []*fluidos.ServiceBlueprint{resp.GetBlueprint()}, true)
			})
		},
	}
	cmd.Flags().StringVarP(&file, "filename", "f", "", "file of the blueprint in JSON or YAML: protojson names, or a ServiceBlueprint resource (apiVersion nodecore.fluidos.eu/v1alpha1, spec)")
	return cmd
}

func (c *cli) showBlueprintsCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "blueprints [ID]",
		Aliases: []string{"blueprint"},
		Short:   "Show the node's service blueprints",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return showOneOrAll(c, cmd, args, blueprintView,
				func(api apiClients, id string) (*fluidos.ServiceBlueprint, error) {
					resp, err := api.blueprints.GetServiceBlueprint(api.ctx, &fluidos.GetServiceBlueprintRequest{Id: id})
					return resp.GetBlueprint(), err
				},
				func(api apiClients) ([]*fluidos.ServiceBlueprint, error) {
					resp, err := api.blueprints.ListServiceBlueprints(api.ctx, &fluidos.ListServiceBlueprintsRequest{})
					return resp.GetBlueprints(), err
				})
		},
	}
}

func (c *cli) deleteBlueprintCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "blueprint ID",
		Short: "Delete a service blueprint and withdraw its flavor",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return c.call(cmd, func(api apiClients) error {
				if _, err := api.blueprints.DeleteServiceBlueprint(api.ctx, &fluidos.DeleteServiceBlueprintRequest{Id: args[0]}); err != nil {
					return err
				}
				fmt.Fprintf(c.opts.ErrOut, "blueprint %s deleted\n", args[0])
				return nil
			})
		},
	}
}

func (c *cli) showDiscoveryCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "discovery NAME",
		Short: "Show what each peer answered a solver's discovery (NAME is discovery-<solver>, or the solver's name)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id := args[0]
			if !strings.HasPrefix(id, "discovery-") {
				id = "discovery-" + id
			}
			return c.call(cmd, func(api apiClients) error {
				resp, err := api.solvers.GetDiscovery(api.ctx, &fluidos.GetDiscoveryRequest{Id: id})
				if err != nil {
					return err
				}
				if ft, _ := parseFormat(c.output); ft != formatTable {
					return print(c.opts.Out, c.output, view[*fluidos.GetDiscoveryResponse]{}, []*fluidos.GetDiscoveryResponse{resp}, true)
				}
				d := resp.GetDiscovery()
				fmt.Fprintf(c.opts.Out, "discovery %s: %s, %s\n\n", d.GetId(), phase(d.GetPhase()), d.GetMessage())
				return print(c.opts.Out, c.output, peerResultView, d.GetPeerResults(), false)
			})
		},
	}
}

func (c *cli) showPeersCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "peers",
		Aliases: []string{"peer"},
		Short:   "Show the peers the node knows",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return c.call(cmd, func(api apiClients) error {
				resp, err := api.nodeServices.ListPeers(api.ctx, &fluidos.ListPeersRequest{})
				if err != nil {
					return err
				}
				return print(c.opts.Out, c.output, peerView, resp.GetPeers(), false)
			})
		},
	}
}

func (c *cli) createPeerCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "peer HOST:PORT",
		Short: "Make a peer known to the node (kept while it is seen)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return c.call(cmd, func(api apiClients) error {
				if _, err := api.nodeServices.AddPeer(api.ctx, &fluidos.AddPeerRequest{Address: args[0]}); err != nil {
					return err
				}
				fmt.Fprintf(c.opts.ErrOut, "peer %s added\n", args[0])
				return nil
			})
		},
	}
}

func (c *cli) showNodeCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "node",
		Short: "Show the node's identity",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return c.call(cmd, func(api apiClients) error {
				resp, err := api.nodeServices.GetNode(api.ctx, &fluidos.GetNodeRequest{})
				if err != nil {
					return err
				}
				return print(c.opts.Out, c.output, nodeView, []*fluidos.GetNodeResponse{resp}, true)
			})
		},
	}
}

// apiClients are the node's services, for one call.
type apiClients struct {
	ctx          context.Context
	solvers      fluidos.SolverServiceClient
	flavors      fluidos.FlavorServiceClient
	blueprints   fluidos.ServiceBlueprintServiceClient
	contracts    fluidos.ContractServiceClient
	allocations  fluidos.AllocationServiceClient
	nodeServices fluidos.NodeServiceClient
	slices       fluidos.SliceServiceClient
}

// showOneOrAll prints the object named by args, or every object when
// args is empty.
func showOneOrAll[T proto.Message](c *cli, cmd *cobra.Command, args []string, v view[T],
	get func(api apiClients, id string) (T, error), list func(api apiClients) ([]T, error)) error {
	return c.call(cmd, func(api apiClients) error {
		if len(args) == 1 {
			obj, err := get(api, args[0])
			if err != nil {
				return err
			}
			return print(c.opts.Out, c.output, v, []T{obj}, true)
		}
		objs, err := list(api)
		if err != nil {
			return err
		}
		return print(c.opts.Out, c.output, v, objs, false)
	})
}
