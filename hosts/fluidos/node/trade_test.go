package node_test

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	reflectpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"

	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/fluidos/rear"
	"github.com/edgekit/edgekit/hosts/fluidos/node"
	"github.com/edgekit/edgekit/hosts/fluidos/nodetest"
	"github.com/edgekit/edgekit/hosts/fluidos/provider"
	"github.com/edgekit/edgekit/internal/devtls"
	"github.com/edgekit/edgekit/internal/kvservice"
)

func TestPurchaseAfterTheProviderRestarts(t *testing.T) {
	t.Parallel()
	nw := nodetest.NewNetwork(t)
	bob := nw.Start(node.Options{NodeID: "bob", Capacity: capacity("amd64")})
	ctx := ctxT(t)
	b, err := nw.CA().Issue("alice", devtls.LeafOptions{})
	if err != nil {
		t.Fatal(err)
	}
	alice := rear.NewClient(b.ClientConfig(), 10*time.Second)
	defer alice.Close()
	buyer := &fluidos.NodeIdentity{NodeId: "alice", AdditionalInformation: &fluidos.NodeAdditionalInformation{LiqoId: "alice"}}
	tx, err := alice.Reserve(ctx, bob.RearAddr(), "bob", &fluidos.ReserveRequest{FlavorId: provider.K8SliceFlavorID("bob"), Buyer: buyer, Configuration: partition(2000, 2<<30, 2)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	bob.Restart()
	c, err := alice.Purchase(ctx, bob.RearAddr(), "bob", tx.GetId(), &fluidos.PurchaseRequest{})
	if err != nil {
		t.Fatalf("purchase after the provider restarted: %v", err)
	}
	if c.GetTransactionId() != tx.GetId() || c.GetFlavor().GetK8Slice().GetCharacteristics().GetCpu() != 2000 {
		t.Errorf("contract %v", c)
	}
}

func TestBuyAServiceWithASolver(t *testing.T) {
	t.Parallel()
	nw := nodetest.NewNetwork(t)
	kv := kvservice.Blueprint("kv", 1)
	bob := nw.Start(node.Options{NodeID: "bob", Capacity: capacity("amd64"), Blueprints: []*fluidos.ServiceBlueprint{kv}})
	alice := nw.Start(node.Options{NodeID: "alice", Capacity: capacity("amd64"), Peers: []string{bob.RearAddr()}})
	ctx := ctxT(t)
	sel := &fluidos.Selector{Filter: &fluidos.Selector_Service{Service: &fluidos.ServiceSelector{Category: &fluidos.StringFilter{Filter: &fluidos.StringFilter_Exact{Exact: "database"}}}}}
	cfg := func(pw string) *fluidos.Configuration {
		return &fluidos.Configuration{Spec: &fluidos.Configuration_Service{Service: &fluidos.ServiceConfiguration{Parameters: map[string]string{"password": pw}}}}
	}
	// A configuration the flavor's template refuses is refused before it
	// is sent.
	bad, err := alice.Solvers().CreateSolver(ctx, &fluidos.CreateSolverRequest{Solver: buy(sel, cfg("short"))})
	if err != nil {
		t.Fatal(err)
	}
	s := alice.WaitSolver(bad.GetSolver().GetId(), 30*time.Second)
	if s.GetStatus().GetReservationPhase() != fluidos.Phase_PHASE_FAILED || len(s.GetStatus().GetAttempts()) != 1 ||
		!strings.Contains(s.GetStatus().GetAttempts()[0].GetError(), "/password") {
		t.Errorf("a bad configuration: %v", s.GetStatus())
	}
	good, err := alice.Solvers().CreateSolver(ctx, &fluidos.CreateSolverRequest{Solver: buy(sel, cfg("longenough1"))})
	if err != nil {
		t.Fatal(err)
	}
	s = alice.WaitSolver(good.GetSolver().GetId(), 30*time.Second)
	if s.GetStatus().GetSolverPhase() != fluidos.Phase_PHASE_SOLVED {
		t.Fatalf("solver ended %v", s.GetStatus())
	}
	// The only instance is sold: a second buyer finds nothing.
	resp, err := alice.Flavors().ListPeerFlavors(ctx, &fluidos.ListPeerFlavorsRequest{Selector: sel})
	if err != nil || len(resp.GetFlavors()) != 0 {
		t.Errorf("after the only instance was sold: %v, %v", resp.GetFlavors(), err)
	}
}

func TestWatchSolverStreamsThePhases(t *testing.T) {
	t.Parallel()
	nw := nodetest.NewNetwork(t)
	bob := nw.Start(node.Options{NodeID: "bob", Capacity: capacity("amd64")})
	alice := nw.Start(node.Options{NodeID: "alice", Capacity: capacity("amd64"), Peers: []string{bob.RearAddr()}})
	ctx := ctxT(t)
	created, err := alice.Solvers().CreateSolver(ctx, &fluidos.CreateSolverRequest{Solver: buy(cpuAtLeast(1000), partition(1000, 1<<30, 1))})
	if err != nil {
		t.Fatal(err)
	}
	stream, err := alice.Solvers().WatchSolver(ctx, &fluidos.WatchSolverRequest{Id: created.GetSolver().GetId()})
	if err != nil {
		t.Fatal(err)
	}
	var last *fluidos.Solver
	updates := 0
	for {
		resp, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		last, updates = resp.GetSolver(), updates+1
	}
	if last.GetStatus().GetSolverPhase() != fluidos.Phase_PHASE_SOLVED {
		t.Errorf("the watch ended on %v", last.GetStatus())
	}
	if updates < 2 {
		t.Errorf("%d updates streamed", updates)
	}
}

func TestAPIHealthReflectionAndAuthorization(t *testing.T) {
	t.Parallel()
	nw := nodetest.NewNetwork(t)
	n := nw.Start(node.Options{NodeID: "n", Capacity: capacity("amd64")})
	ctx := ctxT(t)
	h, err := healthpb.NewHealthClient(n.Conn()).Check(ctx, &healthpb.HealthCheckRequest{})
	if err != nil || h.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("health: %v, %v", h, err)
	}
	rs, err := reflectpb.NewServerReflectionClient(n.Conn()).ServerReflectionInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := rs.Send(&reflectpb.ServerReflectionRequest{MessageRequest: &reflectpb.ServerReflectionRequest_ListServices{}}); err != nil {
		t.Fatal(err)
	}
	ref, err := rs.Recv()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range ref.GetListServicesResponse().GetService() {
		names = append(names, s.GetName())
	}
	for _, want := range []string{"fluidos.v1.SolverService", "fluidos.v1.FlavorService", "fluidos.v1.ServiceBlueprintService", "fluidos.v1.ContractService", "fluidos.v1.AllocationService", "fluidos.v1.NodeService"} {
		if !strings.Contains(strings.Join(names, " "), want) {
			t.Errorf("reflection lists %v, lacks %s", names, want)
		}
	}
	// A certificate of the authority that is not an allowed client.
	conn, err := nw.Dial(n.Options().APIListen, "stranger", false)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, err = fluidos.NewNodeServiceClient(conn).GetNode(ctx, &fluidos.GetNodeRequest{})
	if status.Code(err) != codes.PermissionDenied {
		t.Errorf("a stranger called the API: %v", err)
	}
	got, err := fluidos.NewNodeServiceClient(n.Conn()).GetNode(ctx, &fluidos.GetNodeRequest{})
	if err != nil || got.GetNode().GetNodeId() != "n" || got.GetNode().GetIp() != n.RearAddr() {
		t.Errorf("GetNode: %v, %v", got, err)
	}
	// Bad requests get InvalidArgument, missing objects NotFound.
	_, err = n.Solvers().CreateSolver(ctx, &fluidos.CreateSolverRequest{Solver: &fluidos.Solver{Selector: &fluidos.Selector{
		Filter: &fluidos.Selector_K8Slice{K8Slice: &fluidos.K8SliceSelector{Architecture: &fluidos.StringFilter{Filter: &fluidos.StringFilter_Regex{Regex: "("}}}}}}})
	if status.Code(err) != codes.InvalidArgument {
		t.Errorf("a solver with a bad regex: %v", err)
	}
	if _, err := n.Solvers().GetSolver(ctx, &fluidos.GetSolverRequest{Id: "nope"}); status.Code(err) != codes.NotFound {
		t.Errorf("a missing solver: %v", err)
	}
	if _, err := fluidos.NewNodeServiceClient(n.Conn()).AddPeer(ctx, &fluidos.AddPeerRequest{Address: "no-port"}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("a bad peer address: %v", err)
	}
}

func TestInsecureREARBetweenTwoNodes(t *testing.T) {
	t.Parallel()
	nw := nodetest.NewNetwork(t)
	bob := nw.Start(node.Options{NodeID: "bob", Capacity: capacity("amd64"), InsecureREAR: true})
	alice := nw.Start(node.Options{NodeID: "alice", Capacity: capacity("amd64"), InsecureREAR: true, Peers: []string{bob.RearAddr()}})
	ctx := ctxT(t)
	created, err := alice.Solvers().CreateSolver(ctx, &fluidos.CreateSolverRequest{Solver: buy(cpuAtLeast(1000), nil)})
	if err != nil {
		t.Fatal(err)
	}
	if s := alice.WaitSolver(created.GetSolver().GetId(), 30*time.Second); s.GetStatus().GetSolverPhase() != fluidos.Phase_PHASE_SOLVED {
		t.Fatalf("solver over plain HTTP ended %v", s.GetStatus())
	}
	// A mutual-TLS node cannot talk to a plain one.
	tlsNode := nw.Start(node.Options{NodeID: "carol", Capacity: capacity("amd64"), Peers: []string{bob.RearAddr()}, PeerTimeout: 2 * time.Second})
	resp, err := tlsNode.Flavors().ListPeerFlavors(ctx, &fluidos.ListPeerFlavorsRequest{})
	if err != nil || len(resp.GetFlavors()) != 0 || resp.GetPeerResults()[0].GetError() == "" {
		t.Errorf("a TLS node discovered over plain HTTP: %v, %v", resp, err)
	}
}
