package consumer

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/hosts/fluidos/provider"
)

// errStop: the consumer stops; the solver resumes at the next Start.
var errStop = errors.New("consumer stopping")

// run drives one solver to a final state (or until ctx ends).
func (c *Consumer) run(ctx context.Context, id string) {
	s, _, err := c.solvers.Get(ctx, id)
	if err != nil {
		if ctx.Err() == nil {
			c.log.WarnContext(ctx, "solver vanished before it ran", "solver", id, "err", err)
		}
		return
	}
	if finished(s) {
		return
	}
	start := time.Now()
	err = c.phases(ctx, s)
	switch {
	case errors.Is(err, errStop) || ctx.Err() != nil:
		c.log.InfoContext(context.WithoutCancel(ctx), "solver interrupted; it resumes at the next start", "solver", id)
		return
	case err != nil:
		c.log.WarnContext(ctx, "solver failed", "solver", id, "err", err)
	}
	c.cfg.Metrics.solverDone(err, time.Since(start))
}

// phases runs the phases of s still to run. It returns nil when the
// solver ended SOLVED, the failure when it ended FAILED or TIMED_OUT, and
// errStop when ctx ended first.
func (c *Consumer) phases(ctx context.Context, s *fluidos.Solver) error {
	id := s.GetId()
	if _, err := c.status(ctx, id, func(st *fluidos.SolverStatus) {
		st.SolverPhase, st.Message = fluidos.Phase_PHASE_RUNNING, "running"
	}); err != nil {
		return c.stopOr(ctx, err)
	}
	var (
		tx  *fluidos.Reservation
		err error
	)
	// Resume at the allocation when a contract was bought.
	if cid := s.GetStatus().GetContractId(); cid != "" {
		return c.afterPurchase(ctx, s, cid)
	}
	// Resume at the purchase when a transaction is held.
	if rid := s.GetStatus().GetReservationId(); rid != "" && s.GetStatus().GetContractId() == "" {
		if r, _, gerr := c.reservations.Get(ctx, rid); gerr == nil && r.GetStatus().GetTransactionId() != "" {
			tx = r
		}
	}
	if tx == nil {
		if !s.GetFindCandidate() {
			return c.finish(ctx, id, nil, "nothing to do: find_candidate is not set")
		}
		cands, err := c.discover(ctx, s)
		if err != nil {
			return c.finish(ctx, id, err, "")
		}
		if !s.GetReserveAndBuy() {
			return c.finish(ctx, id, nil, "found "+plural(len(cands), "candidate"))
		}
		if tx, err = c.reserve(ctx, s, cands); err != nil {
			return c.finish(ctx, id, err, "")
		}
	}
	contract, err := c.purchase(ctx, s, tx)
	if err != nil {
		return c.finish(ctx, id, err, "")
	}
	return c.afterPurchase(ctx, s, contract.GetId())
}

// afterPurchase ends a solver that bought contract cid: SOLVED at once,
// or once the seller provisioned what was bought when the solver asks for
// it (establish_peering).
func (c *Consumer) afterPurchase(ctx context.Context, s *fluidos.Solver, cid string) error {
	if !s.GetEstablishPeering() {
		ct, _, err := c.bought.Get(ctx, cid)
		if err != nil {
			return c.finish(ctx, s.GetId(), nil, "bought contract "+cid)
		}
		return c.finish(ctx, s.GetId(), nil, fmt.Sprintf("bought contract %s from %s", cid, ct.GetSeller().GetNodeId()))
	}
	a, err := c.allocate(ctx, s, cid)
	if err != nil {
		return c.finish(ctx, s.GetId(), err, "")
	}
	return c.finish(ctx, s.GetId(), nil, fmt.Sprintf("%s ACTIVE at %s: %s", a.GetId(), a.GetSeller().GetNodeId(), a.GetStatus().GetMessage()))
}

// phaseError is a phase that failed or timed out.
type phaseError struct {
	phase    string
	timedOut bool
	err      error
}

func (e *phaseError) Error() string {
	if e.timedOut {
		return fmt.Sprintf("%s timed out: %v", e.phase, e.err)
	}
	return fmt.Sprintf("%s failed: %v", e.phase, e.err)
}

func (e *phaseError) Unwrap() error { return e.err }

// finish records the end of the solver: SOLVED with msg when err is nil,
// else FAILED (the failing phase's own phase FAILED or TIMED_OUT is set by
// the phase) with err as the message.
func (c *Consumer) finish(ctx context.Context, id string, err error, msg string) error {
	if errors.Is(err, errStop) || (err != nil && ctx.Err() != nil) {
		return errStop
	}
	phase := fluidos.Phase_PHASE_SOLVED
	if err != nil {
		phase, msg = fluidos.Phase_PHASE_FAILED, err.Error()
	}
	if _, serr := c.status(ctx, id, func(st *fluidos.SolverStatus) { st.SolverPhase, st.Message = phase, msg }); serr != nil {
		return c.stopOr(ctx, serr)
	}
	if err != nil {
		c.forgetFailed(ctx, id)
	}
	return err
}

func (c *Consumer) stopOr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return errStop
	}
	return err
}

// phaseEnd turns the error of a phase run under pctx into the phase's
// state: TIMED_OUT when pctx's deadline passed while ctx is alive.
func phaseEnd(ctx, pctx context.Context, name string, err error) (fluidos.Phase, error) {
	switch {
	case ctx.Err() != nil:
		return fluidos.Phase_PHASE_RUNNING, errStop
	case pctx.Err() != nil && errors.Is(pctx.Err(), context.DeadlineExceeded):
		if err == nil {
			err = context.DeadlineExceeded
		}
		return fluidos.Phase_PHASE_TIMED_OUT, &phaseError{phase: name, timedOut: true, err: err}
	case err != nil:
		return fluidos.Phase_PHASE_FAILED, &phaseError{phase: name, err: err}
	}
	return fluidos.Phase_PHASE_SOLVED, nil
}

// discover runs the discovery phase and returns the candidates found.
func (c *Consumer) discover(ctx context.Context, s *fluidos.Solver) ([]*fluidos.PeeringCandidate, error) {
	did := "discovery-" + s.GetId()
	now := timestamppb.Now()
	if _, err := c.status(ctx, s.GetId(), func(st *fluidos.SolverStatus) {
		st.DiscoveryPhase, st.DiscoveryId, st.Message = fluidos.Phase_PHASE_RUNNING, did, "discovering candidates"
	}); err != nil {
		return nil, c.stopOr(ctx, err)
	}
	d := &fluidos.Discovery{Id: did, SolverId: s.GetId(), Selector: s.GetSelector(), Phase: fluidos.Phase_PHASE_RUNNING, StartTime: now, LastChangeTime: now}
	if _, err := c.discoveries.Put(ctx, d); err != nil {
		return nil, c.stopOr(ctx, err)
	}
	pctx, cancel := context.WithTimeout(ctx, timeout(s.GetTimeouts().GetDiscovery(), c.cfg.DiscoveryTimeout))
	defer cancel()
	start := time.Now()
	found, results, err := c.Discover(pctx, s.GetSelector())
	c.cfg.Metrics.discovered(time.Since(start))
	var cands []*fluidos.PeeringCandidate
	if err == nil && pctx.Err() == nil {
		for i, f := range found {
			cands = append(cands, &fluidos.PeeringCandidate{
				Id: fmt.Sprintf("candidate-%s-%d", s.GetId(), i), Flavor: f.Flavor, SolverIds: []string{s.GetId()},
				Available: true, CreatedAt: timestamppb.Now(), SellerAddress: f.Address,
			})
		}
		if len(cands) == 0 {
			err = fmt.Errorf("no peer offers a flavor that matches (%s)", summarize(results))
		}
	}
	phase, err := phaseEnd(ctx, pctx, "discovery", err)
	if errors.Is(err, errStop) {
		return nil, err
	}
	for _, pc := range cands {
		if _, perr := c.candidates.Put(ctx, pc); perr != nil {
			return nil, c.stopOr(ctx, perr)
		}
		d.PeeringCandidateIds = append(d.PeeringCandidateIds, pc.GetId())
	}
	d.Phase, d.PeerResults, d.LastChangeTime = phase, results, timestamppb.Now()
	d.Message = fmt.Sprintf("%s from %s", plural(len(cands), "candidate"), plural(len(results), "peer"))
	if err != nil {
		d.Message = err.Error()
	}
	if _, perr := c.discoveries.Put(ctx, d); perr != nil {
		return nil, c.stopOr(ctx, perr)
	}
	if _, serr := c.status(ctx, s.GetId(), func(st *fluidos.SolverStatus) { st.DiscoveryPhase, st.Message = phase, d.Message }); serr != nil {
		return nil, c.stopOr(ctx, serr)
	}
	return cands, err
}

// summarize says what each peer answered, for a failure message.
func summarize(results []*fluidos.PeerResult) string {
	if len(results) == 0 {
		return "no peers known"
	}
	parts := make([]string, len(results))
	for i, r := range results {
		if r.GetError() != "" {
			parts[i] = r.GetAddress() + ": " + r.GetError()
		} else {
			parts[i] = fmt.Sprintf("%s: %d flavors", r.GetAddress(), r.GetFlavorsFound())
		}
	}
	return strings.Join(parts, "; ")
}

// buyer is the node as it names itself to sellers: a reference seller
// wants an additionalInformation.liqoID.
func (c *Consumer) buyer() *fluidos.NodeIdentity {
	b := proto.Clone(c.cfg.Self).(*fluidos.NodeIdentity)
	if b.GetAdditionalInformation().GetLiqoId() == "" {
		b.AdditionalInformation = &fluidos.NodeAdditionalInformation{LiqoId: b.GetNodeId()}
	}
	b.AdditionalInformation.Kubeconfig = ""
	return b
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// allocate runs the allocation phase: it waits, within the phase's
// timeout, for the seller to report the allocation of contract cid ACTIVE
// (the keeper asks it), showing the seller's progress in the solver's
// message, and hands the credentials to the solver. An allocation that
// fails fails the phase; one that does not complete in time is released.
// A seller without allocation routes fails the phase at its first answer
// (ErrNoAllocationRoute), keeping the contract bought.
func (c *Consumer) allocate(ctx context.Context, s *fluidos.Solver, cid string) (*fluidos.Allocation, error) {
	aid := provider.AllocationID(cid)
	if _, err := c.status(ctx, s.GetId(), func(st *fluidos.SolverStatus) {
		st.AllocationPhase, st.AllocationId, st.Message = fluidos.Phase_PHASE_RUNNING, aid, "waiting for the seller to provision "+aid
	}); err != nil {
		return nil, c.stopOr(ctx, err)
	}
	limit := timeout(s.GetTimeouts().GetAllocation(), c.cfg.AllocationTimeout)
	pctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	var (
		a       *fluidos.Allocation
		err     error
		lastMsg string
	)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
wait:
	for {
		if a, _, err = c.boughtAllocs.Get(pctx, aid); err != nil && pctx.Err() == nil {
			break
		}
		switch st := a.GetStatus(); {
		case pctx.Err() != nil:
			err = pctx.Err()
			break wait
		case st.GetState() == fluidos.AllocationState_ALLOCATION_STATE_ACTIVE:
			break wait
		case provider.Ended(a) || a.GetReleaseRequested():
			err = fmt.Errorf("the seller reports %s: %s", strings.TrimPrefix(st.GetState().String(), "ALLOCATION_STATE_"), st.GetMessage())
			break wait
		case c.unfollowed(a):
			// The seller's first answer on its allocation routes was 404:
			// waiting longer cannot change it.
			err = fmt.Errorf("%w: contract %s is bought from %s, which does not provision over REAR (it answered 404 on the allocation routes, as a reference FLUIDOS node does: its buyers allocate through a Liqo peering with the contract's peering credentials); the contract is kept",
				ErrNoAllocationRoute, cid, a.GetSeller().GetNodeId())
			break wait
		case st.GetMessage() != lastMsg:
			lastMsg = st.GetMessage()
			msg := allocationProgress(a)
			if _, serr := c.status(ctx, s.GetId(), func(ss *fluidos.SolverStatus) { ss.Message = msg }); serr != nil {
				return nil, c.stopOr(ctx, serr)
			}
		}
		select {
		case <-pctx.Done():
		case <-tick.C:
		}
	}
	phase, err := phaseEnd(ctx, pctx, "allocation", err)
	if errors.Is(err, errStop) {
		return nil, err
	}
	if phase == fluidos.Phase_PHASE_TIMED_OUT {
		if _, rerr := c.ReleaseBought(context.WithoutCancel(ctx), cid, fmt.Sprintf("the allocation did not complete within %v", limit)); rerr != nil {
			c.log.WarnContext(ctx, "releasing a contract whose allocation timed out", "contract", cid, "err", rerr)
		}
	}
	if _, serr := c.status(ctx, s.GetId(), func(st *fluidos.SolverStatus) {
		st.AllocationPhase = phase
		if err == nil {
			st.Credentials, st.Message = a.GetCredentials(), allocationProgress(a)
		}
	}); serr != nil {
		return nil, c.stopOr(ctx, serr)
	}
	return a, err
}

// ErrNoAllocationRoute: the seller of a contract does not provision it
// over REAR (a reference FLUIDOS node has no allocation routes).
var ErrNoAllocationRoute = errors.New("the seller has no allocation route")

// allocationProgress says where a seller is with an allocation.
func allocationProgress(a *fluidos.Allocation) string {
	st := a.GetStatus()
	msg := strings.ToLower(strings.TrimPrefix(st.GetState().String(), "ALLOCATION_STATE_")) + ": " + st.GetMessage()
	if st.GetTask() != "" {
		msg += " (" + st.GetTask()
		if st.GetStep() != "" {
			msg += ", " + st.GetStep()
		}
		msg += ")"
	}
	return msg
}
