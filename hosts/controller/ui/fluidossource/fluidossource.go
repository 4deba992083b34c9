// Package fluidossource feeds the controller's status page (package ui)
// with what a FLUIDOS node trades: its solvers, its contracts (bought and
// sold) and their allocations, each with its live state and latest
// message. It reads them through the node's gRPC API (the caller dials it,
// with a certificate the node accepts), polling every Interval while
// someone watches the page (it is a ui.WhileWatched source: the page runs
// it only then), and emits a row per object, keyed "<node>/<id>" so that
// the two sides of one contract are two rows; an object that disappears
// from the node disappears from the page, and when the page stops the
// source, its rows go too (they would go stale). Rows carry display fields
// only: no credential of a contract or a solver reaches the page.
package fluidossource

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"

	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/hosts/controller/ui"
)

// DefaultInterval is how often a Source polls its node.
const DefaultInterval = 500 * time.Millisecond

// Config configures a Source.
type Config struct {
	// Conn is a connection to the node's API. Required.
	Conn grpc.ClientConnInterface
	// Org is who sees the rows: ui.AdminOnly (the default) or an
	// organization (the admin sees them too).
	Org string
	// Interval is the pause between two polls; default DefaultInterval.
	Interval time.Duration
	// Logger receives logs; nil discards.
	Logger *slog.Logger
}

// Source is a ui.Source of one node's solvers, contracts and allocations.
type Source struct {
	cfg         Config
	log         *slog.Logger
	node        fluidos.NodeServiceClient
	solvers     fluidos.SolverServiceClient
	contracts   fluidos.ContractServiceClient
	allocations fluidos.AllocationServiceClient

	mu    sync.Mutex
	shown map[string]ui.Row // by kind/key: what the page has, across runs
}

var _ ui.WhileWatched = (*Source)(nil)

// New returns a source of the node cfg.Conn reaches.
func New(cfg Config) (*Source, error) {
	if cfg.Conn == nil {
		return nil, errors.New("fluidossource: Config.Conn is required")
	}
	if cfg.Org == "" {
		cfg.Org = ui.AdminOnly
	}
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Source{cfg: cfg, log: log, node: fluidos.NewNodeServiceClient(cfg.Conn), solvers: fluidos.NewSolverServiceClient(cfg.Conn),
		contracts: fluidos.NewContractServiceClient(cfg.Conn), allocations: fluidos.NewAllocationServiceClient(cfg.Conn),
		shown: map[string]ui.Row{}}, nil
}

// WhileWatched implements ui.WhileWatched: the source polls its node,
// which is worth it only while someone watches.
func (s *Source) WhileWatched() bool { return true }

// Run emits the node's rows, then their changes, until ctx ends or a call
// to the node fails (the page runs it again). When ctx ends, it deletes
// the rows it emitted; after a failure they stay until the next run
// updates them.
func (s *Source) Run(ctx context.Context, out ui.Emitter) error {
	defer func() {
		if ctx.Err() != nil {
			s.withdraw(out)
		}
	}()
	n, err := s.node.GetNode(ctx, &fluidos.GetNodeRequest{})
	if err != nil {
		return fmt.Errorf("fluidossource: %w", err)
	}
	id := n.GetNode().GetNodeId()
	tick := time.NewTicker(s.cfg.Interval)
	defer tick.Stop()
	for {
		rows, err := s.poll(ctx, id)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("fluidossource: node %s: %w", id, err)
		}
		s.emit(out, rows)
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// emit puts the rows that are new or changed and deletes those the node no
// longer has.
func (s *Source) emit(out ui.Emitter, rows []ui.Row) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := map[string]bool{}
	for _, r := range rows {
		id := r.Kind + "/" + r.Key
		now[id] = true
		if old, ok := s.shown[id]; ok && sameRow(old, r) {
			continue
		}
		s.shown[id] = r
		out.Put(r)
	}
	for id, r := range s.shown {
		if !now[id] {
			delete(s.shown, id)
			out.Delete(r.Kind, r.Key)
		}
	}
}

// withdraw deletes every row the page has of the source.
func (s *Source) withdraw(out ui.Emitter) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, r := range s.shown {
		delete(s.shown, id)
		out.Delete(r.Kind, r.Key)
	}
}

func sameRow(a, b ui.Row) bool {
	return a.State == b.State && a.Where == b.Where && a.Message == b.Message && strings.Join(a.Errors, "\x00") == strings.Join(b.Errors, "\x00")
}

// poll reads the node's solvers, contracts and allocations as rows.
func (s *Source) poll(ctx context.Context, node string) ([]ui.Row, error) {
	sol, err := s.solvers.ListSolvers(ctx, &fluidos.ListSolversRequest{})
	if err != nil {
		return nil, err
	}
	con, err := s.contracts.ListContracts(ctx, &fluidos.ListContractsRequest{})
	if err != nil {
		return nil, err
	}
	all, err := s.allocations.ListAllocations(ctx, &fluidos.ListAllocationsRequest{})
	if err != nil {
		return nil, err
	}
	var rows []ui.Row
	for _, x := range sol.GetSolvers() {
		rows = append(rows, s.solverRow(node, x))
	}
	for _, e := range con.GetContracts() {
		rows = append(rows, s.contractRow(node, e.GetContract(), e.GetRole()))
	}
	for _, e := range all.GetAllocations() {
		rows = append(rows, s.allocationRow(node, e.GetAllocation(), e.GetRole()))
	}
	return rows, nil
}

func (s *Source) solverRow(node string, x *fluidos.Solver) ui.Row {
	st := x.GetStatus()
	phase := func(p fluidos.Phase) string {
		if p == fluidos.Phase_PHASE_UNSPECIFIED {
			return ""
		}
		return trim(p.String(), "PHASE_")
	}
	return ui.Row{Kind: "Solver", Key: node + "/" + x.GetId(), Name: x.GetId(), Org: s.cfg.Org, State: phase(st.GetSolverPhase()),
		Where: "node " + node, Message: st.GetMessage(), Phases: []ui.Phase{
			{Name: "discovery", State: phase(st.GetDiscoveryPhase())},
			{Name: "reservation", State: phase(st.GetReservationPhase())},
			{Name: "purchase", State: phase(st.GetPurchasePhase())},
			{Name: "allocation", State: phase(st.GetAllocationPhase())},
		}}
}

// contractRow shows a contract's state: RELEASED (with why) once it ended,
// EXPIRED while an active contract is past its expiration time (its
// release is under way), else ACTIVE.
func (s *Source) contractRow(node string, c *fluidos.Contract, role fluidos.ContractRole) ui.Row {
	verb := map[fluidos.ContractRole]string{fluidos.ContractRole_CONTRACT_ROLE_SOLD: "sold", fluidos.ContractRole_CONTRACT_ROLE_BOUGHT: "bought"}[role]
	msg := fmt.Sprintf("%s %s, flavor %s", verb, flavorType(c.GetFlavor()), c.GetFlavor().GetId())
	var state string
	switch exp := c.GetExpirationTime(); {
	case c.GetState() == fluidos.ContractState_CONTRACT_STATE_RELEASED:
		state = "RELEASED"
		if r := c.GetReleaseReason(); r != "" {
			msg += "; " + r
		}
	case exp != nil && exp.AsTime().Before(time.Now()):
		state = "EXPIRED"
	default: // ACTIVE or UNSPECIFIED (active)
		state = "ACTIVE"
	}
	return ui.Row{Kind: "Contract", Key: node + "/" + c.GetId(), Org: s.cfg.Org, State: state,
		Where: c.GetSeller().GetNodeId() + " -> " + c.GetBuyer().GetNodeId(), Message: msg}
}

// allocationRow shows an allocation's state and its latest progress (the
// provider engine's task and step while it works, else the status
// message); its credentials are never read.
func (s *Source) allocationRow(node string, a *fluidos.Allocation, role fluidos.ContractRole) ui.Row {
	st := a.GetStatus()
	msg := st.GetMessage()
	if t := st.GetTask(); t != "" {
		msg = t
		if step := st.GetStep(); step != "" {
			msg += ": " + step
		}
	}
	verb := map[fluidos.ContractRole]string{fluidos.ContractRole_CONTRACT_ROLE_SOLD: "sold to " + a.GetBuyer().GetNodeId(),
		fluidos.ContractRole_CONTRACT_ROLE_BOUGHT: "bought from " + a.GetSeller().GetNodeId()}[role]
	where := "contract " + a.GetContractId()
	if verb != "" {
		where += ", " + verb
	}
	return ui.Row{Kind: "Allocation", Key: node + "/" + a.GetId(), Org: s.cfg.Org, State: trim(st.GetState().String(), "ALLOCATION_STATE_"),
		Where: where, Message: msg, Errors: st.GetErrors()}
}

// flavorType names the type of what a flavor sells.
func flavorType(f *fluidos.Flavor) string {
	switch {
	case f.GetK8Slice() != nil:
		return "K8Slice"
	case f.GetService() != nil:
		return "Service"
	case f.GetVm() != nil:
		return "VM"
	case f.GetSensor() != nil:
		return "Sensor"
	}
	return "flavor"
}

func trim(s, prefix string) string { return strings.TrimPrefix(s, prefix) }
