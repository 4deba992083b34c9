package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/edgekit/edgekit/internal/testenv/logbuf"
)

// binaries are the programs the end-to-end tests run, built once.
type binaries struct {
	controller, crm, edgectl, webapp string
}

var (
	buildOnce sync.Once
	built     binaries
	buildErr  error
	buildDir  string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// build builds the controller, the crm and the web app (without the race
// detector: they are the system under test, not the test).
func build(t *testing.T) binaries {
	t.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "edgekit-crm-e2e-")
		if buildErr != nil {
			return
		}
		cmd := exec.Command("go", "build", "-o", buildDir+"/", "./cmd/controller", "./cmd/crm", "./cmd/edgectl", "./cmd/crm/internal/webapp")
		cmd.Dir = filepath.Join("..", "..")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			buildErr = errors.New(err.Error() + ": " + out.String())
			return
		}
		built = binaries{filepath.Join(buildDir, "controller"), filepath.Join(buildDir, "crm"), filepath.Join(buildDir, "edgectl"),
			filepath.Join(buildDir, "webapp")}
	})
	if buildErr != nil {
		t.Fatalf("build: %v", buildErr)
	}
	return built
}

// proc is a process a test started.
type proc struct {
	t    *testing.T
	name string
	cmd  *exec.Cmd
	done chan struct{}
	log  *logbuf.Buffer
}

// start runs a program; it is stopped (SIGTERM, then SIGKILL) in
// t.Cleanup, and its output is logged when the test failed.
func start(t *testing.T, name, path string, args ...string) *proc {
	t.Helper()
	p := &proc{t: t, name: name, cmd: exec.Command(path, args...), done: make(chan struct{}), log: &logbuf.Buffer{}}
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() {
		_ = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.stop(10 * time.Second)
		if t.Failed() {
			t.Logf("output of %s (pid %d):\n%s", name, p.cmd.Process.Pid, p.log.String())
		}
	})
	return p
}

// stop sends SIGTERM and waits up to grace for the exit, then kills.
func (p *proc) stop(grace time.Duration) {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		p.t.Errorf("%s (pid %d) did not stop within %v of SIGTERM: killing it", p.name, p.cmd.Process.Pid, grace)
		p.kill()
	}
}

// kill sends SIGKILL and waits for the exit.
func (p *proc) kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// exitCode is the exit code once the process ended.
func (p *proc) exitCode() int {
	<-p.done
	return p.cmd.ProcessState.ExitCode()
}

// appPids lists the processes the web app recorded in dir for instance
// inst ("developer.i1"), and forgets none: every start is a file.
func appPids(t *testing.T, dir, inst string) []int {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, e := range ents {
		i := strings.LastIndexByte(e.Name(), '.')
		if i < 0 || e.Name()[:i] != inst {
			continue
		}
		n, err := strconv.Atoi(e.Name()[i+1:])
		if err != nil {
			t.Fatalf("pid file %s", e.Name())
		}
		pids = append(pids, n)
	}
	return pids
}

// alive reports whether pid runs the web app (a reused pid is not).
func alive(pid int, webapp string) bool {
	exe, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe")
	return err == nil && exe == webapp
}

// killApps kills the web app processes recorded in dir that still run.
func killApps(dir, webapp string) {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		i := strings.LastIndexByte(e.Name(), '.')
		pid, err := strconv.Atoi(e.Name()[i+1:])
		if err == nil && alive(pid, webapp) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}
