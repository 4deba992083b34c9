package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/hosts/fluidos/nodetest"
	"github.com/edgekit/edgekit/internal/devtls"
	"github.com/edgekit/edgekit/internal/kvservice"
	"github.com/edgekit/edgekit/internal/testenv/freeport"
)

// slowKV is the kv blueprint whose service takes seconds to become healthy
// and to stop: room to kill its seller in the middle.
func slowKV(t *testing.T, dir string) string {
	t.Helper()
	bp := kvservice.Blueprint("kv", 1)
	bp.Templates[0].Body = strings.Replace(bp.Templates[0].Body, "env_vars:\n",
		"env_vars:\n- name: KV_START_DELAY\n  value: \"2s\"\n- name: KV_STOP_DELAY\n  value: \"2s\"\n", 1)
	b, err := protojson.Marshal(bp)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "blueprints.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// api connects to a node's API as its admin.
func api(t *testing.T, caDir, addr string) *grpc.ClientConn {
	t.Helper()
	ca, err := devtls.OpenCA(caDir)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := ca.Issue("admin", devtls.LeafOptions{})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(credentials.NewTLS(admin.ClientConfig())))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// poll calls get until cond holds or d passes.
func poll[T any](t *testing.T, d time.Duration, what string, get func(ctx context.Context) (T, error), cond func(T) bool) T {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		v, err := get(ctx)
		cancel()
		if err == nil && cond(v) {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v (last: %v, %v)", what, d, v, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestSellerKilledMidAllocationAndMidTeardown: the seller's process is
// killed (SIGKILL, by pid) while it starts the service it sold, then
// while it tears it down; each time it is started again on its data, and
// converges: the service runs once (the process started before the kill
// is adopted, never doubled) and the buyer uses it; then it is gone and
// back on sale.
func TestSellerKilledMidAllocationAndMidTeardown(t *testing.T) {
	t.Parallel()
	caDir, bobDir := t.TempDir(), t.TempDir()
	first := 12000 + rand.IntN(18000)
	bobArgs := []string{"--id", "bob", "--data-dir", bobDir, "--dev-tls", caDir, "--platform", "local",
		"--port-range", fmt.Sprintf("%d-%d", first, first+499), "--image", "kv=" + kvPath, "--blueprints", slowKV(t, t.TempDir()),
		"--health-interval", "200ms", "--log-level", "debug"}
	rear := freeport.Addr(t)
	t.Cleanup(func() { // the services outlive their node: stop what bob started
		for _, pid := range nodetest.ProcessesUnder(bobDir) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	bob := startNode(t, append([]string{"--rear-listen", rear}, bobArgs...)...)
	alice := startNode(t, "--id", "alice", "--data-dir", t.TempDir(), "--dev-tls", caDir, "--peers", rear,
		"--renew-interval", "200ms")
	aliceAPI := api(t, caDir, alice.attr("api"))
	solvers := fluidos.NewSolverServiceClient(aliceAPI)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	created, err := solvers.CreateSolver(ctx, &fluidos.CreateSolverRequest{Solver: &fluidos.Solver{
		Selector:      &fluidos.Selector{Filter: &fluidos.Selector_Service{Service: &fluidos.ServiceSelector{Tags: []string{"kv"}}}},
		Configuration: &fluidos.Configuration{Spec: &fluidos.Configuration_Service{Service: &fluidos.ServiceConfiguration{Parameters: map[string]string{"password": "crash-test-42"}}}},
		FindCandidate: true, ReserveAndBuy: true, EstablishPeering: true,
	}})
	if err != nil {
		t.Fatal(err)
	}
	getSolver := func(ctx context.Context) (*fluidos.Solver, error) {
		r, err := solvers.GetSolver(ctx, &fluidos.GetSolverRequest{Id: created.GetSolver().GetId()})
		return r.GetSolver(), err
	}
	aid := poll(t, 30*time.Second, "the purchase", getSolver, func(s *fluidos.Solver) bool { return s.GetStatus().GetAllocationId() != "" }).GetStatus().GetAllocationId()
	bobAllocation := func(conn *grpc.ClientConn) func(ctx context.Context) (*fluidos.Allocation, error) {
		c := fluidos.NewAllocationServiceClient(conn)
		return func(ctx context.Context) (*fluidos.Allocation, error) {
			r, err := c.GetAllocation(ctx, &fluidos.GetAllocationRequest{Id: nodetest.SoldID(aid)})
			return r.GetAllocation(), err
		}
	}
	get := bobAllocation(api(t, caDir, bob.attr("api")))
	poll(t, 30*time.Second, "the service starting", get, func(a *fluidos.Allocation) bool {
		return a.GetStatus().GetTask() == "Creating AppInst" && strings.Contains(a.GetStatus().GetStep(), "health")
	})
	if n := len(nodetest.ProcessesUnder(bobDir)); n != 1 {
		t.Fatalf("%d processes run for the service being started, want 1", n)
	}
	started := nodetest.ProcessesUnder(bobDir)[0]
	kill(t, bob)

	bob = startNode(t, append([]string{"--rear-listen", rear}, bobArgs...)...)
	get = bobAllocation(api(t, caDir, bob.attr("api")))
	poll(t, 30*time.Second, "ACTIVE after the seller's restart", get, func(a *fluidos.Allocation) bool {
		return a.GetStatus().GetState() == fluidos.AllocationState_ALLOCATION_STATE_ACTIVE
	})
	if pids := nodetest.ProcessesUnder(bobDir); len(pids) != 1 || pids[0] != started {
		t.Errorf("after the restart the service runs as %v; want the adopted %d alone", pids, started)
	}
	s := poll(t, 30*time.Second, "the solver SOLVED", getSolver, func(s *fluidos.Solver) bool { return s.GetStatus().GetSolverPhase() == fluidos.Phase_PHASE_SOLVED })
	creds, err := fluidos.NewAllocationServiceClient(aliceAPI).GetCredentials(ctx, &fluidos.GetCredentialsRequest{Id: s.GetStatus().GetAllocationId()})
	if err != nil {
		t.Fatal(err)
	}
	cr := creds.GetCredentials()
	if code := kvPut(cr.GetEndpoint(), cr.GetUsername(), cr.GetPassword()); code != http.StatusNoContent {
		t.Errorf("using the service after the seller's restart: %d", code)
	}

	// Mid-teardown.
	if _, err := solvers.DeleteSolver(ctx, &fluidos.DeleteSolverRequest{Id: s.GetId()}); err != nil {
		t.Fatal(err)
	}
	poll(t, 30*time.Second, "the service stopping", get, func(a *fluidos.Allocation) bool {
		return a.GetStatus().GetState() == fluidos.AllocationState_ALLOCATION_STATE_RELEASING && a.GetStatus().GetTask() == "Deleting AppInst"
	})
	kill(t, bob)
	bob = startNode(t, append([]string{"--rear-listen", rear}, bobArgs...)...)
	conn := api(t, caDir, bob.attr("api"))
	get = bobAllocation(conn)
	poll(t, 30*time.Second, "RELEASED after the seller's restart", get, func(a *fluidos.Allocation) bool {
		return a.GetStatus().GetState() == fluidos.AllocationState_ALLOCATION_STATE_RELEASED
	})
	if pids := nodetest.ProcessesUnder(bobDir); len(pids) != 0 {
		t.Errorf("processes left after the teardown: %v", pids)
	}
	fl, err := fluidos.NewFlavorServiceClient(conn).ListFlavors(ctx, &fluidos.ListFlavorsRequest{Selector: &fluidos.Selector{FlavorType: fluidos.FlavorType_FLAVOR_TYPE_SERVICE}})
	if err != nil || len(fl.GetFlavors()) != 1 || !fl.GetFlavors()[0].GetAvailability() {
		t.Errorf("the service is not back on sale: %v, %v", fl.GetFlavors(), err)
	}
	bob.stop(t)
	alice.stop(t)
}

// kill kills a node's process with SIGKILL, by pid, and waits for it.
func kill(t *testing.T, p *process) {
	t.Helper()
	if err := syscall.Kill(p.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-p.exited:
		p.exited <- err
	case <-time.After(10 * time.Second):
		t.Fatal("the node survived SIGKILL")
	}
}

func kvPut(endpoint, user, pass string) int {
	req, err := http.NewRequest(http.MethodPut, endpoint+"/kv/k", strings.NewReader("v"))
	if err != nil {
		return 0
	}
	req.SetBasicAuth(user, pass)
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}
