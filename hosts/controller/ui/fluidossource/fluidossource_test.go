package fluidossource_test

import (
	"context"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/fluidos/rear"
	"github.com/edgekit/edgekit/hosts/controller/ui"
	"github.com/edgekit/edgekit/hosts/controller/ui/fluidossource"
	"github.com/edgekit/edgekit/hosts/controller/ui/uitest"
	"github.com/edgekit/edgekit/hosts/fluidos/node"
	"github.com/edgekit/edgekit/hosts/fluidos/nodetest"
	"github.com/edgekit/edgekit/internal/kvservice"
)

// createSolver asks n for a Service of category, bought and peered when
// found.
func createSolver(t *testing.T, ctx context.Context, n *nodetest.Node, id, category string) {
	t.Helper()
	sel, err := rear.ParseQuery(fluidos.FlavorType_FLAVOR_TYPE_SERVICE, url.Values{"filter[category][match]": {category}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.Solvers().CreateSolver(ctx, &fluidos.CreateSolverRequest{Solver: &fluidos.Solver{Id: id, Selector: sel,
		FindCandidate: true, ReserveAndBuy: true, EstablishPeering: true, Configuration: &fluidos.Configuration{Spec: &fluidos.Configuration_Service{
			Service: &fluidos.ServiceConfiguration{Parameters: map[string]string{"password": "planted-password-7730"}}}}}}); err != nil {
		t.Fatal(err)
	}
}

// A contract's row shows its real state on both sides: ACTIVE once
// bought, RELEASED (with why) once released.
func TestContractRowsShowTheirState(t *testing.T) {
	t.Parallel()
	nw := nodetest.NewNetwork(t)
	bob := nw.Start(node.Options{NodeID: "bob", Blueprints: []*fluidos.ServiceBlueprint{kvservice.Blueprint("kv", 1)}})
	alice := nw.Start(node.Options{NodeID: "alice", Peers: []string{bob.RearAddr()}})
	rec := uitest.NewRecorder()
	for _, n := range []*nodetest.Node{alice, bob} {
		src, err := fluidossource.New(fluidossource.Config{Conn: n.Conn(), Interval: 50 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		uitest.Run(t, rec, src)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	createSolver(t, ctx, alice, "buy", "database")
	s := alice.WaitSolver("buy", 30*time.Second)
	if s.GetStatus().GetSolverPhase() != fluidos.Phase_PHASE_SOLVED {
		t.Fatalf("solver buy ended %v", s.GetStatus())
	}
	contract := s.GetStatus().GetContractId()
	// Each side knows the contract by its own id: the buyer by seller and
	// id, the seller by its id.
	ids := map[string]string{"alice": contract, "bob": nodetest.SoldID(contract)}
	inState := func(state string) func(ui.Row, bool) bool {
		return func(r ui.Row, found bool) bool { return found && r.State == state }
	}
	for _, side := range []string{"alice", "bob"} {
		rec.Wait(t, "Contract", side+"/"+ids[side], 10*time.Second, "ACTIVE", inState("ACTIVE"))
	}
	// The solver's row shows its pipeline: each phase, in order, with its
	// state.
	solver := rec.Wait(t, "Solver", "alice/buy", 10*time.Second, "SOLVED", inState("SOLVED"))
	var phases []string
	for _, p := range solver.Phases {
		phases = append(phases, p.Name+"="+p.State)
	}
	if got, want := strings.Join(phases, " "), "discovery=SOLVED reservation=SOLVED purchase=SOLVED allocation=SOLVED"; got != want {
		t.Errorf("the solver's phases: %s, want %s", got, want)
	}

	// Deleting the solver releases what it bought.
	if _, err := alice.Solvers().DeleteSolver(ctx, &fluidos.DeleteSolverRequest{Id: "buy"}); err != nil {
		t.Fatal(err)
	}
	for _, side := range []string{"alice", "bob"} {
		row := rec.Wait(t, "Contract", side+"/"+ids[side], 20*time.Second, "RELEASED", inState("RELEASED"))
		c, err := map[string]*nodetest.Node{"alice": alice, "bob": bob}[side].Contracts().GetContract(ctx, &fluidos.GetContractRequest{Id: ids[side]})
		if err != nil {
			t.Fatal(err)
		}
		if reason := c.GetContract().GetReleaseReason(); reason == "" || !strings.Contains(row.Message, reason) {
			t.Errorf("%s's released contract's message %q does not say why (%q)", side, row.Message, reason)
		}
	}
	for _, row := range rec.Rows() {
		if strings.Contains(row.Message, "planted-password-7730") || strings.Contains(strings.Join(row.Errors, " "), "planted-password-7730") {
			t.Errorf("row %s/%s shows the buyer's password", row.Kind, row.Key)
		}
	}
}

// countingConn counts the calls made through it.
type countingConn struct {
	grpc.ClientConnInterface
	calls atomic.Int64
}

func (c *countingConn) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	c.calls.Add(1)
	return c.ClientConnInterface.Invoke(ctx, method, args, reply, opts...)
}

// endSignal is a source that says when each of its runs ends.
type endSignal struct {
	*fluidossource.Source
	ended chan struct{}
}

func (s endSignal) Run(ctx context.Context, out ui.Emitter) error {
	defer func() { s.ended <- struct{}{} }()
	return s.Source.Run(ctx, out)
}

// The status page calls a node only while someone watches it: no call
// before a page opens, its rows once one does, and once the last page
// closes the source stops and its rows leave.
func TestNodeIsPolledOnlyWhileSomeoneWatches(t *testing.T) {
	t.Parallel()
	nw := nodetest.NewNetwork(t)
	alice := nw.Start(node.Options{NodeID: "alice"})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	createSolver(t, ctx, alice, "nothing", "no-such-category") // a row to show

	conn := &countingConn{ClientConnInterface: alice.Conn()}
	src, err := fluidossource.New(fluidossource.Config{Conn: conn, Interval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ended := make(chan struct{}, 10)
	page, err := ui.New(ui.Config{
		Authenticate: func(tok string) (ui.Viewer, bool) { return admin{}, tok == "admin-token" },
		Sources:      []ui.Source{endSignal{Source: src, ended: ended}},
		Linger:       50 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	pctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = page.Start(pctx); close(done) }()
	hs := httptest.NewServer(page)
	t.Cleanup(func() {
		stop()
		<-done
		hs.CloseClientConnections()
		hs.Close()
	})
	client := uitest.NewClient(t, hs.URL+"/ui/", nil)
	client.Login("admin-token")

	// Nobody watches: the node hears nothing (at its 20ms interval, a
	// polling source would have called it dozens of times by then).
	select {
	case <-time.After(500 * time.Millisecond):
	case <-ctx.Done():
	}
	if n := conn.calls.Load(); n != 0 {
		t.Fatalf("the node was called %d times while nobody watched", n)
	}

	// A page opens: the solver's row comes after the snapshot.
	stream := client.Open()
	stream.Next(10 * time.Second) // the snapshot
	waitEvent(t, stream, `"key":"alice/nothing"`)
	if conn.calls.Load() == 0 {
		t.Fatal("the page shows the node's rows but never called it")
	}

	// It closes: the source stops.
	stream.Close()
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("the node is still polled 10s after the last page closed")
	}
	calls := conn.calls.Load()
	// The next page's snapshot does not show the stale rows: they come
	// again from a new poll.
	stream = client.Open()
	if snap := stream.Next(10 * time.Second); strings.Contains(snap, "alice/nothing") {
		t.Errorf("the snapshot %s shows a row of a source that stopped", snap)
	}
	waitEvent(t, stream, `"key":"alice/nothing"`)
	if conn.calls.Load() == calls {
		t.Error("the rows came back without a call to the node")
	}
}

// admin sees everything.
type admin struct{}

func (admin) Sees(string) bool { return true }

// waitEvent reads stream's events until one holds want.
func waitEvent(t *testing.T, stream *uitest.Stream, want string) {
	t.Helper()
	for range 1000 {
		if strings.Contains(stream.Next(10*time.Second), want) {
			return
		}
	}
	t.Fatalf("no event with %s in 1000", want)
}
