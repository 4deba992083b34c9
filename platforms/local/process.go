package local

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// procInfo is what the platform reads from /proc/<pid>/stat.
type procInfo struct {
	state     byte   // field 3: R, S, D, Z, X...
	pgrp      int    // field 5
	startTime uint64 // field 22, clock ticks since boot
}

// errNoProcess reports that /proc/<pid> does not exist.
var errNoProcess = errors.New("no such process")

// procFile reads /proc/<pid>/<name>, mapping a vanished process to
// errNoProcess.
func procFile(pid int, name string) ([]byte, error) {
	if pid <= 0 {
		return nil, errNoProcess
	}
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), name))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
			return nil, errNoProcess
		}
		return nil, err
	}
	return b, nil
}

// readProcStat parses /proc/<pid>/stat.
func readProcStat(pid int) (procInfo, error) {
	b, err := procFile(pid, "stat")
	if err != nil {
		return procInfo{}, err
	}
	return parseProcStat(b)
}

// parseProcStat parses a stat line. The command name (field 2) is
// parenthesised and may hold spaces and parentheses, so fields are counted
// from the last ')'.
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

// alive reports whether pid is a live process started at startTime.
func alive(pid int, startTime uint64) bool {
	pi, err := readProcStat(pid)
	return err == nil && pi.running() && pi.startTime == startTime
}

// procExe is the executable of pid, as /proc/<pid>/exe names it (without
// the " (deleted)" the kernel appends once the file was replaced).
func procExe(pid int) (string, error) {
	if pid <= 0 {
		return "", errNoProcess
	}
	s, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "exe"))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
			return "", errNoProcess
		}
		return "", err
	}
	return strings.TrimSuffix(s, " (deleted)"), nil
}

// procEnv returns the value of variable name in the environment pid
// started with, and whether it is there.
func procEnv(pid int, name string) (string, bool, error) {
	b, err := procFile(pid, "environ")
	if err != nil {
		return "", false, err
	}
	v, ok := envValue(b, name)
	return v, ok, nil
}

// envValue finds name in a NUL-separated environment block.
func envValue(block []byte, name string) (string, bool) {
	prefix := []byte(name + "=")
	for kv := range bytes.SplitSeq(block, []byte{0}) {
		if bytes.HasPrefix(kv, prefix) {
			return string(kv[len(prefix):]), true
		}
	}
	return "", false
}

// bootID identifies the running kernel boot: process start times count
// from it, so a record written under another boot names no live process.
func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// groupMembers lists the live processes (not zombies) of process group
// pgid. It reads every /proc/<pid>/stat.
func groupMembers(pgid int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		pi, err := readProcStat(pid)
		if err == nil && pi.pgrp == pgid && pi.running() {
			out = append(out, pid)
		}
	}
	return out
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

// started identifies a process startProcess started.
type started struct {
	pid       int
	startTime uint64
	exe       string
}

// startProcess starts spec in a new process group with stdout and stderr
// appended to their log files. A goroutine reaps the process when it
// exits; the process outlives the platform (and this program) so that a
// restarted engine can adopt it. When it returns, the process has run
// exec (os/exec waits for that), so its executable and environment are
// the ones it was started with.
func startProcess(spec procSpec) (started, error) {
	open := func(path string) (*os.File, error) {
		return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	}
	stdout, err := open(spec.stdout)
	if err != nil {
		return started{}, fmt.Errorf("%w: opening its log: %w", ErrStart, err)
	}
	defer stdout.Close()
	stderr, err := open(spec.stderr)
	if err != nil {
		return started{}, fmt.Errorf("%w: opening its log: %w", ErrStart, err)
	}
	defer stderr.Close()

	cmd := exec.Command(spec.path, spec.args...)
	cmd.Dir = spec.dir
	cmd.Env = spec.env
	cmd.Stdout = stdout
	cmd.Stderr = stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return started{}, fmt.Errorf("%w: %w", ErrStart, err)
	}
	s := started{pid: cmd.Process.Pid}
	go func() { _ = cmd.Wait() }()

	// A process already gone keeps start time 0, which never matches: it
	// is treated as dead from here on.
	if pi, err := readProcStat(s.pid); err == nil {
		s.startTime = pi.startTime
	}
	s.exe, _ = procExe(s.pid)
	return s, nil
}
