package local

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// MarkerEnv is the environment variable every process the platform starts
// carries: "<state directory id>:<launch id>:<cloudlet>/<cluster>/<inst>".
// The state directory id is derived from the directory's random key (see
// the package doc), the launch id is random per start, the path is the
// instance's directory names. Children inherit it, so the platform finds
// an instance's processes on the host without its state file. An App may
// not set it.
const MarkerEnv = "EDGEKIT_LOCAL_INSTANCE"

// marker is the value of MarkerEnv for one launch of an instance.
func (p *Platform) marker(launch, mark string) string {
	return p.id + ":" + launch + ":" + mark
}

// found is a process carrying a marker of this state directory.
type found struct {
	pid, pgrp int
	startTime uint64
	launch    string
	mark      string // "<cloudlet>/<cluster>/<inst>"
}

// leader reports whether the process leads its own process group (as every
// process the platform starts does).
func (f found) leader() bool { return f.pgrp == f.pid }

// under reports whether a mark is mark or below it.
func under(m, prefix string) bool {
	return m == prefix || strings.HasPrefix(m, prefix+"/")
}

// scan lists the live processes on this host whose marker names this
// state directory and an object at or below prefix. It reads the
// environment of every process of this user; processes of other users are
// skipped (their environment is unreadable, and this platform could not
// signal them anyway). It fails only when /proc cannot be listed: then the
// platform cannot tell what runs, and callers must not act as if nothing
// did.
func (p *Platform) scan(prefix string) ([]found, error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("%w: listing processes: %w", ErrStop, err)
	}
	needle := []byte(MarkerEnv + "=" + p.id + ":")
	self := os.Getpid()
	var out []found
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 1 || pid == self {
			continue
		}
		env, err := procFile(pid, "environ")
		if err != nil || !bytes.Contains(env, needle) {
			continue
		}
		val, ok := envValue(env, MarkerEnv)
		if !ok || !strings.HasPrefix(val, p.id+":") {
			continue
		}
		launch, mark, ok := strings.Cut(strings.TrimPrefix(val, p.id+":"), ":")
		if !ok || !under(mark, prefix) {
			continue
		}
		pi, err := readProcStat(pid)
		if err != nil || !pi.running() {
			continue
		}
		out = append(out, found{pid: pid, pgrp: pi.pgrp, startTime: pi.startTime, launch: launch, mark: mark})
	}
	return out, nil
}

// verify checks, just before a signal, that f is still the process the
// scan found: alive with the same start time and the same marker.
func (p *Platform) verify(f found) bool {
	pi, err := readProcStat(f.pid)
	if err != nil || !pi.running() || pi.startTime != f.startTime || (f.leader() && pi.pgrp != f.pid) {
		return false
	}
	v, ok, err := procEnv(f.pid, MarkerEnv)
	return err == nil && ok && v == p.marker(f.launch, f.mark)
}

// recordedProc tells what a record's process is on the host now.
type recordedProc int

const (
	procGone    recordedProc = iota // not running (or its pid now belongs to a later process)
	procOurs                        // running, and provably the one the record describes
	procForeign                     // running with the recorded start time, yet not provably ours
)

// checkRecorded reports whether the process rec names is alive and ours:
// pid above 1, same boot, same start time, leading its own group, and the
// marker of rec's launch in its environment. The launch id in the marker
// is random per start and the start time is the kernel's, so together
// they name one process of one launch; the executable is not checked: a
// process that execs another program (a wrapper script's `exec server`)
// keeps its pid, start time, group and environment, and stays ours. A
// live process with the recorded start time that fails the other checks
// is procForeign: the record was not written by this platform for it (or
// the process replaced its environment), and it must be neither adopted
// nor signalled.
func (p *Platform) checkRecorded(rec *appRecord, mark string) (recordedProc, string) {
	if rec.Pid <= 1 || rec.StartTime == 0 {
		return procGone, ""
	}
	if rec.BootID != "" && rec.BootID != bootID() {
		return procGone, ""
	}
	pi, err := readProcStat(rec.Pid)
	if err != nil || !pi.running() || pi.startTime != rec.StartTime {
		return procGone, ""
	}
	if pi.pgrp != rec.Pid {
		return procForeign, "it does not lead its own process group"
	}
	v, ok, err := procEnv(rec.Pid, MarkerEnv)
	switch {
	case err != nil:
		return procForeign, "its environment is unreadable: " + err.Error()
	case !ok:
		return procForeign, "it carries no " + MarkerEnv + " marker"
	case v != p.marker(rec.Launch, mark):
		return procForeign, "its marker is not the one of this state directory and launch"
	}
	return procOurs, ""
}

// foreignError is the error of an operation that found a live process a
// record names but could not prove it is ours.
func foreignError(what string, pid int, why string) error {
	return fmt.Errorf("%w: %s: process %d has the recorded start time but %s; it was not signalled: stop it by hand if it is the application, then remove its state file", ErrNotOwned, what, pid, why)
}

// errRefused is returned by sendSignal for a target it must never signal.
var errRefused = errors.New("refusing to signal")
