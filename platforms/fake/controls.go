package fake

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Op names an operation of the platform, for fault, latency and pause
// injection and for call counters.
type Op string

// The operations of the platform. OpAny matches every operation.
const (
	OpAny                        Op = "*"
	OpInitCloudlet               Op = "InitCloudlet"
	OpGatherCloudletInfo         Op = "GatherCloudletInfo"
	OpCleanupCloudlet            Op = "CleanupCloudlet"
	OpCreateCluster              Op = "CreateCluster"
	OpUpdateCluster              Op = "UpdateCluster"
	OpDeleteCluster              Op = "DeleteCluster"
	OpCreateAppInst              Op = "CreateAppInst"
	OpUpdateAppInst              Op = "UpdateAppInst"
	OpDeleteAppInst              Op = "DeleteAppInst"
	OpUpdateTrustPolicy          Op = "UpdateTrustPolicy"
	OpUpdateTrustPolicyException Op = "UpdateTrustPolicyException"
	OpDeleteTrustPolicyException Op = "DeleteTrustPolicyException"
	OpListInsts                  Op = "ListInsts"
)

// ErrInjected is the error of an injected fault that sets none.
var ErrInjected = errors.New("fake: injected fault")

// Fault makes calls fail.
type Fault struct {
	// Op is the operation to fail (OpAny for every one).
	Op Op
	// Key restricts the fault to one object (its executor.KeyString); ""
	// matches every object.
	Key string
	// Times is how many matching calls fail; 0 fails every matching call
	// until ClearFaults.
	Times int
	// Err is returned (wrapped with the operation and key); nil returns
	// ErrInjected.
	Err error
	// AfterWork makes the call do its work (create, reserve...) and then
	// fail, as a platform that crashes or times out late would: what it
	// created is left for the engine's undo. Otherwise the call fails
	// before it changes anything.
	AfterWork bool
	// Crash makes a create (CreateCluster, CreateAppInst) stop half way,
	// as when the process running it dies: the object is recorded as
	// being created (ListInsts reports it CREATING, its reservations are
	// held) and the call fails. A later create finishes it (counted in
	// Stats.Adopted); a delete removes it. It takes precedence over
	// AfterWork and applies to no other operation.
	Crash bool
}

// stage is where in a call a fault applies.
type stage int

const (
	beforeWork stage = iota
	midway
	afterWork
)

func (f *Fault) stage() stage {
	switch {
	case f.Crash:
		return midway
	case f.AfterWork:
		return afterWork
	}
	return beforeWork
}

type fault struct {
	Fault
	left int // remaining failures; -1 for unlimited
}

// Inject adds a fault. Faults are checked in the order they were injected;
// the first matching one with failures left applies.
func (p *Platform) Inject(f Fault) {
	p.mu.Lock()
	defer p.mu.Unlock()
	left := f.Times
	if left <= 0 {
		left = -1
	}
	p.faults = append(p.faults, &fault{Fault: f, left: left})
}

// FailNext makes the next n calls of op fail before doing any work.
func (p *Platform) FailNext(op Op, n int) { p.Inject(Fault{Op: op, Times: n}) }

// FailKey makes every call of op for the object with key fail before doing
// any work, until ClearFaults.
func (p *Platform) FailKey(op Op, key string) { p.Inject(Fault{Op: op, Key: key}) }

// ClearFaults removes every fault.
func (p *Platform) ClearFaults() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.faults = nil
}

// SetLatency makes every call of op (OpAny: of every operation without a
// latency of its own) wait d before it works. The wait ends early with the
// call's context. 0 removes the latency.
func (p *Platform) SetLatency(op Op, d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if d <= 0 {
		delete(p.latency, op)
		return
	}
	p.latency[op] = d
}

// Gate blocks the calls that match it until Release.
type Gate struct {
	op       Op
	key      string
	reached  chan struct{}
	released chan struct{}
	p        *Platform
}

// Pause installs a gate: every call of op (OpAny: every operation) for key
// ("" for every key) blocks when it starts, before any work, until the gate
// is released or the call's context ends (the call then returns the
// context's error).
func (p *Platform) Pause(op Op, key string) *Gate {
	g := &Gate{op: op, key: key, reached: make(chan struct{}), released: make(chan struct{}), p: p}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.gates = append(p.gates, g)
	return g
}

// Reached is closed when a call first blocked on the gate.
func (g *Gate) Reached() <-chan struct{} { return g.reached }

// Release removes the gate and unblocks every call waiting on it. It is
// safe to call more than once.
func (g *Gate) Release() {
	g.p.mu.Lock()
	defer g.p.mu.Unlock()
	for i, x := range g.p.gates {
		if x == g {
			g.p.gates = append(g.p.gates[:i], g.p.gates[i+1:]...)
			close(g.released)
			return
		}
	}
}

// Calls returns how many times op was called for key (OpAny: every
// operation; key "": every key). Calls that failed or were cancelled count.
func (p *Platform) Calls(op Op, key string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for ck, c := range p.calls {
		if (op == OpAny || ck.op == op) && (key == "" || ck.key == key) {
			n += c
		}
	}
	return n
}

// KeyStats counts the effective work done for one object, so tests can tell
// duplicate work from idempotent re-runs.
type KeyStats struct {
	// Created counts creates that did work; Adopted those that found the
	// object existing.
	Created, Adopted int
	// Updated counts updates that did work.
	Updated int
	// Deleted counts deletes that removed something; DeletedAbsent those
	// that found nothing.
	Deleted, DeletedAbsent int
}

// Stats returns the counters of the object with key.
func (p *Platform) Stats(key string) KeyStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	if s := p.stats[key]; s != nil {
		return *s
	}
	return KeyStats{}
}

type callKey struct {
	op  Op
	key string
}

// enter counts a call, waits at matching gates and for latency, and
// returns an injected fault that applies before the work.
func (p *Platform) enter(ctx context.Context, op Op, key string) error {
	p.mu.Lock()
	p.calls[callKey{op, key}]++
	var waits []*Gate
	for _, g := range p.gates {
		if (g.op == OpAny || g.op == op) && (g.key == "" || g.key == key) {
			waits = append(waits, g)
		}
	}
	lat, ok := p.latency[op]
	if !ok {
		lat = p.latency[OpAny]
	}
	p.mu.Unlock()

	for _, g := range waits {
		g.p.mu.Lock()
		select {
		case <-g.reached:
		default:
			close(g.reached)
		}
		g.p.mu.Unlock()
		select {
		case <-g.released:
		case <-ctx.Done():
			return fmt.Errorf("fake: %s %s paused: %w", op, key, ctx.Err())
		}
	}
	if lat > 0 {
		t := time.NewTimer(lat)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("fake: %s %s: %w", op, key, ctx.Err())
		}
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("fake: %s %s: %w", op, key, err)
	}
	return p.faultAt(op, key, beforeWork)
}

// fault returns the error of the first matching fault that applies after
// the work, and consumes one of its failures.
func (p *Platform) fault(op Op, key string) error { return p.faultAt(op, key, afterWork) }

// faultAt returns the error of the first matching fault of the stage, and
// consumes one of its failures.
func (p *Platform) faultAt(op Op, key string, at stage) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, f := range p.faults {
		if f.left == 0 || f.stage() != at || (f.Op != OpAny && f.Op != op) || (f.Key != "" && f.Key != key) {
			continue
		}
		if f.left > 0 {
			f.left--
		}
		err := f.Err
		if err == nil {
			err = ErrInjected
		}
		return fmt.Errorf("fake: %s %s: %w", op, key, err)
	}
	return nil
}

func (p *Platform) statsOf(key string) *KeyStats {
	s := p.stats[key]
	if s == nil {
		s = &KeyStats{}
		p.stats[key] = s
	}
	return s
}
