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
	"github.com/edgekit/edgekit/fluidos/rear"
	"github.com/edgekit/edgekit/hosts/fluidos/provider"
	"github.com/edgekit/edgekit/internal/store"
)

// reserve runs the reservation phase: the candidates are tried best first
// until one is reserved.
func (c *Consumer) reserve(ctx context.Context, s *fluidos.Solver, cands []*fluidos.PeeringCandidate) (*fluidos.Reservation, error) {
	rid := "reservation-" + s.GetId()
	if _, err := c.status(ctx, s.GetId(), func(st *fluidos.SolverStatus) {
		st.ReservationPhase, st.ReservationId, st.Message = fluidos.Phase_PHASE_RUNNING, rid, "reserving"
	}); err != nil {
		return nil, c.stopOr(ctx, err)
	}
	rank(cands)
	pctx, cancel := context.WithTimeout(ctx, timeout(s.GetTimeouts().GetReservation(), c.cfg.ReservationTimeout))
	defer cancel()
	var refusals []string
	for _, pc := range cands {
		if pctx.Err() != nil {
			break
		}
		f := pc.GetFlavor()
		seller := proto.Clone(f.GetOwner()).(*fluidos.NodeIdentity)
		seller.Ip = pc.GetSellerAddress()
		// The amounts to reserve, within the seller's minimums and steps
		// (an error is this candidate's refusal).
		cfg, fitted, ferr := fitPartition(f, s.GetConfiguration())
		if ferr != nil {
			cfg = s.GetConfiguration()
		}
		r := &fluidos.Reservation{
			Id: rid, SolverId: s.GetId(), Buyer: c.buyer(), Seller: seller, PeeringCandidateId: pc.GetId(),
			Configuration: cfg, Reserve: true, Purchase: true,
			Status: &fluidos.ReservationStatus{Phase: fluidos.Phase_PHASE_RUNNING, ReservePhase: fluidos.Phase_PHASE_RUNNING, LastChangeTime: timestamppb.Now()},
		}
		if _, err := c.reservations.Put(ctx, r); err != nil {
			return nil, c.stopOr(ctx, err)
		}
		var tx *fluidos.Transaction
		err := ferr
		if err == nil {
			tx, err = c.reserveOne(pctx, s, pc, cfg)
		}
		attempt := &fluidos.SolverAttempt{CandidateId: pc.GetId(), FlavorId: f.GetId(), SellerId: seller.GetNodeId()}
		if err != nil {
			if ctx.Err() != nil {
				return nil, errStop
			}
			attempt.Error = err.Error()
			refusals = append(refusals, fmt.Sprintf("%s of %s: %v", f.GetId(), seller.GetNodeId(), err))
			r.Status.ReservePhase, r.Status.Phase, r.Status.Message = fluidos.Phase_PHASE_FAILED, fluidos.Phase_PHASE_FAILED, err.Error()
		} else {
			r.Status.ReservePhase, r.Status.TransactionId = fluidos.Phase_PHASE_SOLVED, tx.GetId()
			r.Status.Message = "reserved until " + tx.GetExpirationTime().AsTime().Format(time.RFC3339)
			if fitted != "" {
				r.Status.Message += "; to fit the seller's partitioning: " + fitted
			}
		}
		r.Status.LastChangeTime = timestamppb.Now()
		if _, perr := c.reservations.Put(ctx, r); perr != nil {
			return nil, c.stopOr(ctx, perr)
		}
		if _, serr := c.status(ctx, s.GetId(), func(st *fluidos.SolverStatus) {
			st.Attempts = append(st.Attempts, attempt)
			if err == nil {
				st.ReservationPhase, st.Message = fluidos.Phase_PHASE_SOLVED, r.Status.Message
			} else {
				st.Message = "candidate refused: " + err.Error()
			}
		}); serr != nil {
			return nil, c.stopOr(ctx, serr)
		}
		if err == nil {
			return r, nil
		}
	}
	err := fmt.Errorf("every candidate refused: %s", strings.Join(refusals, "; "))
	phase, err := phaseEnd(ctx, pctx, "reservation", err)
	if errors.Is(err, errStop) {
		return nil, err
	}
	if _, serr := c.status(ctx, s.GetId(), func(st *fluidos.SolverStatus) { st.ReservationPhase = phase }); serr != nil {
		return nil, c.stopOr(ctx, serr)
	}
	return nil, err
}

// reserveOne asks a candidate's seller for it with configuration cfg,
// after checking a service configuration against the flavor's template.
func (c *Consumer) reserveOne(ctx context.Context, s *fluidos.Solver, pc *fluidos.PeeringCandidate, cfg *fluidos.Configuration) (*fluidos.Transaction, error) {
	f := pc.GetFlavor()
	if err := provider.ConfigurationTypeMatches(f, cfg); err != nil {
		return nil, err
	}
	if sv := f.GetService(); sv != nil {
		if err := checkTemplate(sv, cfg.GetService()); err != nil {
			return nil, err
		}
	}
	req := &fluidos.ReserveRequest{FlavorId: f.GetId(), Buyer: c.buyer(), Configuration: cfg}
	tx, err := c.cfg.Client.Reserve(ctx, pc.GetSellerAddress(), f.GetOwner().GetNodeId(), req, f)
	if err != nil {
		return nil, err
	}
	if err := checkTransaction(tx, req); err != nil {
		return nil, err
	}
	return tx, nil
}

// checkTemplate validates a service configuration (nil: none) against the
// flavor's template as received (or as its typed schema stands for).
func checkTemplate(sv *fluidos.Service, sc *fluidos.ServiceConfiguration) error {
	text := []byte(sv.GetConfigurationTemplate())
	if len(text) == 0 {
		var err error
		if text, err = rear.TemplateOf(sv.GetConfigurationSchema()); err != nil {
			return err
		}
	}
	tmpl, err := rear.CompileTemplate(text)
	if err != nil {
		return err
	}
	data, err := rear.ConfigurationData(sc, sv.GetConfigurationSchema())
	if err != nil {
		return err
	}
	return tmpl.Validate(data)
}

// purchase runs the purchase phase: the reserved transaction is bought,
// transport errors retried until the phase's timeout.
func (c *Consumer) purchase(ctx context.Context, s *fluidos.Solver, r *fluidos.Reservation) (*fluidos.Contract, error) {
	if _, err := c.status(ctx, s.GetId(), func(st *fluidos.SolverStatus) {
		st.PurchasePhase, st.Message = fluidos.Phase_PHASE_RUNNING, "buying transaction "+r.GetStatus().GetTransactionId()
	}); err != nil {
		return nil, c.stopOr(ctx, err)
	}
	pctx, cancel := context.WithTimeout(ctx, timeout(s.GetTimeouts().GetPurchase(), c.cfg.PurchaseTimeout))
	defer cancel()
	req := &fluidos.PurchaseRequest{BuyerCredentials: &fluidos.PeeringCredentials{ClusterId: c.cfg.Self.GetNodeId()}}
	var (
		contract *fluidos.Contract
		err      error
	)
	for backoff := 50 * time.Millisecond; ; backoff = min(2*backoff, 2*time.Second) {
		contract, err = c.cfg.Client.Purchase(pctx, r.GetSeller().GetIp(), r.GetSeller().GetNodeId(), r.GetStatus().GetTransactionId(), req)
		var se *rear.StatusError
		if err == nil || errors.As(err, &se) || errors.Is(err, rear.ErrGarbage) || errors.Is(err, rear.ErrImpersonation) || pctx.Err() != nil {
			break
		}
		c.log.InfoContext(ctx, "purchase failed, retrying", "solver", s.GetId(), "err", err)
		t := time.NewTimer(backoff)
		select {
		case <-pctx.Done():
			t.Stop()
		case <-t.C:
		}
	}
	if err == nil {
		if err = c.checkBought(ctx, contract, r); err != nil {
			contract = nil // not the solver's
		}
	} else {
		err = purchaseRefusal(err, c.reservedFlavor(ctx, r))
	}
	phase, err := phaseEnd(ctx, pctx, "purchase", err)
	if errors.Is(err, errStop) {
		return nil, err
	}
	if err == nil {
		if contract.GetCreatedAt() == nil { // REAR does not carry it: the time it was bought
			contract.CreatedAt = timestamppb.Now()
		}
		if contract.GetState() == fluidos.ContractState_CONTRACT_STATE_UNSPECIFIED { // nor this
			contract.State = fluidos.ContractState_CONTRACT_STATE_ACTIVE
		}
		// Kept under its seller's identity and the seller's id: two
		// sellers may name contracts alike.
		contract.Id = BoughtID(r.GetSeller().GetNodeId(), contract.GetId())
		if _, perr := c.bought.Create(ctx, contract); errors.Is(perr, store.ErrAlreadyExists) {
			if cerr := c.collision(ctx, contract); cerr != nil {
				err = &phaseError{phase: "purchase", err: cerr}
			}
		} else if perr != nil {
			return nil, c.stopOr(ctx, perr)
		}
	}
	if err != nil && contract != nil {
		phase, contract = fluidos.Phase_PHASE_FAILED, nil
	} else if err == nil {
		if _, ferr := c.followed(ctx, contract, r.GetSeller().GetIp()); ferr != nil {
			return nil, c.stopOr(ctx, ferr)
		}
	}
	r.Status.PurchasePhase, r.Status.Phase, r.Status.LastChangeTime = phase, phase, timestamppb.Now()
	r.Status.ContractId = contract.GetId()
	if err != nil {
		r.Status.Message = err.Error()
	}
	if _, perr := c.reservations.Put(ctx, r); perr != nil {
		return nil, c.stopOr(ctx, perr)
	}
	if _, serr := c.status(ctx, s.GetId(), func(st *fluidos.SolverStatus) {
		st.PurchasePhase = phase
		if err == nil {
			st.ContractId, st.Credentials = contract.GetId(), contract.GetPeeringTargetCredentials()
		}
	}); serr != nil {
		return nil, c.stopOr(ctx, serr)
	}
	return contract, err
}

// reservedFlavor is the id of the flavor r reserved ("" when its candidate
// is gone).
func (c *Consumer) reservedFlavor(ctx context.Context, r *fluidos.Reservation) string {
	pc, _, err := c.candidates.Get(ctx, r.GetPeeringCandidateId())
	if err != nil {
		return ""
	}
	return pc.GetFlavor().GetId()
}

// checkBought checks a contract its seller answered against the
// reservation r bought.
func (c *Consumer) checkBought(ctx context.Context, ct *fluidos.Contract, r *fluidos.Reservation) error {
	tx := &fluidos.Transaction{Id: r.GetStatus().GetTransactionId(), FlavorId: c.reservedFlavor(ctx, r), Buyer: r.GetBuyer(), Configuration: r.GetConfiguration()}
	if tx.FlavorId == "" {
		tx.FlavorId = ct.GetFlavor().GetId()
	}
	return checkContract(ct, tx, r.GetSeller())
}

// collision is the error of a contract bought whose id (its seller's and
// the seller's contract id) is already the id of another contract this
// node bought (from the same seller for another transaction); nil when
// the record is this very contract (a purchase resumed).
func (c *Consumer) collision(ctx context.Context, ct *fluidos.Contract) error {
	old, _, err := c.bought.Get(ctx, ct.GetKeyString())
	if err != nil {
		return err
	}
	if old.GetSeller().GetNodeId() == ct.GetSeller().GetNodeId() && old.GetTransactionId() == ct.GetTransactionId() {
		return nil
	}
	return fmt.Errorf("%w: seller %s answered with contract %s for transaction %s, the id of the contract bought from %s for transaction %s; the earlier record is kept",
		ErrContractIDTaken, ct.GetSeller().GetNodeId(), SellerContractID(ct.GetId(), ct.GetSeller().GetNodeId()), ct.GetTransactionId(), old.GetSeller().GetNodeId(), old.GetTransactionId())
}

// ErrContractIDTaken: a seller answered a purchase with a contract id this
// node already holds for another contract it bought from that seller.
var ErrContractIDTaken = errors.New("a contract bought reuses the id of another contract bought")
