// Package nodetest starts real FLUIDOS nodes for tests: each runs
// node.Run in the test's process with its own embedded etcd, REAR over
// mutual TLS with certificates of a shared development authority (or
// plain HTTP), and its gRPC API, all on loopback ports. A node provisions
// what it sells on a fake platform of its own, kept across its restarts
// (unless the test names a platform), with the image "kv" in its catalog
// (the test binary, never run by the fake) and quick health checks and
// polls. Nodes stop when the test ends; Restart stops one and starts it
// again on the same data and addresses.
package nodetest

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/hosts/fluidos/node"
	"github.com/edgekit/edgekit/hosts/fluidos/provider"
	"github.com/edgekit/edgekit/internal/devtls"
	"github.com/edgekit/edgekit/platforms/fake"
)

// startTimeout bounds the start of a node.
const startTimeout = 60 * time.Second

// Network is a set of nodes of one development authority.
type Network struct {
	t     testing.TB
	caDir string
	ca    *devtls.CA
}

// NewNetwork makes the authority of the nodes of t.
func NewNetwork(t testing.TB) *Network {
	t.Helper()
	dir := t.TempDir()
	ca, err := devtls.OpenCA(dir)
	if err != nil {
		t.Fatal(err)
	}
	return &Network{t: t, caDir: dir, ca: ca}
}

// CA is the network's authority, to issue certificates of other parties.
func (nw *Network) CA() *devtls.CA { return nw.ca }

// CADir is the directory of the network's authority (a node's --dev-tls).
func (nw *Network) CADir() string { return nw.caDir }

// Capacity returns a fixed capacity source.
func Capacity(c provider.Capacity) provider.CapacitySource {
	return provider.CapacityFunc(func(context.Context) (provider.Capacity, error) { return c, nil })
}

// Node is one running node.
type Node struct {
	t    testing.TB
	nw   *Network
	opts node.Options

	mu      sync.Mutex
	running *node.Running
	cancel  context.CancelFunc
	done    chan error
	conn    *grpc.ClientConn
}

// Start starts a node with o, filling in what a test node needs: a data
// directory, loopback addresses for REAR and the API, the network's
// authority (unless o.InsecureREAR), a quiet logger. It fails the test
// when the node does not start.
func (nw *Network) Start(o node.Options) *Node {
	nw.t.Helper()
	if o.DataDir == "" {
		o.DataDir = nw.t.TempDir()
	}
	if o.RearListen == "" {
		o.RearListen = "127.0.0.1:0"
	}
	if o.APIListen == "" {
		o.APIListen = "127.0.0.1:0"
	}
	if !o.InsecureREAR && o.TLS == nil {
		o.DevTLSDir = nw.caDir
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.StopTimeout == 0 {
		o.StopTimeout = 5 * time.Second
	}
	if o.Platform == nil && o.PlatformType == "" {
		o.Platform = fake.New(fake.Options{})
	}
	if o.Images == nil {
		exe, err := os.Executable()
		if err != nil {
			nw.t.Fatal(err)
		}
		o.Images = map[string]string{"kv": exe}
	}
	if o.HealthInterval == 0 {
		o.HealthInterval = 200 * time.Millisecond
	}
	if o.PollInterval == 0 {
		o.PollInterval = 50 * time.Millisecond
	}
	if o.RenewInterval == 0 {
		o.RenewInterval = 200 * time.Millisecond
	}
	n := &Node{t: nw.t, nw: nw, opts: o}
	n.start()
	nw.t.Cleanup(n.Stop)
	return n
}

func (n *Node) start() {
	n.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan *node.Running, 1)
	done := make(chan error, 1)
	o := n.opts
	o.Ready = func(r *node.Running) { ready <- r }
	go func() { done <- node.Run(ctx, o) }()
	select {
	case r := <-ready:
		n.mu.Lock()
		n.running, n.cancel, n.done = r, cancel, done
		n.mu.Unlock()
		// Later starts reuse the addresses, so peers keep reaching the node.
		n.opts.RearListen, n.opts.APIListen = r.RearAddr, r.APIAddr
	case err := <-done:
		cancel()
		n.t.Fatalf("nodetest: node %s did not start: %v", o.NodeID, err)
	case <-time.After(startTimeout):
		cancel()
		n.t.Fatalf("nodetest: node %s did not start within %v", o.NodeID, startTimeout)
	}
}

// Stop stops the node (gracefully) and waits for it; stopping a stopped
// node does nothing.
func (n *Node) Stop() {
	n.mu.Lock()
	cancel, done, conn := n.cancel, n.done, n.conn
	n.cancel, n.done, n.conn, n.running = nil, nil, nil, nil
	n.mu.Unlock()
	if conn != nil {
		_ = conn.Close()
	}
	if cancel == nil {
		return
	}
	cancel()
	if err := <-done; err != nil {
		n.t.Errorf("nodetest: node %s stopped with %v", n.opts.NodeID, err)
	}
}

// Restart stops the node and starts it again on the same data directory
// and addresses.
func (n *Node) Restart() {
	n.t.Helper()
	n.Stop()
	n.start()
}

// RestartWith stops the node and starts it again on the same data
// directory and addresses, with the options change made.
func (n *Node) RestartWith(change func(o *node.Options)) {
	n.t.Helper()
	n.Stop()
	change(&n.opts)
	n.start()
}

// Running is the running node; nil while stopped.
func (n *Node) Running() *node.Running {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.running
}

// ID is the node's identifier.
func (n *Node) ID() string { return n.opts.NodeID }

// RearAddr is the node's REAR address (kept across restarts).
func (n *Node) RearAddr() string { return n.opts.RearListen }

// Options are the options the node runs with.
func (n *Node) Options() node.Options { return n.opts }

// Conn is a gRPC connection to the node's API as its admin (a certificate
// named "admin" of the network's authority).
func (n *Node) Conn() *grpc.ClientConn {
	n.t.Helper()
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.conn != nil {
		return n.conn
	}
	conn, err := n.nw.Dial(n.opts.APIListen, node.DefaultAdminName, n.opts.InsecureREAR)
	if err != nil {
		n.t.Fatal(err)
	}
	n.conn = conn
	return conn
}

// Dial connects to a node's API at addr with a certificate named name
// (plaintext when insecure).
func (nw *Network) Dial(addr, name string, insecureAPI bool) (*grpc.ClientConn, error) {
	if insecureAPI {
		return grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	}
	b, err := nw.ca.Issue(name, devtls.LeafOptions{})
	if err != nil {
		return nil, err
	}
	return grpc.NewClient(addr, grpc.WithTransportCredentials(credentials.NewTLS(b.ClientConfig())))
}

// Solvers is the node's solver API.
func (n *Node) Solvers() fluidos.SolverServiceClient { return fluidos.NewSolverServiceClient(n.Conn()) }

// Contracts is the node's contract API.
func (n *Node) Contracts() fluidos.ContractServiceClient {
	return fluidos.NewContractServiceClient(n.Conn())
}

// Flavors is the node's flavor API.
func (n *Node) Flavors() fluidos.FlavorServiceClient { return fluidos.NewFlavorServiceClient(n.Conn()) }

// Allocations is the node's allocation API.
func (n *Node) Allocations() fluidos.AllocationServiceClient {
	return fluidos.NewAllocationServiceClient(n.Conn())
}

// Slices is the node's API of the slices it bought.
func (n *Node) Slices() fluidos.SliceServiceClient { return fluidos.NewSliceServiceClient(n.Conn()) }

// WaitAllocation polls an allocation, on the side role says, until cond
// holds or d passes, and returns it.
func (n *Node) WaitAllocation(id string, role fluidos.ContractRole, d time.Duration, what string, cond func(*fluidos.Allocation) bool) *fluidos.Allocation {
	n.t.Helper()
	deadline := time.Now().Add(d)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		resp, err := n.Allocations().GetAllocation(ctx, &fluidos.GetAllocationRequest{Id: id, Role: role})
		cancel()
		if err != nil {
			n.t.Fatalf("nodetest: allocation %s of %s: %v", id, n.opts.NodeID, err)
		}
		if cond(resp.GetAllocation()) {
			return resp.GetAllocation()
		}
		if time.Now().After(deadline) {
			n.t.Fatalf("nodetest: allocation %s of %s not %s within %v: %v", id, n.opts.NodeID, what, d, resp.GetAllocation().GetStatus())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// InState is a condition of WaitAllocation: the allocation is in state s.
func InState(s fluidos.AllocationState) func(*fluidos.Allocation) bool {
	return func(a *fluidos.Allocation) bool { return a.GetStatus().GetState() == s }
}

// WaitSolver polls a solver until it ends (SOLVED, FAILED or TIMED_OUT)
// or d passes, and returns it.
func (n *Node) WaitSolver(id string, d time.Duration) *fluidos.Solver {
	n.t.Helper()
	deadline := time.Now().Add(d)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		resp, err := n.Solvers().GetSolver(ctx, &fluidos.GetSolverRequest{Id: id})
		cancel()
		if err != nil {
			n.t.Fatalf("nodetest: solver %s: %v", id, err)
		}
		switch resp.GetSolver().GetStatus().GetSolverPhase() {
		case fluidos.Phase_PHASE_SOLVED, fluidos.Phase_PHASE_FAILED, fluidos.Phase_PHASE_TIMED_OUT:
			return resp.GetSolver()
		}
		if time.Now().After(deadline) {
			n.t.Fatalf("nodetest: solver %s did not end within %v: %v", id, d, resp.GetSolver().GetStatus())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// SoldID is the id under which a seller knows a contract ("c-...") or an
// allocation ("a-c-...") that its buyer keeps under the seller's identity
// ("<seller>/c-..." and "a-<seller>/c-...", consumer.BoughtID).
func SoldID(id string) string {
	if a, ok := strings.CutPrefix(id, "a-"); ok {
		return "a-" + SoldID(a)
	}
	if _, own, ok := strings.Cut(id, "/"); ok {
		return own
	}
	return id
}
