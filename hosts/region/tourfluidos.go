package region

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
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
// blueprint through a solver (discovery, reservation, purchase), printing
// the solver's phases as they change, and shows the contract.
func (t *tour) buyService(ctx context.Context) error {
	n, err := dialNode(t.info.Nodes[Consumer].API, t.info.FluidosTLSDir)
	if err != nil {
		return err
	}
	defer n.Close()
	sel, err := rear.ParseQuery(fluidos.FlavorType_FLAVOR_TYPE_SERVICE, url.Values{"filter[category][match]": {"database"}})
	if err != nil {
		return err
	}
	password := rand.Text()[:16]
	_, err = n.solvers.CreateSolver(ctx, &fluidos.CreateSolverRequest{Solver: &fluidos.Solver{Id: tourSolver, Selector: sel,
		FindCandidate: true, ReserveAndBuy: true,
		Configuration: &fluidos.Configuration{Spec: &fluidos.Configuration_Service{Service: &fluidos.ServiceConfiguration{
			Parameters: map[string]string{"password": password}}}}}})
	if err != nil {
		return fmt.Errorf("solver %s: %w", tourSolver, err)
	}
	t.out.printf("  solver %s on the consumer: a Service of category database, password chosen at random (not shown)\n", tourSolver)
	s, err := n.solvers.WatchSolver(ctx, &fluidos.WatchSolverRequest{Id: tourSolver})
	if err != nil {
		return err
	}
	start := time.Now()
	var last *fluidos.Solver
	printed := ""
	for {
		resp, err := s.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("solver %s: %w", tourSolver, err)
		}
		if resp.GetSolver() == nil {
			return fmt.Errorf("solver %s was deleted", tourSolver)
		}
		last = resp.GetSolver()
		st := last.GetStatus()
		line := fmt.Sprintf("%-9s discovery %-9s reservation %-9s purchase %-9s %s", phaseName(st.GetSolverPhase()),
			phaseName(st.GetDiscoveryPhase()), phaseName(st.GetReservationPhase()), phaseName(st.GetPurchasePhase()), st.GetMessage())
		if line != printed {
			printed = line
			t.out.printf("  %-22s %-110s %5.1fs\n", "solver "+tourSolver, line, time.Since(start).Seconds())
		}
	}
	st := last.GetStatus()
	if st.GetSolverPhase() != fluidos.Phase_PHASE_SOLVED {
		return fmt.Errorf("solver %s ended %s: %s", tourSolver, phaseName(st.GetSolverPhase()), st.GetMessage())
	}
	c, err := n.contracts.GetContract(ctx, &fluidos.GetContractRequest{Id: st.GetContractId(), Role: fluidos.ContractRole_CONTRACT_ROLE_BOUGHT})
	if err != nil {
		return fmt.Errorf("contract %s: %w", st.GetContractId(), err)
	}
	k := c.GetContract()
	t.out.printf("  contract %s: %s bought %q from %s\n", k.GetId(), k.GetBuyer().GetNodeId(), k.GetFlavor().GetId(), k.GetSeller().GetNodeId())
	return nil
}

// releaseService deletes the tour's solver.
func (t *tour) releaseService(ctx context.Context, quiet bool) error {
	n, err := dialNode(t.info.Nodes[Consumer].API, t.info.FluidosTLSDir)
	if err != nil {
		return err
	}
	defer n.Close()
	_, err = n.solvers.DeleteSolver(ctx, &fluidos.DeleteSolverRequest{Id: tourSolver})
	switch {
	case status.Code(err) == codes.NotFound:
		return nil
	case err != nil:
		return fmt.Errorf("solver %s: %w", tourSolver, err)
	}
	if !quiet {
		t.out.printf("  solver %s deleted\n", tourSolver)
	}
	return nil
}

func phaseName(p fluidos.Phase) string { return strings.TrimPrefix(p.String(), "PHASE_") }
