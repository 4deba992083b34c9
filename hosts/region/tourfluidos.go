package region

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/fluidos/rear"
)

// tourSolver is the solver the tour creates on the consumer node.
const tourSolver = "tour-kv"

// buyService has the consumer node buy a Service of the provider's
// blueprint through a solver (discovery, reservation, purchase, then the
// provider's provisioning through its lifecycle engine), printing the
// solver's phases as they change, and uses the service with the
// credentials the provider handed over.
func (t *tour) buyService(ctx context.Context) error {
	n, err := dialNode(t.info.Nodes[Consumer].API, t.info.FluidosTLSDir)
	if err != nil {
		return err
	}
	defer n.Close()
	// The tag keeps the Kubernetes provider's database (tag mysql) out.
	sel, err := rear.ParseQuery(fluidos.FlavorType_FLAVOR_TYPE_SERVICE, url.Values{"filter[category][match]": {"database"}, "filter[tags][match]": {ServiceBlueprint}})
	if err != nil {
		return err
	}
	password := strings.ToLower(rand.Text()[:20])
	t.out.printf("  solver %s on the consumer: a Service of category database, tag %s, user tour, password chosen at random (not shown)\n", tourSolver, ServiceBlueprint)
	st, err := t.solve(ctx, n, &fluidos.Solver{Id: tourSolver, Selector: sel,
		FindCandidate: true, ReserveAndBuy: true, EstablishPeering: true,
		Configuration: &fluidos.Configuration{Spec: &fluidos.Configuration_Service{Service: &fluidos.ServiceConfiguration{
			Parameters: map[string]string{"username": "tour", "password": password}}}}})
	if err != nil {
		return err
	}
	if _, err := t.contract(ctx, n, st, Provider); err != nil {
		return err
	}
	a, err := n.allocations.GetCredentials(ctx, &fluidos.GetCredentialsRequest{Id: st.GetAllocationId()})
	if err != nil {
		return fmt.Errorf("credentials of allocation %s: %w", st.GetAllocationId(), err)
	}
	cred := a.GetCredentials()
	if cred.GetEndpoint() == "" || cred.GetPassword() != password {
		return fmt.Errorf("allocation %s handed over no credentials of the service (endpoint %q)", st.GetAllocationId(), cred.GetEndpoint())
	}
	t.out.printf("  allocation %s: the provider runs the service; credentials handed over: %s, user %s\n",
		a.GetAllocationId(), cred.GetEndpoint(), cred.GetUsername())
	return useKV(ctx, t.out, cred)
}

// solve creates solver s on the consumer node n, prints its phases as they
// change until it ends, and returns its final status: an error unless it
// is SOLVED.
func (t *tour) solve(ctx context.Context, n *nodeAPI, s *fluidos.Solver) (*fluidos.SolverStatus, error) {
	id := s.GetId()
	if _, err := n.solvers.CreateSolver(ctx, &fluidos.CreateSolverRequest{Solver: s}); err != nil {
		return nil, fmt.Errorf("solver %s: %w", id, err)
	}
	w, err := n.solvers.WatchSolver(ctx, &fluidos.WatchSolverRequest{Id: id})
	if err != nil {
		return nil, err
	}
	start := time.Now()
	var last *fluidos.Solver
	printed := ""
	for {
		resp, err := w.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("solver %s: %w", id, err)
		}
		if resp.GetSolver() == nil {
			return nil, fmt.Errorf("solver %s was deleted", id)
		}
		last = resp.GetSolver()
		st := last.GetStatus()
		line := fmt.Sprintf("%-9s discovery %-9s reservation %-9s purchase %-9s allocation %-9s %s", phaseName(st.GetSolverPhase()),
			phaseName(st.GetDiscoveryPhase()), phaseName(st.GetReservationPhase()), phaseName(st.GetPurchasePhase()),
			phaseName(st.GetAllocationPhase()), st.GetMessage())
		if line != printed {
			printed = line
			t.out.printf("  %-16s %-130s %5.1fs\n", "solver "+id, line, time.Since(start).Seconds())
		}
	}
	if last == nil {
		return nil, fmt.Errorf("solver %s: its watch ended without a state", id)
	}
	st := last.GetStatus()
	if st.GetSolverPhase() != fluidos.Phase_PHASE_SOLVED {
		return nil, fmt.Errorf("solver %s ended %s: %s", id, phaseName(st.GetSolverPhase()), st.GetMessage())
	}
	return st, nil
}

// contract prints the contract a solved solver bought (status st) and
// checks that node seller sold it.
func (t *tour) contract(ctx context.Context, n *nodeAPI, st *fluidos.SolverStatus, seller string) (*fluidos.Contract, error) {
	c, err := n.contracts.GetContract(ctx, &fluidos.GetContractRequest{Id: st.GetContractId(), Role: fluidos.ContractRole_CONTRACT_ROLE_BOUGHT})
	if err != nil {
		return nil, fmt.Errorf("contract %s: %w", st.GetContractId(), err)
	}
	k := c.GetContract()
	t.out.printf("  contract %s: %s bought %q from %s\n", k.GetId(), k.GetBuyer().GetNodeId(), k.GetFlavor().GetId(), k.GetSeller().GetNodeId())
	if got := k.GetSeller().GetNodeId(); got != seller {
		return nil, fmt.Errorf("contract %s was bought from %s, not from %s", k.GetId(), got, seller)
	}
	return k, nil
}

// useKV stores a value in the key-value service bought, reads it back, and
// checks that a wrong password is refused.
func useKV(ctx context.Context, out *printer, cred *fluidos.PeeringTargetCredentials) error {
	const value = "bought through FLUIDOS"
	u := strings.TrimSuffix(cred.GetEndpoint(), "/") + "/kv/tour"
	do := func(method, user, password, body string) (int, string, error) {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(rctx, method, u, strings.NewReader(body))
		if err != nil {
			return 0, "", err
		}
		req.SetBasicAuth(user, password)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
		return resp.StatusCode, string(b), err
	}
	if code, _, err := do(http.MethodPut, cred.GetUsername(), cred.GetPassword(), value); err != nil || code != http.StatusNoContent {
		return fmt.Errorf("PUT %s: %d, %v", u, code, err)
	}
	code, body, err := do(http.MethodGet, cred.GetUsername(), cred.GetPassword(), "")
	if err != nil || code != http.StatusOK || body != value {
		return fmt.Errorf("GET %s: %d %q, %v; want 200 %q", u, code, body, err, value)
	}
	out.printf("  PUT then GET %s with the credentials -> %q\n", u, body)
	if code, _, err := do(http.MethodGet, cred.GetUsername(), "not-"+cred.GetPassword(), ""); err != nil || code != http.StatusUnauthorized {
		return fmt.Errorf("GET %s with a wrong password: %d, %v; want 401", u, code, err)
	}
	out.printf("  GET %s with a wrong password -> 401\n", u)
	return nil
}

// releaseService deletes the tour's solvers, which releases what they
// bought, and waits until the sellers have torn it down.
func (t *tour) releaseService(ctx context.Context, quiet bool) error {
	n, err := dialNode(t.info.Nodes[Consumer].API, t.info.FluidosTLSDir)
	if err != nil {
		return err
	}
	defer n.Close()
	for _, id := range []string{tourSolver, tourDBSolver, tourSliceSolver} {
		if err := t.releaseSolver(ctx, n, id, quiet); err != nil {
			return err
		}
	}
	return nil
}

// releaseSolver deletes solver id of the consumer node n, which releases
// what it bought, and waits until the seller has torn it down. A solver
// that is not there is done.
func (t *tour) releaseSolver(ctx context.Context, n *nodeAPI, id string, quiet bool) error {
	sol, err := n.solvers.GetSolver(ctx, &fluidos.GetSolverRequest{Id: id})
	switch {
	case status.Code(err) == codes.NotFound:
		return nil
	case err != nil:
		return fmt.Errorf("solver %s: %w", id, err)
	}
	alloc := sol.GetSolver().GetStatus().GetAllocationId()
	if _, err = n.solvers.DeleteSolver(ctx, &fluidos.DeleteSolverRequest{Id: id}); err != nil && status.Code(err) != codes.NotFound {
		return fmt.Errorf("solver %s: %w", id, err)
	}
	if !quiet {
		t.out.printf("  solver %s deleted\n", id)
	}
	if alloc == "" {
		return nil
	}
	printed := ""
	return waitReleased(ctx, n, alloc, func(a *fluidos.Allocation) {
		line := fmt.Sprintf("  allocation %s %s: %s\n", a.GetId(), strings.TrimPrefix(a.GetStatus().GetState().String(), "ALLOCATION_STATE_"), a.GetStatus().GetMessage())
		if !quiet && line != printed {
			printed = line
			t.out.printf("%s", line)
		}
	})
}

// waitReleased follows the bought allocation id until it is RELEASED (or
// gone), calling show at each change.
func waitReleased(ctx context.Context, n *nodeAPI, id string, show func(*fluidos.Allocation)) error {
	s, err := n.allocations.WatchAllocation(ctx, &fluidos.WatchAllocationRequest{Id: id, Role: fluidos.ContractRole_CONTRACT_ROLE_BOUGHT})
	if err != nil {
		return fmt.Errorf("allocation %s: %w", id, err)
	}
	for {
		resp, err := s.Recv()
		switch {
		case errors.Is(err, io.EOF), status.Code(err) == codes.NotFound:
			return nil
		case err != nil:
			return fmt.Errorf("allocation %s: %w", id, err)
		}
		a := resp.GetAllocation()
		if a == nil {
			return nil
		}
		show(a)
		if a.GetStatus().GetState() == fluidos.AllocationState_ALLOCATION_STATE_RELEASED {
			return nil
		}
	}
}

func phaseName(p fluidos.Phase) string { return strings.TrimPrefix(p.String(), "PHASE_") }
