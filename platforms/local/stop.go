package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// stopPolicy is how the platform waits for processes to stop.
type stopPolicy struct {
	grace time.Duration
	// killWait bounds the wait for processes to vanish after SIGKILL.
	killWait time.Duration
}

func (p *Platform) stopPolicy() stopPolicy {
	return stopPolicy{grace: p.cfg.StopGrace, killWait: 10 * time.Second}
}

// stopResult tells what stopping had to do.
type stopResult int

const (
	stopNotRunning stopResult = iota // nothing of ours was running
	stopTerminated                   // everything exited after SIGTERM
	stopKilled                       // something needed SIGKILL
)

// stopRounds bounds how often stopMarked scans again for processes that
// appeared while it stopped the others (a child forked during shutdown).
const stopRounds = 3

// stopMarked stops every process carrying a marker of this state directory
// for an object at or below prefix, except those keep accepts (nil keeps
// none): SIGTERM to each process group such a process leads (to the
// process alone when it leads none), SIGKILL after the grace period (or
// when ctx ends), then it checks again. It fails when processes remain.
func (p *Platform) stopMarked(ctx context.Context, prefix string, keep func(found) bool) (stopResult, error) {
	res := stopNotRunning
	for range stopRounds {
		procs, err := p.scan(prefix)
		if err != nil {
			return res, err
		}
		procs = dropKept(procs, keep)
		if len(procs) == 0 {
			return res, nil
		}
		r, err := p.stopProcs(ctx, procs, p.stopPolicy())
		res = max(res, r)
		if err != nil {
			return res, err
		}
	}
	procs, err := p.scan(prefix)
	if err != nil {
		return res, err
	}
	if procs = dropKept(procs, keep); len(procs) > 0 {
		return res, fmt.Errorf("%w: %d processes of %s keep appearing after %d rounds of stopping (first: pid %d)", ErrStop, len(procs), prefix, stopRounds, procs[0].pid)
	}
	return res, nil
}

func dropKept(procs []found, keep func(found) bool) []found {
	if keep == nil {
		return procs
	}
	out := procs[:0]
	for _, f := range procs {
		if !keep(f) {
			out = append(out, f)
		}
	}
	return out
}

// stopProcs stops procs, found by a scan, and the groups they lead.
func (p *Platform) stopProcs(ctx context.Context, procs []found, pol stopPolicy) (stopResult, error) {
	groups := map[int]bool{} // groups led by a verified process of ours
	signal := func(sig syscall.Signal) error {
		var errs []error
		for _, f := range procs {
			switch {
			case p.verify(f) && f.leader():
				groups[f.pid] = true
				errs = append(errs, p.signalGroup(f.pid, sig))
			case groups[f.pgrp] || (f.leader() && groups[f.pid]):
				// Its group gets the signal (below, or above).
			case !f.leader():
				errs = append(errs, p.signalProcess(f, sig))
			}
		}
		// A group whose verified leader exited keeps its id while members
		// remain, so the id still names the group the platform created.
		for g := range groups {
			if len(groupMembers(g)) > 0 {
				errs = append(errs, p.signalGroup(g, sig))
			}
		}
		return errors.Join(errs...)
	}
	gone := func() bool {
		for _, f := range procs {
			if alive(f.pid, f.startTime) {
				return false
			}
		}
		for g := range groups {
			if len(groupMembers(g)) > 0 {
				return false
			}
		}
		return true
	}

	if err := signal(syscall.SIGTERM); err != nil {
		return stopNotRunning, err
	}
	ctxErr := waitUntil(ctx, pol.grace, gone)
	if ctxErr == nil && gone() {
		return stopTerminated, nil
	}
	if err := signal(syscall.SIGKILL); err != nil {
		return stopKilled, err
	}
	if waitUntil(context.Background(), pol.killWait, gone); !gone() {
		return stopKilled, fmt.Errorf("%w: processes still alive %s after SIGKILL (first: pid %d)", ErrStop, pol.killWait, procs[0].pid)
	}
	if ctxErr != nil {
		return stopKilled, fmt.Errorf("%w: stopped with SIGKILL before the grace period ended: %w", ErrStop, ctxErr)
	}
	return stopKilled, nil
}

// waitUntil polls cond, backing off from 5ms to 50ms, until it holds, d
// passes (nil) or ctx ends (ctx's error).
func waitUntil(ctx context.Context, d time.Duration, cond func() bool) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	interval := 5 * time.Millisecond
	for !cond() {
		t := time.NewTimer(interval)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-timer.C:
			t.Stop()
			return nil
		case <-t.C:
		}
		interval = min(2*interval, 50*time.Millisecond)
	}
	return nil
}

// signalGroup signals process group pgid, which the caller verified was
// created by the platform.
func (p *Platform) signalGroup(pgid int, sig syscall.Signal) error {
	if err := p.guard(pgid); err != nil {
		return err
	}
	if err := p.kill(-pgid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("%w: %v to process group %d: %w", ErrStop, sig, pgid, err)
	}
	return nil
}

// signalProcess signals one process found by a scan, through a pidfd:
// it is verified again after the pidfd is open, so the signal reaches that
// process or none, even if its pid is reused meanwhile.
func (p *Platform) signalProcess(f found, sig syscall.Signal) error {
	if err := p.guard(f.pid); err != nil {
		return err
	}
	proc, err := os.FindProcess(f.pid)
	if err != nil {
		return nil
	}
	defer proc.Release()
	if !p.verify(f) {
		return nil
	}
	if p.signalHook != nil {
		return p.signalHook(f.pid, sig)
	}
	if err := proc.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("%w: %v to process %d: %w", ErrStop, sig, f.pid, err)
	}
	return nil
}

// kill is kill(2), or the test hook.
func (p *Platform) kill(pid int, sig syscall.Signal) error {
	if p.signalHook != nil {
		return p.signalHook(pid, sig)
	}
	return syscall.Kill(pid, sig)
}

// guard refuses to signal pid (a process, or a process group by its id)
// when it is 1 or less (kill(2) would reach init, or every process of this
// user), this program, or this program's process group.
func (p *Platform) guard(pid int) error {
	if pid <= 1 || pid == os.Getpid() || pid == syscall.Getpgrp() {
		return fmt.Errorf("%w: %w %d", ErrStop, errRefused, pid)
	}
	return nil
}
