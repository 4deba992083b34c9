package region

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/edgekit/edgekit/platforms/local"
)

// leftover is an application process the region's platforms started that
// still runs.
type leftover struct {
	pid, pgrp int
}

// findLeftovers lists the processes of this user that work in a directory
// under dir and carry the local platform's marker in their environment:
// the application processes the region's local platforms started (their
// instances' directories are under the state directory). Processes of
// other users are unreadable and skipped; this process is never listed.
func findLeftovers(dir string) []leftover {
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := os.Getpid()
	marker := []byte(local.MarkerEnv + "=")
	var out []leftover
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 1 || pid == self {
			continue
		}
		proc := "/proc/" + e.Name()
		cwd, err := os.Readlink(proc + "/cwd")
		if err != nil || (cwd != root && !strings.HasPrefix(cwd, root+"/")) {
			continue
		}
		env, err := os.ReadFile(proc + "/environ")
		if err != nil || !bytes.HasPrefix(env, marker) && !bytes.Contains(env, append([]byte{0}, marker...)) {
			continue
		}
		pgrp, ok := processGroup(proc)
		if !ok {
			continue
		}
		out = append(out, leftover{pid: pid, pgrp: pgrp})
	}
	return out
}

// processGroup reads a process's group from /proc/<pid>/stat.
func processGroup(proc string) (int, bool) {
	b, err := os.ReadFile(proc + "/stat")
	if err != nil {
		return 0, false
	}
	// pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 3 {
		return 0, false
	}
	pgrp, err := strconv.Atoi(f[2])
	return pgrp, err == nil
}

// stopLeftovers stops the leftovers of dir: SIGTERM to each one's process
// group when it leads it (as the local platform's processes do, so their
// children go too), else to the process; SIGKILL to what remains after
// grace. It returns how many it found.
func stopLeftovers(dir string, grace time.Duration) int {
	found := findLeftovers(dir)
	if len(found) == 0 {
		return 0
	}
	signal := func(ls []leftover, sig syscall.Signal) {
		for _, l := range ls {
			if l.pgrp == l.pid {
				_ = syscall.Kill(-l.pid, sig)
			} else {
				_ = syscall.Kill(l.pid, sig)
			}
		}
	}
	signal(found, syscall.SIGTERM)
	if !gone(dir, grace) {
		signal(findLeftovers(dir), syscall.SIGKILL)
		gone(dir, 5*time.Second)
	}
	return len(found)
}

// gone waits up to wait for the leftovers of dir to end.
func gone(dir string, wait time.Duration) bool {
	deadline := time.Now().Add(wait)
	for len(findLeftovers(dir)) > 0 {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

// busyPorts returns the addresses of addrs something still listens on,
// trying for up to wait (a port closes a moment after its process ends).
func busyPorts(addrs []string, wait time.Duration) []string {
	deadline := time.Now().Add(wait)
	for {
		var busy []string
		for _, a := range addrs {
			if a == "" {
				continue
			}
			l, err := net.Listen("tcp", a)
			if err != nil {
				busy = append(busy, a)
				continue
			}
			l.Close()
		}
		if len(busy) == 0 || time.Now().After(deadline) {
			return busy
		}
		time.Sleep(50 * time.Millisecond)
	}
}
