package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/hosts/fluidos/consumer"
	"github.com/edgekit/edgekit/hosts/fluidos/provider"
	"github.com/edgekit/edgekit/internal/store"
)

// services implements the node's gRPC services.
type services struct {
	fluidos.UnimplementedSolverServiceServer
	fluidos.UnimplementedFlavorServiceServer
	fluidos.UnimplementedServiceBlueprintServiceServer
	fluidos.UnimplementedContractServiceServer
	fluidos.UnimplementedAllocationServiceServer
	fluidos.UnimplementedNodeServiceServer
	fluidos.UnimplementedSliceServiceServer

	n   *Node
	log *slog.Logger
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errInvalid, fmt.Sprintf(format, args...))
}

// CreateSolver implements fluidos.SolverServiceServer.
func (s *services) CreateSolver(ctx context.Context, req *fluidos.CreateSolverRequest) (*fluidos.CreateSolverResponse, error) {
	if req.GetSolver() == nil {
		return nil, invalid("no solver")
	}
	sv, err := s.n.Consumer.CreateSolver(ctx, req.GetSolver())
	if err != nil {
		return nil, err
	}
	return &fluidos.CreateSolverResponse{Solver: sv}, nil
}

// GetSolver implements fluidos.SolverServiceServer.
func (s *services) GetSolver(ctx context.Context, req *fluidos.GetSolverRequest) (*fluidos.GetSolverResponse, error) {
	sv, _, err := s.n.Consumer.Solvers().Get(ctx, req.GetId())
	if err != nil {
		return nil, err
	}
	return &fluidos.GetSolverResponse{Solver: sv}, nil
}

// ListSolvers implements fluidos.SolverServiceServer.
func (s *services) ListSolvers(ctx context.Context, _ *fluidos.ListSolversRequest) (*fluidos.ListSolversResponse, error) {
	svs, _, err := s.n.Consumer.Solvers().List(ctx)
	if err != nil {
		return nil, err
	}
	return &fluidos.ListSolversResponse{Solvers: svs}, nil
}

// DeleteSolver implements fluidos.SolverServiceServer.
func (s *services) DeleteSolver(ctx context.Context, req *fluidos.DeleteSolverRequest) (*fluidos.DeleteSolverResponse, error) {
	if err := s.n.Consumer.DeleteSolver(ctx, req.GetId()); err != nil {
		return nil, err
	}
	return &fluidos.DeleteSolverResponse{}, nil
}

// WatchSolver implements fluidos.SolverServiceServer.
func (s *services) WatchSolver(req *fluidos.WatchSolverRequest, stream grpc.ServerStreamingServer[fluidos.WatchSolverResponse]) error {
	ctx := stream.Context()
	kind := s.n.Consumer.Solvers()
	sv, rev, err := kind.Get(ctx, req.GetId())
	if err != nil {
		return err
	}
	if err := stream.Send(&fluidos.WatchSolverResponse{Solver: sv}); err != nil {
		return err
	}
	if solverEnded(sv) {
		return nil
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for ev := range kind.Watch(wctx, rev+1) {
		switch {
		case ev.Type == store.EventError:
			return ev.Err
		case ev.Key != sv.GetKeyString():
		case ev.Type == store.EventDelete:
			return stream.Send(&fluidos.WatchSolverResponse{})
		default:
			if err := stream.Send(&fluidos.WatchSolverResponse{Solver: ev.Object}); err != nil {
				return err
			}
			if solverEnded(ev.Object) {
				return nil
			}
		}
	}
	return ctx.Err()
}

func solverEnded(sv *fluidos.Solver) bool {
	p := sv.GetStatus().GetSolverPhase()
	return p == fluidos.Phase_PHASE_SOLVED || p == fluidos.Phase_PHASE_FAILED || p == fluidos.Phase_PHASE_TIMED_OUT
}

// GetDiscovery implements fluidos.SolverServiceServer.
func (s *services) GetDiscovery(ctx context.Context, req *fluidos.GetDiscoveryRequest) (*fluidos.GetDiscoveryResponse, error) {
	d, _, err := s.n.Consumer.Discoveries().Get(ctx, req.GetId())
	if err != nil {
		return nil, err
	}
	resp := &fluidos.GetDiscoveryResponse{Discovery: d}
	for _, id := range d.GetPeeringCandidateIds() {
		pc, _, err := s.n.Consumer.Candidates().Get(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		resp.Candidates = append(resp.Candidates, pc)
	}
	return resp, nil
}

// ListFlavors implements fluidos.FlavorServiceServer.
func (s *services) ListFlavors(ctx context.Context, req *fluidos.ListFlavorsRequest) (*fluidos.ListFlavorsResponse, error) {
	if err := req.GetSelector().Validate(); err != nil {
		return nil, err
	}
	fs, err := s.n.Provider.Flavors(ctx)
	if err != nil {
		return nil, err
	}
	resp := &fluidos.ListFlavorsResponse{}
	for _, f := range fs {
		if ok, _ := req.GetSelector().Match(f); ok {
			resp.Flavors = append(resp.Flavors, f)
		}
	}
	return resp, nil
}

// ListPeerFlavors implements fluidos.FlavorServiceServer.
func (s *services) ListPeerFlavors(ctx context.Context, req *fluidos.ListPeerFlavorsRequest) (*fluidos.ListPeerFlavorsResponse, error) {
	found, results, err := s.n.Consumer.Discover(ctx, req.GetSelector())
	if err != nil {
		return nil, err
	}
	resp := &fluidos.ListPeerFlavorsResponse{PeerResults: results}
	for _, f := range found {
		resp.Flavors = append(resp.Flavors, &fluidos.PeerFlavor{Flavor: f.Flavor, Address: f.Address})
	}
	return resp, nil
}

func (s *services) blueprints() *store.Kind[*fluidos.ServiceBlueprint] {
	return store.NewKind[*fluidos.ServiceBlueprint](s.n.Store)
}

// CreateServiceBlueprint implements fluidos.ServiceBlueprintServiceServer.
func (s *services) CreateServiceBlueprint(ctx context.Context, req *fluidos.CreateServiceBlueprintRequest) (*fluidos.CreateServiceBlueprintResponse, error) {
	bp := req.GetBlueprint()
	if err := checkBlueprint(bp); err != nil {
		return nil, err
	}
	if err := s.n.Allocator.CheckBlueprint(bp); err != nil {
		return nil, invalid("%v", err)
	}
	if _, err := s.blueprints().Create(ctx, bp); err != nil {
		return nil, err
	}
	if err := s.n.Provider.Sync(ctx); err != nil {
		return nil, err
	}
	return &fluidos.CreateServiceBlueprintResponse{Blueprint: bp}, nil
}

// checkBlueprint refuses a blueprint the provider could not sell.
func checkBlueprint(bp *fluidos.ServiceBlueprint) error {
	var problems []string
	if bp.GetId() == "" || strings.ContainsAny(bp.GetId(), "/ \t\n") {
		problems = append(problems, fmt.Sprintf("id %q: want a non-empty identifier without '/' or spaces", bp.GetId()))
	}
	if err := fluidos.ValidateConfigurationSchema(bp.GetConfigurationSchema()); err != nil {
		problems = append(problems, err.Error())
	}
	for _, p := range bp.GetHostingPolicies() {
		if _, ok := fluidos.HostingPolicy_name[int32(p)]; !ok || p == fluidos.HostingPolicy_HOSTING_POLICY_UNSPECIFIED {
			problems = append(problems, fmt.Sprintf("hosting policy %v", p))
		}
	}
	seen := map[string]bool{}
	for _, t := range bp.GetTemplates() {
		if t.GetName() == "" || seen[t.GetName()] {
			problems = append(problems, fmt.Sprintf("template name %q: want unique and non-empty", t.GetName()))
		}
		seen[t.GetName()] = true
	}
	if len(problems) > 0 {
		return invalid("blueprint: %s", strings.Join(problems, "; "))
	}
	return nil
}

// GetServiceBlueprint implements fluidos.ServiceBlueprintServiceServer.
func (s *services) GetServiceBlueprint(ctx context.Context, req *fluidos.GetServiceBlueprintRequest) (*fluidos.GetServiceBlueprintResponse, error) {
	bp, _, err := s.blueprints().Get(ctx, req.GetId())
	if err != nil {
		return nil, err
	}
	return &fluidos.GetServiceBlueprintResponse{Blueprint: bp}, nil
}

// ListServiceBlueprints implements fluidos.ServiceBlueprintServiceServer.
func (s *services) ListServiceBlueprints(ctx context.Context, _ *fluidos.ListServiceBlueprintsRequest) (*fluidos.ListServiceBlueprintsResponse, error) {
	bps, _, err := s.blueprints().List(ctx)
	if err != nil {
		return nil, err
	}
	return &fluidos.ListServiceBlueprintsResponse{Blueprints: bps}, nil
}

// DeleteServiceBlueprint implements fluidos.ServiceBlueprintServiceServer.
func (s *services) DeleteServiceBlueprint(ctx context.Context, req *fluidos.DeleteServiceBlueprintRequest) (*fluidos.DeleteServiceBlueprintResponse, error) {
	if _, err := s.blueprints().Delete(ctx, req.GetId(), nil); err != nil {
		return nil, err
	}
	if err := s.n.Provider.Sync(ctx); err != nil {
		return nil, err
	}
	return &fluidos.DeleteServiceBlueprintResponse{}, nil
}

// GetContract implements fluidos.ContractServiceServer. A contract this
// node sold is shown without its credentials, which are its buyer's (and
// the API's interceptor redacts every answer anyway).
func (s *services) GetContract(ctx context.Context, req *fluidos.GetContractRequest) (*fluidos.GetContractResponse, error) {
	role := req.GetRole()
	if role != fluidos.ContractRole_CONTRACT_ROLE_SOLD {
		id, err := s.n.Consumer.ResolveBought(ctx, req.GetId())
		var c *fluidos.Contract
		if err == nil {
			c, _, err = s.n.Consumer.BoughtContracts().Get(ctx, id)
		}
		if err == nil {
			return &fluidos.GetContractResponse{Contract: c, Role: fluidos.ContractRole_CONTRACT_ROLE_BOUGHT}, nil
		}
		if !errors.Is(err, store.ErrNotFound) || role == fluidos.ContractRole_CONTRACT_ROLE_BOUGHT {
			return nil, err
		}
	}
	c, err := s.n.Provider.Contract(ctx, req.GetId())
	if err != nil {
		return nil, err
	}
	return &fluidos.GetContractResponse{Contract: c.Redacted(), Role: fluidos.ContractRole_CONTRACT_ROLE_SOLD}, nil
}

// ListContracts implements fluidos.ContractServiceServer.
func (s *services) ListContracts(ctx context.Context, req *fluidos.ListContractsRequest) (*fluidos.ListContractsResponse, error) {
	resp := &fluidos.ListContractsResponse{}
	role := req.GetRole()
	if role != fluidos.ContractRole_CONTRACT_ROLE_SOLD {
		cs, _, err := s.n.Consumer.BoughtContracts().List(ctx)
		if err != nil {
			return nil, err
		}
		for _, c := range cs {
			resp.Contracts = append(resp.Contracts, &fluidos.ContractEntry{Contract: c, Role: fluidos.ContractRole_CONTRACT_ROLE_BOUGHT})
		}
	}
	if role != fluidos.ContractRole_CONTRACT_ROLE_BOUGHT {
		cs, err := s.n.Provider.Contracts(ctx)
		if err != nil {
			return nil, err
		}
		for _, c := range cs {
			resp.Contracts = append(resp.Contracts, &fluidos.ContractEntry{Contract: c.Redacted(), Role: fluidos.ContractRole_CONTRACT_ROLE_SOLD})
		}
	}
	return resp, nil
}

// ReleaseContract implements fluidos.ContractServiceServer.
func (s *services) ReleaseContract(ctx context.Context, req *fluidos.ReleaseContractRequest) (*fluidos.ReleaseContractResponse, error) {
	if len(req.GetReason()) > 512 {
		return nil, invalid("reason: at most 512 bytes")
	}
	role := req.GetRole()
	if role != fluidos.ContractRole_CONTRACT_ROLE_SOLD {
		a, err := s.n.Consumer.ReleaseBought(ctx, req.GetId(), req.GetReason())
		if err == nil {
			return &fluidos.ReleaseContractResponse{Allocation: a, Role: fluidos.ContractRole_CONTRACT_ROLE_BOUGHT}, nil
		}
		if !errors.Is(err, store.ErrNotFound) || role == fluidos.ContractRole_CONTRACT_ROLE_BOUGHT {
			return nil, err
		}
	}
	reason := req.GetReason()
	if reason == "" {
		reason = "taken back by its seller"
	}
	a, err := s.n.Provider.RequestRelease(ctx, provider.AllocationID(req.GetId()), reason)
	if err != nil {
		return nil, err
	}
	return &fluidos.ReleaseContractResponse{Allocation: a.Redacted(), Role: fluidos.ContractRole_CONTRACT_ROLE_SOLD}, nil
}

// sides are the allocation kinds of the roles asked for, bought first; an
// allocation this node sold is shown without its credentials.
func (s *services) sides(role fluidos.ContractRole) []side {
	var out []side
	if role != fluidos.ContractRole_CONTRACT_ROLE_SOLD {
		out = append(out, side{s.n.Consumer.BoughtAllocations(), fluidos.ContractRole_CONTRACT_ROLE_BOUGHT})
	}
	if role != fluidos.ContractRole_CONTRACT_ROLE_BOUGHT {
		out = append(out, side{s.n.Provider.Allocations(), fluidos.ContractRole_CONTRACT_ROLE_SOLD})
	}
	return out
}

type side struct {
	kind *store.Kind[*fluidos.Allocation]
	role fluidos.ContractRole
}

// show is an allocation as the API shows it.
func (sd side) show(a *fluidos.Allocation) *fluidos.Allocation {
	if sd.role == fluidos.ContractRole_CONTRACT_ROLE_SOLD {
		return a.Redacted()
	}
	return a
}

// find is the allocation id on the first side that has it. A bought
// allocation is a-<seller>/<contract>, or a-<contract> when that names one
// contract bought (consumer.ResolveBought).
func (s *services) find(ctx context.Context, id string, role fluidos.ContractRole) (*fluidos.Allocation, int64, side, error) {
	sides := s.sides(role)
	for i, sd := range sides {
		key := id
		if cid, ok := strings.CutPrefix(id, "a-"); ok && sd.role == fluidos.ContractRole_CONTRACT_ROLE_BOUGHT {
			// A bought allocation may be named by its seller's contract id.
			local, err := s.n.Consumer.ResolveBought(ctx, cid)
			switch {
			case err == nil:
				key = provider.AllocationID(local)
			case !errors.Is(err, store.ErrNotFound):
				return nil, 0, side{}, err
			}
		}
		a, rev, err := sd.kind.Get(ctx, key)
		if err == nil {
			return a, rev, sd, nil
		}
		if !errors.Is(err, store.ErrNotFound) || i == len(sides)-1 {
			return nil, 0, side{}, err
		}
	}
	return nil, 0, side{}, store.ErrNotFound
}

// GetCredentials implements fluidos.AllocationServiceServer: the
// credentials of what this node bought, the only answer of the API that
// keeps its secrets.
func (s *services) GetCredentials(ctx context.Context, req *fluidos.GetCredentialsRequest) (*fluidos.GetCredentialsResponse, error) {
	id := req.GetId()
	if id == "" {
		return nil, invalid("id: want an allocation's (a-<contract>) or a contract's")
	}
	contract := strings.TrimPrefix(id, "a-")
	if local, err := s.n.Consumer.ResolveBought(ctx, contract); err == nil {
		contract = local
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	a, _, aerr := s.n.Consumer.BoughtAllocations().Get(ctx, provider.AllocationID(contract))
	state := func() string { return strings.TrimPrefix(a.GetStatus().GetState().String(), "ALLOCATION_STATE_") }
	switch {
	case aerr == nil && a.GetCredentials() != nil:
		return &fluidos.GetCredentialsResponse{ContractId: contract, AllocationId: a.GetId(), Credentials: a.GetCredentials()}, nil
	case aerr == nil && provider.Ended(a):
		return nil, status.Errorf(codes.FailedPrecondition, "allocation %s is %s: its credentials were dropped when it ended (%s)",
			a.GetId(), state(), a.GetStatus().GetMessage())
	case aerr != nil && !errors.Is(aerr, store.ErrNotFound):
		return nil, aerr
	}
	// Nothing provisioned (yet): the contract's own credentials.
	c, _, err := s.n.Consumer.BoughtContracts().Get(ctx, contract)
	switch {
	case err == nil && c.GetPeeringTargetCredentials() != nil:
		return &fluidos.GetCredentialsResponse{ContractId: contract, Credentials: c.GetPeeringTargetCredentials()}, nil
	case aerr == nil:
		return nil, status.Errorf(codes.FailedPrecondition, "allocation %s is %s: no credentials yet (%s)", a.GetId(), state(), a.GetStatus().GetMessage())
	case err == nil:
		return nil, status.Errorf(codes.FailedPrecondition, "contract %s holds no credentials (%s)", contract,
			strings.TrimPrefix(c.GetState().String(), "CONTRACT_STATE_"))
	case !errors.Is(err, store.ErrNotFound):
		return nil, err
	}
	if _, err := s.n.Provider.Contract(ctx, contract); err == nil {
		return nil, status.Errorf(codes.PermissionDenied, "contract %s was sold by this node: its credentials are its buyer's", contract)
	}
	return nil, status.Errorf(codes.NotFound, "this node bought no contract %q", contract)
}

// GetAllocation implements fluidos.AllocationServiceServer.
func (s *services) GetAllocation(ctx context.Context, req *fluidos.GetAllocationRequest) (*fluidos.GetAllocationResponse, error) {
	a, _, sd, err := s.find(ctx, req.GetId(), req.GetRole())
	if err != nil {
		return nil, err
	}
	return &fluidos.GetAllocationResponse{Allocation: sd.show(a), Role: sd.role}, nil
}

// ListAllocations implements fluidos.AllocationServiceServer.
func (s *services) ListAllocations(ctx context.Context, req *fluidos.ListAllocationsRequest) (*fluidos.ListAllocationsResponse, error) {
	resp := &fluidos.ListAllocationsResponse{}
	for _, sd := range s.sides(req.GetRole()) {
		as, _, err := sd.kind.List(ctx)
		if err != nil {
			return nil, err
		}
		for _, a := range as {
			resp.Allocations = append(resp.Allocations, &fluidos.AllocationEntry{Allocation: sd.show(a), Role: sd.role})
		}
	}
	return resp, nil
}

// WatchAllocation implements fluidos.AllocationServiceServer.
func (s *services) WatchAllocation(req *fluidos.WatchAllocationRequest, stream grpc.ServerStreamingServer[fluidos.WatchAllocationResponse]) error {
	ctx := stream.Context()
	a, rev, sd, err := s.find(ctx, req.GetId(), req.GetRole())
	if err != nil {
		return err
	}
	if err := stream.Send(&fluidos.WatchAllocationResponse{Allocation: sd.show(a), Role: sd.role}); err != nil {
		return err
	}
	if provider.Ended(a) {
		return nil
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for ev := range sd.kind.Watch(wctx, rev+1) {
		switch {
		case ev.Type == store.EventError:
			return ev.Err
		case ev.Key != a.GetKeyString():
		case ev.Type == store.EventDelete:
			return stream.Send(&fluidos.WatchAllocationResponse{Role: sd.role})
		default:
			if err := stream.Send(&fluidos.WatchAllocationResponse{Allocation: sd.show(ev.Object), Role: sd.role}); err != nil {
				return err
			}
			if provider.Ended(ev.Object) {
				return nil
			}
		}
	}
	return ctx.Err()
}

// DeploySliceInstance implements fluidos.SliceServiceServer.
func (s *services) DeploySliceInstance(ctx context.Context, req *fluidos.DeploySliceInstanceRequest) (*fluidos.DeploySliceInstanceResponse, error) {
	sl, err := s.n.Consumer.Slice(ctx, req.GetContractId())
	if err != nil {
		return nil, err
	}
	if req.GetInstance() == nil {
		return nil, invalid("no instance")
	}
	in, err := s.n.Consumer.SliceClient().SliceDeploy(ctx, sl, req.GetInstance())
	if err != nil {
		return nil, err
	}
	return &fluidos.DeploySliceInstanceResponse{Instance: in}, nil
}

// GetSliceInstance implements fluidos.SliceServiceServer.
func (s *services) GetSliceInstance(ctx context.Context, req *fluidos.GetSliceInstanceRequest) (*fluidos.GetSliceInstanceResponse, error) {
	sl, err := s.n.Consumer.Slice(ctx, req.GetContractId())
	if err != nil {
		return nil, err
	}
	in, err := s.n.Consumer.SliceClient().SliceGet(ctx, sl, req.GetName())
	if err != nil {
		return nil, err
	}
	return &fluidos.GetSliceInstanceResponse{Instance: in}, nil
}

// ListSliceInstances implements fluidos.SliceServiceServer.
func (s *services) ListSliceInstances(ctx context.Context, req *fluidos.ListSliceInstancesRequest) (*fluidos.ListSliceInstancesResponse, error) {
	sl, err := s.n.Consumer.Slice(ctx, req.GetContractId())
	if err != nil {
		return nil, err
	}
	ins, err := s.n.Consumer.SliceClient().SliceList(ctx, sl)
	if err != nil {
		return nil, err
	}
	return &fluidos.ListSliceInstancesResponse{Instances: ins}, nil
}

// DeleteSliceInstance implements fluidos.SliceServiceServer.
func (s *services) DeleteSliceInstance(ctx context.Context, req *fluidos.DeleteSliceInstanceRequest) (*fluidos.DeleteSliceInstanceResponse, error) {
	sl, err := s.n.Consumer.Slice(ctx, req.GetContractId())
	if err != nil {
		return nil, err
	}
	in, err := s.n.Consumer.SliceClient().SliceDelete(ctx, sl, req.GetName())
	if err != nil {
		return nil, err
	}
	return &fluidos.DeleteSliceInstanceResponse{Instance: in}, nil
}

// GetNode implements fluidos.NodeServiceServer.
func (s *services) GetNode(context.Context, *fluidos.GetNodeRequest) (*fluidos.GetNodeResponse, error) {
	return &fluidos.GetNodeResponse{Node: proto.Clone(s.n.Self).(*fluidos.NodeIdentity), InsecureRear: s.n.insecure}, nil
}

// ListPeers implements fluidos.NodeServiceServer.
func (s *services) ListPeers(context.Context, *fluidos.ListPeersRequest) (*fluidos.ListPeersResponse, error) {
	reg := s.n.Consumer.Peers()
	resp := &fluidos.ListPeersResponse{}
	for _, a := range reg.Peers() {
		resp.Peers = append(resp.Peers, &fluidos.Peer{Address: a, Static: reg.Static(a)})
	}
	slices.SortStableFunc(resp.Peers, func(a, b *fluidos.Peer) int {
		switch {
		case a.GetStatic() && !b.GetStatic():
			return -1
		case !a.GetStatic() && b.GetStatic():
			return 1
		}
		return 0
	})
	return resp, nil
}

// AddPeer implements fluidos.NodeServiceServer.
func (s *services) AddPeer(_ context.Context, req *fluidos.AddPeerRequest) (*fluidos.AddPeerResponse, error) {
	if err := consumer.CheckAddress(req.GetAddress()); err != nil {
		return nil, invalid("%v", err)
	}
	if err := s.n.Consumer.Peers().Add(req.GetAddress()); err != nil {
		return nil, invalid("%v", err)
	}
	return &fluidos.AddPeerResponse{}, nil
}
