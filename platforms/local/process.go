package local

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// procInfo is what the platform reads from /proc/<pid>/stat.
type procInfo struct {
	state     byte   // field 3: R, S, D, Z, X...
	pgrp      int    // field 5
	startTime uint64 // field 22, clock ticks since boot
}

// errNoProcess reports that /proc/<pid> does not exist.
var errNoProcess = errors.New("no such process")

// readProcStat parses /proc/<pid>/stat. The command name (field 2) is
// parenthesised and may hold spaces and parentheses, so fields are counted
// from the last ')'.
func readProcStat(pid int) (procInfo, error) {
	if pid <= 0 {
		return procInfo{}, errNoProcess
	}
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
			return procInfo{}, errNoProcess
		}
		return procInfo{}, err
	}
	return parseProcStat(b)
}

func parseProcStat(b []byte) (procInfo, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procInfo{}, fmt.Errorf("malformed stat line")
	}
	// Fields from 3 on.
	f := bytes.Fields(b[i+1:])
	if len(f) < 20 {
		return procInfo{}, fmt.Errorf("malformed stat line: %d fields after the command", len(f))
	}
	var pi procInfo
	if len(f[0]) != 1 {
		return procInfo{}, fmt.Errorf("malformed stat state %q", f[0])
	}
	pi.state = f[0][0]
	pgrp, err := strconv.Atoi(string(f[2])) // field 5
	if err != nil {
		return procInfo{}, fmt.Errorf("malformed stat pgrp: %w", err)
	}
	pi.pgrp = pgrp
	st, err := strconv.ParseUint(string(f[19]), 10, 64) // field 22
	if err != nil {
		return procInfo{}, fmt.Errorf("malformed stat starttime: %w", err)
	}
	pi.startTime = st
	return pi, nil
}

// running reports whether pid is a live (not zombie) process.
func (pi procInfo) running() bool { return pi.state != 'Z' && pi.state != 'X' }

// isOurs reports whether pid is still the live process the platform
// started: it exists, is not a zombie, has the recorded start time and
// leads its own process group.
func isOurs(pid int, startTime uint64) bool {
	pi, err := readProcStat(pid)
	return err == nil && pi.running() && pi.startTime == startTime && pi.pgrp == pid
}

// groupMembers reports whether any live process other than a zombie is in
// process group pgid.
func groupHasMembers(pgid int) bool {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return false
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		pi, err := readProcStat(pid)
		if err == nil && pi.pgrp == pgid && pi.running() {
			return true
		}
	}
	return false
}

// procSpec is what startProcess runs.
type procSpec struct {
	path   string
	args   []string
	env    []string
	dir    string
	stdout string
	stderr string
}

// startProcess starts spec in a new process group with stdout and stderr
// appended to their log files, and returns its pid and start time. A
// goroutine reaps the process when it exits; the process outlives the
// platform (and this program) so that a restarted engine can adopt it.
func startProcess(spec procSpec) (pid int, startTime uint64, err error) {
	open := func(path string) (*os.File, error) {
		return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	}
	stdout, err := open(spec.stdout)
	if err != nil {
		return 0, 0, fmt.Errorf("%w: %w", ErrStart, err)
	}
	defer stdout.Close()
	stderr, err := open(spec.stderr)
	if err != nil {
		return 0, 0, fmt.Errorf("%w: %w", ErrStart, err)
	}
	defer stderr.Close()

	cmd := exec.Command(spec.path, spec.args...)
	cmd.Dir = spec.dir
	cmd.Env = spec.env
	cmd.Stdout = stdout
	cmd.Stderr = stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return 0, 0, fmt.Errorf("%w: %w", ErrStart, err)
	}
	pid = cmd.Process.Pid
	go func() { _ = cmd.Wait() }()

	pi, err := readProcStat(pid)
	if err != nil {
		// The process is already gone; a zero start time never matches, so
		// it is treated as dead from here on.
		return pid, 0, nil
	}
	return pid, pi.startTime, nil
}

// stopPolicy is how stopProcess waits.
type stopPolicy struct {
	grace    time.Duration
	interval time.Duration
	// killWait bounds the wait for the group to vanish after SIGKILL.
	killWait time.Duration
}

// stopResult tells what stopProcess had to do.
type stopResult int

const (
	stopNotRunning stopResult = iota // nothing of ours was running
	stopTerminated                   // exited after SIGTERM
	stopKilled                       // needed SIGKILL
)

// stopProcess stops the process group the platform started as pid with
// startTime: SIGTERM, then SIGKILL when the group is still there after the
// grace period (or when ctx ends first). It signals only when the leader is
// verified to be the recorded process, or when the group still has members
// after such a verified leader exited (a live group keeps its id from
// being reused).
func stopProcess(ctx context.Context, pid int, startTime uint64, pol stopPolicy) (stopResult, error) {
	if !isOurs(pid, startTime) {
		return stopNotRunning, nil
	}
	if err := syscall.Kill(-pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return stopNotRunning, fmt.Errorf("%w: SIGTERM to process group %d: %w", ErrStop, pid, err)
	}
	gone := func() bool { return !isOurs(pid, startTime) && !groupHasMembers(pid) }

	timer := time.NewTimer(pol.grace)
	defer timer.Stop()
	tick := time.NewTicker(pol.interval)
	defer tick.Stop()
	var ctxErr error
wait:
	for {
		if gone() {
			return stopTerminated, nil
		}
		select {
		case <-tick.C:
		case <-timer.C:
			break wait
		case <-ctx.Done():
			ctxErr = ctx.Err()
			break wait
		}
	}

	// Escalate. The leader is ours (verified again) or has exited while
	// members of its group remain, which keeps the group id from reuse.
	if isOurs(pid, startTime) || groupHasMembers(pid) {
		if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			return stopKilled, fmt.Errorf("%w: SIGKILL to process group %d: %w", ErrStop, pid, err)
		}
	}
	deadline := time.Now().Add(pol.killWait)
	for !gone() {
		if time.Now().After(deadline) {
			return stopKilled, fmt.Errorf("%w: process group %d still alive %s after SIGKILL", ErrStop, pid, pol.killWait)
		}
		time.Sleep(pol.interval)
	}
	if ctxErr != nil {
		return stopKilled, fmt.Errorf("%w: stopping process group %d: %w", ErrStop, pid, ctxErr)
	}
	return stopKilled, nil
}
