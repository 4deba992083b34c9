package fluidoscmd

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/fluidos/rear"
)

// parseRole reads --role.
func parseRole(name string) (fluidos.ContractRole, error) {
	r, ok := map[string]fluidos.ContractRole{"": fluidos.ContractRole_CONTRACT_ROLE_UNSPECIFIED,
		"sold": fluidos.ContractRole_CONTRACT_ROLE_SOLD, "bought": fluidos.ContractRole_CONTRACT_ROLE_BOUGHT}[name]
	if !ok {
		return 0, fmt.Errorf("--role %q: want sold or bought", name)
	}
	return r, nil
}

// contractID is the contract id names: a contract's id (one this node
// bought is <seller>/<contract>), or the contract a solver of that name
// bought.
func contractID(api apiClients, id string) (string, error) {
	if isContractID(id) {
		return id, nil
	}
	s, err := api.solvers.GetSolver(api.ctx, &fluidos.GetSolverRequest{Id: id})
	if err != nil {
		return "", err
	}
	if cid := s.GetSolver().GetStatus().GetContractId(); cid != "" {
		return cid, nil
	}
	return "", fmt.Errorf("solver %s bought nothing (%s)", id, s.GetSolver().GetStatus().GetMessage())
}

// isContractID reports whether id is a contract's rather than a solver's
// name: edgekit sellers name contracts c-..., and this node keeps those it
// bought under <seller>/<contract>.
func isContractID(id string) bool {
	return strings.HasPrefix(id, "c-") || (strings.Contains(id, "/") && !strings.HasPrefix(id, "a-"))
}

// allocationID accepts an allocation's id or its contract's.
func allocationID(id string) string {
	if isContractID(id) {
		return "a-" + id
	}
	return id
}

func (c *cli) showAllocationsCommand() *cobra.Command {
	var roleName string
	cmd := &cobra.Command{
		Use:     "allocations [ID]",
		Aliases: []string{"allocation"},
		Short:   "Show the allocations of what the node sold (what it provisions) or bought (what its sellers report); ID may be a contract's",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := parseRole(roleName)
			if err != nil {
				return err
			}
			if len(args) == 1 {
				args[0] = allocationID(args[0])
			}
			return showOneOrAll(c, cmd, args, allocationView,
				func(api apiClients, id string) (*fluidos.AllocationEntry, error) {
					resp, err := api.allocations.GetAllocation(api.ctx, &fluidos.GetAllocationRequest{Id: id, Role: r})
					return &fluidos.AllocationEntry{Allocation: resp.GetAllocation(), Role: resp.GetRole()}, err
				},
				func(api apiClients) ([]*fluidos.AllocationEntry, error) {
					resp, err := api.allocations.ListAllocations(api.ctx, &fluidos.ListAllocationsRequest{Role: r})
					return resp.GetAllocations(), err
				})
		},
	}
	cmd.Flags().StringVar(&roleName, "role", "", "sold or bought (default: both)")
	return cmd
}

func (c *cli) showCredentialsCommand() *cobra.Command {
	var kubeconfigFile string
	cmd := &cobra.Command{
		Use:   "credentials ID [--kubeconfig FILE]",
		Short: "Show the credentials a seller handed over for what the node bought (ID: the allocation's, the contract's or the solver's); the only command that shows them",
		Long: `Show the credentials a seller handed over for what the node bought: the
allocation's once provisioned, else the contract's. ID is the allocation's,
the contract's or the solver's. No other command shows a password, a token
or a kubeconfig; they are dropped from the node's records when the contract
ends (released, expired or failed), and this command says so.

A K8Slice bought from a node whose cloudlet is a Kubernetes cluster comes
with a kubeconfig of the slice's namespace: --kubeconfig FILE writes it to
FILE, readable by its owner only (mode 0600), for kubectl and any other
Kubernetes client:

  show credentials c-t-... --kubeconfig slice.kubeconfig
  kubectl --kubeconfig slice.kubeconfig create deployment web --image=nginx`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return c.call(cmd, func(api apiClients) error {
				id := allocationID(args[0])
				if !strings.HasPrefix(id, "a-") { // a solver's name
					s, err := api.solvers.GetSolver(api.ctx, &fluidos.GetSolverRequest{Id: id})
					if err != nil {
						return err
					}
					st := s.GetSolver().GetStatus()
					if id = st.GetAllocationId(); id == "" {
						id = st.GetContractId()
					}
					if id == "" {
						return fmt.Errorf("solver %s bought nothing (%s)", args[0], st.GetMessage())
					}
				}
				resp, err := api.allocations.GetCredentials(api.ctx, &fluidos.GetCredentialsRequest{Id: id})
				if err != nil {
					return err
				}
				if kubeconfigFile != "" {
					return c.writeKubeconfig(resp, kubeconfigFile)
				}
				if err := print(c.opts.Out, c.output, credentialsView, []*fluidos.PeeringTargetCredentials{resp.GetCredentials()}, true); err != nil {
					return err
				}
				if resp.GetCredentials().GetKubeconfig() != "" {
					fmt.Fprintf(c.opts.ErrOut, "%s\n", kubeconfigHint(args[0]))
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&kubeconfigFile, "kubeconfig", "", "write the kubeconfig of a K8Slice to this file (mode 0600) instead of showing the credentials")
	return cmd
}

// watchAllocation prints an allocation at each change until it ends.
func (c *cli) watchAllocation(cmd *cobra.Command, id, roleName string) error {
	r, err := parseRole(roleName)
	if err != nil {
		return err
	}
	conn, err := c.dial()
	if err != nil {
		return err
	}
	ctx, cancel := c.context(cmd)
	defer cancel()
	stream, err := fluidos.NewAllocationServiceClient(conn).WatchAllocation(ctx, &fluidos.WatchAllocationRequest{Id: allocationID(id), Role: r})
	if err != nil {
		return err
	}
	ft, _ := parseFormat(c.output)
	var last *fluidos.Allocation
	for printed := 0; ; printed++ {
		resp, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if resp.GetAllocation() == nil {
			return fmt.Errorf("allocation %s was deleted", id)
		}
		last = resp.GetAllocation()
		e := &fluidos.AllocationEntry{Allocation: last, Role: resp.GetRole()}
		if ft != formatTable {
			if err := print(c.opts.Out, c.output, allocationView, []*fluidos.AllocationEntry{e}, true); err != nil {
				return err
			}
			continue
		}
		if printed == 0 {
			fmt.Fprintln(c.opts.Out, allocationRow(allocationView.header))
		}
		fmt.Fprintln(c.opts.Out, allocationRow(allocationView.row(e)))
	}
	if s := last.GetStatus().GetState(); s == fluidos.AllocationState_ALLOCATION_STATE_ERROR {
		return fmt.Errorf("allocation %s ended %s: %s", last.GetId(), allocationState(s), last.GetStatus().GetMessage())
	}
	return nil
}

// allocationRow lays out an allocation row in fixed columns.
func allocationRow(cols []string) string { return fixedRow([]int{36, 7, 8, 18, 10, 28}, cols) }

func (c *cli) releaseCommand() *cobra.Command {
	var roleName, reason string
	cmd := &cobra.Command{
		Use:   "contract ID",
		Short: "End a contract: one bought goes back to its seller, one sold is taken back from its buyer; the seller tears down what it provisioned",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := parseRole(roleName)
			if err != nil {
				return err
			}
			return c.call(cmd, func(api apiClients) error {
				resp, err := api.contracts.ReleaseContract(api.ctx, &fluidos.ReleaseContractRequest{Id: args[0], Role: r, Reason: reason})
				if err != nil {
					return err
				}
				fmt.Fprintf(c.opts.ErrOut, "contract %s: release asked (%s); follow it with: watch allocation %s\n", args[0], role(resp.GetRole()), resp.GetAllocation().GetId())
				return print(c.opts.Out, c.output, allocationView, []*fluidos.AllocationEntry{{Allocation: resp.GetAllocation(), Role: resp.GetRole()}}, true)
			})
		},
	}
	cmd.Flags().StringVar(&roleName, "role", "", "sold or bought (default: bought, else sold)")
	cmd.Flags().StringVar(&reason, "reason", "", "why, for the record")
	return verb("release", "Release a contract", cmd)
}

// instanceFlags are the flags of "create instance".
type instanceFlags struct {
	contract, image, cpu, memory, health string
	args, env, ports                     []string
}

func (c *cli) createInstanceCommand() *cobra.Command {
	var f instanceFlags
	cmd := &cobra.Command{
		Use:   "instance NAME --contract ID --image IMAGE --cpu Q --memory Q",
		Short: "Run an instance of one of the seller's images on a K8Slice the node bought (offloading), and wait until it runs",
		Long: `Run an instance of one of the seller's images on a K8Slice the node bought:
the node calls the seller's slice endpoint with the slice's credentials. The
instance asks --cpu and --memory of the slice, whose seller refuses what
exceeds it.

  create instance web --contract c-t-... --image kv --cpu 250m --memory 64Mi \
      --port 8080/http --health-path /healthz --env KV_PASSWORD=s3cret-pass`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			in, err := f.instance(args[0])
			if err != nil {
				return err
			}
			return c.call(cmd, func(api apiClients) error {
				cid, err := contractID(api, f.contract)
				if err != nil {
					return err
				}
				resp, err := api.slices.DeploySliceInstance(api.ctx, &fluidos.DeploySliceInstanceRequest{ContractId: cid, Instance: in})
				if err != nil {
					return err
				}
				if err := print(c.opts.Out, c.output, instanceView, []*fluidos.SliceInstance{resp.GetInstance()}, true); err != nil {
					return err
				}
				if st := resp.GetInstance().GetStatus(); st.GetState() != "READY" {
					return fmt.Errorf("instance %s is %s: %s", args[0], st.GetState(), strings.Join(st.GetErrors(), "; "))
				}
				return nil
			})
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.contract, "contract", "", "the contract that bought the slice, or the solver that bought it (required)")
	fl.StringVar(&f.image, "image", "", "image of the seller's catalog (required)")
	fl.StringVar(&f.cpu, "cpu", "", "CPU the instance asks of the slice, such as 250m (required)")
	fl.StringVar(&f.memory, "memory", "", "memory the instance asks of the slice, such as 64Mi (required)")
	fl.StringArrayVar(&f.ports, "port", nil, "port the instance listens on, PORT or PORT/PROTOCOL (tcp, udp, http; repeatable)")
	fl.StringArrayVar(&f.env, "env", nil, "environment variable NAME=VALUE (repeatable)")
	fl.StringArrayVar(&f.args, "arg", nil, "argument (repeatable)")
	fl.StringVar(&f.health, "health-path", "", "HTTP path of its health check on its first port (default: a TCP connect)")
	return cmd
}

// instance builds the instance the flags ask for.
func (f *instanceFlags) instance(name string) (*fluidos.SliceInstance, error) {
	if f.contract == "" || f.image == "" || f.cpu == "" || f.memory == "" {
		return nil, errors.New("--contract, --image, --cpu and --memory are required")
	}
	in := &fluidos.SliceInstance{Name: name, Image: f.image, Args: f.args, HealthCheckPath: f.health, Env: map[string]string{}}
	var err error
	if in.Cpu, err = rear.ParseCPU(f.cpu); err != nil {
		return nil, fmt.Errorf("--cpu: %w", err)
	}
	if in.Memory, err = rear.ParseBytes(f.memory); err != nil {
		return nil, fmt.Errorf("--memory: %w", err)
	}
	for _, e := range f.env {
		k, v, ok := strings.Cut(e, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--env %q: want NAME=VALUE", e)
		}
		in.Env[k] = v
	}
	for _, p := range f.ports {
		num, proto, _ := strings.Cut(p, "/")
		n, err := strconv.ParseUint(num, 10, 16)
		if err != nil || n == 0 {
			return nil, fmt.Errorf("--port %q: want PORT or PORT/PROTOCOL", p)
		}
		in.Ports = append(in.Ports, &fluidos.SlicePort{Port: uint32(n), Protocol: proto})
	}
	return in, nil
}

func (c *cli) showInstancesCommand() *cobra.Command {
	var contract string
	cmd := &cobra.Command{
		Use:     "instances [NAME] --contract ID",
		Aliases: []string{"instance"},
		Short:   "Show the instances the node runs on a K8Slice it bought",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if contract == "" {
				return errors.New("--contract is required")
			}
			return showOneOrAll(c, cmd, args, instanceView,
				func(api apiClients, name string) (*fluidos.SliceInstance, error) {
					cid, err := contractID(api, contract)
					if err != nil {
						return nil, err
					}
					resp, err := api.slices.GetSliceInstance(api.ctx, &fluidos.GetSliceInstanceRequest{ContractId: cid, Name: name})
					return resp.GetInstance(), err
				},
				func(api apiClients) ([]*fluidos.SliceInstance, error) {
					cid, err := contractID(api, contract)
					if err != nil {
						return nil, err
					}
					resp, err := api.slices.ListSliceInstances(api.ctx, &fluidos.ListSliceInstancesRequest{ContractId: cid})
					return resp.GetInstances(), err
				})
		},
	}
	cmd.Flags().StringVar(&contract, "contract", "", "the contract that bought the slice, or the solver that bought it (required)")
	return cmd
}

func (c *cli) deleteInstanceCommand() *cobra.Command {
	var contract string
	cmd := &cobra.Command{
		Use:   "instance NAME --contract ID",
		Short: "Delete an instance from a K8Slice the node bought",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if contract == "" {
				return errors.New("--contract is required")
			}
			return c.call(cmd, func(api apiClients) error {
				cid, err := contractID(api, contract)
				if err != nil {
					return err
				}
				resp, err := api.slices.DeleteSliceInstance(api.ctx, &fluidos.DeleteSliceInstanceRequest{ContractId: cid, Name: args[0]})
				if err != nil {
					return err
				}
				fmt.Fprintf(c.opts.ErrOut, "instance %s: %s\n", args[0], resp.GetInstance().GetStatus().GetState())
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&contract, "contract", "", "the contract that bought the slice, or the solver that bought it (required)")
	return cmd
}
