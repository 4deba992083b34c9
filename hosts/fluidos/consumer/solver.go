package consumer

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/fluidos/rear"
	"github.com/edgekit/edgekit/internal/store"
)

// ErrInvalidSolver: a solver that cannot run as asked.
var ErrInvalidSolver = errors.New("invalid solver")

// CreateSolver validates s, stores it with a fresh status (an empty id is
// given one) and runs it. A solver whose selector is invalid, whose
// configuration is of another flavor type than its selector, or whose
// timeouts are negative is an ErrInvalidSolver error; an existing id is
// the store's ErrAlreadyExists.
func (c *Consumer) CreateSolver(ctx context.Context, s *fluidos.Solver) (*fluidos.Solver, error) {
	s = proto.Clone(s).(*fluidos.Solver)
	if s.GetId() == "" {
		s.Id = newID("solver")
	}
	if err := validateSolver(s); err != nil {
		return nil, err
	}
	s.CreatedAt = timestamppb.Now()
	s.Status = &fluidos.SolverStatus{
		SolverPhase: fluidos.Phase_PHASE_IDLE, DiscoveryPhase: fluidos.Phase_PHASE_IDLE, ReservationPhase: fluidos.Phase_PHASE_IDLE,
		PurchasePhase: fluidos.Phase_PHASE_IDLE, AllocationPhase: fluidos.Phase_PHASE_IDLE,
		Message: "waiting to run", LastChangeTime: s.GetCreatedAt(),
	}
	if _, err := c.solvers.Create(ctx, s); err != nil {
		return nil, err
	}
	c.log.InfoContext(ctx, "solver created", "solver", s.GetId())
	c.launch(s.GetId())
	return s, nil
}

func validateSolver(s *fluidos.Solver) error {
	if err := s.GetSelector().Validate(); err != nil {
		return fmt.Errorf("%w: selector: %w", ErrInvalidSolver, err)
	}
	want := rear.SelectorType(s.GetSelector())
	var got fluidos.FlavorType
	switch s.GetConfiguration().GetSpec().(type) {
	case *fluidos.Configuration_K8Slice:
		got = fluidos.FlavorType_FLAVOR_TYPE_K8SLICE
	case *fluidos.Configuration_Service:
		got = fluidos.FlavorType_FLAVOR_TYPE_SERVICE
	case *fluidos.Configuration_Vm:
		got = fluidos.FlavorType_FLAVOR_TYPE_VM
	case *fluidos.Configuration_Sensor:
		got = fluidos.FlavorType_FLAVOR_TYPE_SENSOR
	}
	if got != fluidos.FlavorType_FLAVOR_TYPE_UNSPECIFIED && got != want {
		return fmt.Errorf("%w: a %s configuration for a selector of %s flavors", ErrInvalidSolver, got, want)
	}
	t := s.GetTimeouts()
	for name, d := range map[string]interface{ AsDuration() time.Duration }{"discovery": t.GetDiscovery(), "reservation": t.GetReservation(),
		"purchase": t.GetPurchase(), "allocation": t.GetAllocation()} {
		if d != nil && d.AsDuration() < 0 {
			return fmt.Errorf("%w: negative %s timeout", ErrInvalidSolver, name)
		}
	}
	if !s.GetFindCandidate() && s.GetReserveAndBuy() {
		return fmt.Errorf("%w: reserve_and_buy needs find_candidate", ErrInvalidSolver)
	}
	if s.GetEstablishPeering() && !s.GetReserveAndBuy() {
		return fmt.Errorf("%w: establish_peering needs reserve_and_buy", ErrInvalidSolver)
	}
	return nil
}

// DeleteSolver stops a solver and deletes it with its discovery,
// candidates and reservation, and releases the contract it bought (the
// keeper gives it back to its seller, which tears down what it
// provisioned; a seller without a release route is not asked, and the
// contract ends at its expiration time).
func (c *Consumer) DeleteSolver(ctx context.Context, id string) error {
	if err := c.stop(ctx, id); err != nil {
		return err
	}
	s, _, err := c.solvers.Get(ctx, id)
	if err != nil {
		return err
	}
	if cid := s.GetStatus().GetContractId(); cid != "" {
		_, err := c.ReleaseBought(ctx, cid, "its solver "+id+" was deleted")
		switch {
		case errors.Is(err, ErrNoReleaseRoute):
			c.log.InfoContext(ctx, "deleting a solver whose contract cannot be released", "solver", id, "err", err)
		case err != nil && !errors.Is(err, store.ErrNotFound):
			return err
		}
	}
	_, err = c.cfg.Store.Txn(ctx, func(tx *store.Tx) error {
		if id := s.GetStatus().GetDiscoveryId(); id != "" {
			c.discoveries.TxDelete(tx, id)
		}
		if id := s.GetStatus().GetReservationId(); id != "" {
			c.reservations.TxDelete(tx, id)
		}
		cands, err := c.candidates.TxList(tx)
		if err != nil {
			return err
		}
		for _, pc := range cands {
			if len(pc.GetSolverIds()) == 1 && pc.GetSolverIds()[0] == id {
				c.candidates.TxDelete(tx, pc.GetId())
			}
		}
		c.solvers.TxDelete(tx, id)
		return nil
	})
	return err
}

// status applies fn to the stored status of solver id and stamps the
// change time.
func (c *Consumer) status(ctx context.Context, id string, fn func(st *fluidos.SolverStatus)) (*fluidos.Solver, error) {
	s, _, err := c.solvers.Modify(ctx, id, func(cur *fluidos.Solver) (bool, error) {
		if cur.Status == nil {
			cur.Status = &fluidos.SolverStatus{}
		}
		fn(cur.Status)
		cur.Status.LastChangeTime = timestamppb.Now()
		return true, nil
	})
	return s, err
}

// timeout is the solver's timeout of a phase, else def.
func timeout(d interface{ AsDuration() time.Duration }, def time.Duration) time.Duration {
	if d != nil && d.AsDuration() > 0 {
		return d.AsDuration()
	}
	return def
}

func newID(prefix string) string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return prefix + "-" + hex.EncodeToString(b[:])
}
