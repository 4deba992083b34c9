package node_test

import (
	"context"
	"log/slog"
	"slices"
	"testing"

	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/hosts/fluidos/node"
	"github.com/edgekit/edgekit/hosts/fluidos/nodetest"
	"github.com/edgekit/edgekit/internal/testenv/grpcsweep"
)

// TestEveryMethodAnswersBadRequestsWithAStatus calls every method of every
// service of the node's API, as the reflection service lists them, with
// an empty message, random bytes and undecodable bytes: on a node with
// mutual TLS as its admin, as the node itself and as a stranger with a
// certificate of the same authority (refused), and on a plaintext node as
// anyone. No call may stop the node, panic in a handler (recovered or
// not), answer Internal, Unknown or Unavailable, or answer a request that
// does not decode otherwise than InvalidArgument.
func TestEveryMethodAnswersBadRequestsWithAStatus(t *testing.T) {
	t.Parallel()
	nw := nodetest.NewNetwork(t)
	panics := &grpcsweep.PanicLog{}
	opts := func(id string, insecure bool) node.Options {
		return node.Options{NodeID: id, Capacity: capacity("amd64"), InsecureREAR: insecure, Logger: slog.New(panics)}
	}
	tlsNode := nw.Start(opts("bob", false))
	plainNode := nw.Start(opts("carol", true))
	dial := func(n *nodetest.Node, name string) *grpc.ClientConn {
		conn, err := nw.Dial(n.Running().APIAddr, name, n.Options().InsecureREAR)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = conn.Close() })
		return conn
	}
	for _, c := range []struct {
		n     *nodetest.Node
		roles []grpcsweep.Role
	}{
		{tlsNode, []grpcsweep.Role{
			{Name: "admin", Conn: dial(tlsNode, node.DefaultAdminName)},
			{Name: "the node itself", Conn: dial(tlsNode, "bob")},
			{Name: "a stranger", Conn: dial(tlsNode, "mallory")},
		}},
		{plainNode, []grpcsweep.Role{{Name: "no one", Conn: dial(plainNode, "")}}},
	} {
		admin := c.roles[0].Conn
		ctx := ctxT(t)
		services, err := grpcsweep.ListServices(ctx, admin)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"fluidos.v1.SolverService", "fluidos.v1.AllocationService", "grpc.health.v1.Health"} {
			if !slices.Contains(services, want) {
				t.Fatalf("node %s: reflection does not list %s (it lists %v)", c.n.ID(), want, services)
			}
		}
		calls := grpcsweep.Sweep(t, grpcsweep.Options{
			Services: services,
			Roles:    c.roles,
			Panics:   panics,
			Alive: func(ctx context.Context) error {
				if _, err := healthpb.NewHealthClient(admin).Check(ctx, &healthpb.HealthCheckRequest{}); err != nil {
					return err
				}
				_, err := fluidos.NewFlavorServiceClient(admin).ListFlavors(ctx, &fluidos.ListFlavorsRequest{})
				return err
			},
		})
		t.Logf("node %s: %d calls to %d services", c.n.ID(), len(calls), len(services))
	}
}
