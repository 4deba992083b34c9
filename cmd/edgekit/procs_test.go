package main

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/edgekit/edgekit/internal/testenv/k8senv"
)

// The programs the tests run, built once without the race detector (they
// are the system under test).
var (
	buildDir           string
	edgekitBin, ctlBin string
)

func TestMain(m *testing.M) {
	code := func() int {
		dir, err := os.MkdirTemp("", "edgekit-e2e-")
		if err != nil {
			panic(err)
		}
		defer os.RemoveAll(dir)
		buildDir = dir
		cmd := exec.Command("go", "build", "-o", dir+string(filepath.Separator), ".", "../edgectl")
		if out, err := cmd.CombinedOutput(); err != nil {
			panic("go build: " + err.Error() + "\n" + string(out))
		}
		edgekitBin, ctlBin = filepath.Join(dir, "edgekit"), filepath.Join(dir, "edgectl")
		return k8senv.Run(m) // the Kubernetes tests' control plane, closed after the tests
	}()
	os.Exit(code)
}

// sandbox is a home for the programs a test runs: HOME, the XDG
// directories and TMPDIR point into it, so that what they write outside
// the region's state directory can be listed.
type sandbox struct {
	t     testing.TB
	dir   string
	state string
	env   []string
}

func newSandbox(t testing.TB) *sandbox {
	dir := t.TempDir()
	s := &sandbox{t: t, dir: dir, state: filepath.Join(dir, "state")}
	for _, d := range []string{"home", "tmp"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	home := filepath.Join(dir, "home")
	for _, kv := range os.Environ() {
		switch strings.SplitN(kv, "=", 2)[0] {
		case "HOME", "TMPDIR", "EDGECTL_CONFIG", "EDGECTL_TOKEN", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME":
			continue
		}
		s.env = append(s.env, kv)
	}
	s.env = append(s.env, "HOME="+home, "TMPDIR="+filepath.Join(dir, "tmp"), "XDG_CONFIG_HOME="+filepath.Join(home, ".config"))
	t.Cleanup(s.killLeftovers)
	return s
}

// killLeftovers kills, by pid, any process still working under the
// sandbox 30s after the test's end (there is none after a clean stop; up's
// processes get SIGTERM when up is killed, and end on their own, which on
// a heavily loaded machine has taken over 10s).
func (s *sandbox) killLeftovers() {
	deadline := time.Now().Add(30 * time.Second)
	for len(s.processes()) > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	for _, pid := range s.processes() {
		s.t.Errorf("process %d still runs under %s 30s after the test: killing it", pid, s.dir)
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// processes lists the processes whose working directory or executable is
// under the sandbox.
func (s *sandbox) processes() []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		for _, link := range []string{"cwd", "exe"} {
			if p, err := os.Readlink("/proc/" + e.Name() + "/" + link); err == nil && strings.HasPrefix(p, s.dir+"/") {
				out = append(out, pid)
				break
			}
		}
	}
	return out
}

// filesOutsideState lists the files under the sandbox but outside the
// state directory.
func (s *sandbox) filesOutsideState() []string {
	var out []string
	_ = filepath.WalkDir(s.dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if path == s.state {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(s.dir, path)
			out = append(out, rel)
		}
		return nil
	})
	return out
}

// run runs a program to its end (bounded) and returns its output; a
// failure fails the test.
func (s *sandbox) run(timeout time.Duration, bin string, args ...string) string {
	s.t.Helper()
	out, err := s.try(timeout, bin, args...)
	if err != nil {
		s.t.Fatalf("%s %s: %v\n%s", filepath.Base(bin), strings.Join(args, " "), err, out)
	}
	return out
}

func (s *sandbox) try(timeout time.Duration, bin string, args ...string) (string, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env, cmd.Dir = s.env, s.dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return "", err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return out.String(), err
	case <-time.After(timeout):
		_ = cmd.Process.Kill()
		<-done
		return out.String(), errors.New("killed after " + timeout.String())
	}
}

// upProc is a running "edgekit up".
type upProc struct {
	t     testing.TB
	cmd   *exec.Cmd
	done  chan struct{}
	mu    sync.Mutex
	out   bytes.Buffer
	lines chan string
}

// startUp starts "edgekit up" with args; cleanup kills it by pid if it
// still runs.
func (s *sandbox) startUp(args ...string) *upProc {
	s.t.Helper()
	u := &upProc{t: s.t, cmd: exec.Command(edgekitBin, append([]string{"up", "--state-dir", s.state, "--base-port", "0"}, args...)...),
		done: make(chan struct{}), lines: make(chan string, 1000)}
	u.cmd.Env, u.cmd.Dir = s.env, s.dir
	stdout, err := u.cmd.StdoutPipe()
	if err != nil {
		s.t.Fatal(err)
	}
	u.cmd.Stderr = &lockedWriter{u: u}
	if err := u.cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			u.write(sc.Text() + "\n")
			select {
			case u.lines <- sc.Text():
			default:
			}
		}
		_ = u.cmd.Wait()
		close(u.done)
	}()
	s.t.Cleanup(func() {
		select {
		case <-u.done:
		default:
			s.t.Errorf("edgekit up (pid %d) still runs at the end of the test: killing it", u.cmd.Process.Pid)
			_ = u.cmd.Process.Kill()
			<-u.done
		}
		if s.t.Failed() {
			s.t.Logf("output of edgekit up (pid %d):\n%s", u.cmd.Process.Pid, u.output())
		}
	})
	return u
}

type lockedWriter struct{ u *upProc }

func (w *lockedWriter) Write(p []byte) (int, error) { w.u.write(string(p)); return len(p), nil }

func (u *upProc) write(s string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.out.WriteString(s)
}

func (u *upProc) output() string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.out.String()
}

// waitLine waits for an output line containing want.
func (u *upProc) waitLine(want string, timeout time.Duration) string {
	u.t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case l := <-u.lines:
			if strings.Contains(l, want) {
				return l
			}
		case <-u.done:
			u.t.Fatalf("edgekit up exited (%v) before printing %q", u.cmd.ProcessState, want)
		case <-deadline:
			u.t.Fatalf("edgekit up did not print %q within %v", want, timeout)
		}
	}
}

// interrupt sends SIGINT (a Ctrl-C) and waits for the exit; it returns
// how long the stop took.
func (u *upProc) interrupt(timeout time.Duration) time.Duration {
	u.t.Helper()
	start := time.Now()
	_ = u.cmd.Process.Signal(os.Interrupt)
	select {
	case <-u.done:
	case <-time.After(timeout):
		u.t.Fatalf("edgekit up did not stop within %v of SIGINT", timeout)
	}
	if code := u.cmd.ProcessState.ExitCode(); code != 0 {
		u.t.Fatalf("edgekit up exited with code %d", code)
	}
	return time.Since(start)
}

// gone reports whether pid no longer runs.
func gone(pid int) bool {
	err := syscall.Kill(pid, 0)
	return errors.Is(err, syscall.ESRCH)
}

// free reports whether nothing listens on addr.
func free(addr string) bool {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return false
	}
	l.Close()
	return true
}

var _ io.Writer = (*lockedWriter)(nil)
