package ccrmtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/edgekit/edgekit/hosts/ccrm"
)

// Environment variables of a replica process started by StartReplica.
const (
	envReplica = "CCRMTEST_REPLICA"
	envArgs    = "CCRMTEST_ARGS"
	// EnvCPUProfileDir, when set in a test's environment, makes every
	// replica process it starts write a CPU profile into that directory
	// (replica-<pid>.pprof) when it stops gracefully: how the replicas'
	// share of a benchmark's CPU is measured.
	EnvCPUProfileDir = "CCRMTEST_CPUPROFILE_DIR"
)

// RunReplicaIfAsked runs ccrm.Main and exits when the process was started
// by StartReplica: a test package calls it first in its TestMain, so that
// its test binary doubles as the replica binary (with the remote fake
// platform linked in).
func RunReplicaIfAsked() {
	if os.Getenv(envReplica) != "1" {
		return
	}
	var args []string
	if err := json.Unmarshal([]byte(os.Getenv(envArgs)), &args); err != nil {
		fmt.Fprintln(os.Stderr, "ccrm replica: bad", envArgs, err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	stopProfile := startCPUProfile()
	err := ccrm.Main(ctx, args, os.Stderr)
	stop()
	stopProfile()
	if err != nil {
		fmt.Fprintln(os.Stderr, "ccrm replica:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// startCPUProfile starts a CPU profile when EnvCPUProfileDir asks for one
// and returns what stops it.
func startCPUProfile() func() {
	dir := os.Getenv(EnvCPUProfileDir)
	if dir == "" {
		return func() {}
	}
	f, err := os.Create(filepath.Join(dir, fmt.Sprintf("replica-%d.pprof", os.Getpid())))
	if err != nil {
		fmt.Fprintln(os.Stderr, "ccrm replica: cpu profile:", err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintln(os.Stderr, "ccrm replica: cpu profile:", err)
		f.Close()
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}

// Process is a replica process started by a test. Every method acts on
// the process by its pid; it is killed in t.Cleanup if still running.
type Process struct {
	t    testing.TB
	name string
	args []string
	env  []string
	log  string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
	runs int
}

// StartReplica starts the test binary as a replica running ccrm.Main with
// args, plus env (the token, for example).
func StartReplica(t testing.TB, name string, args []string, env ...string) *Process {
	t.Helper()
	p := &Process{t: t, name: name, args: args, env: env, log: filepath.Join(t.TempDir(), name+".log")}
	p.start()
	t.Cleanup(func() {
		if os.Getenv(EnvCPUProfileDir) != "" {
			p.Terminate(10 * time.Second) // so that it writes its profile
		}
		p.Kill()
		if t.Failed() {
			if b, err := os.ReadFile(p.log); err == nil {
				if len(b) > 6000 {
					b = b[len(b)-6000:]
				}
				t.Logf("log of replica %s (tail):\n%s", name, b)
			}
		}
	})
	return p
}

func (p *Process) start() {
	p.t.Helper()
	a, _ := json.Marshal(p.args)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), envReplica+"=1", envArgs+"="+string(a)), p.env...)
	f, err := os.OpenFile(p.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		p.t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		f.Close()
		p.t.Fatalf("start replica %s: %v", p.name, err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		f.Close()
		close(done)
	}()
	p.mu.Lock()
	p.cmd, p.done = cmd, done
	p.runs++
	p.mu.Unlock()
}

// Pid is the process id of the current run.
func (p *Process) Pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cmd.Process.Pid
}

func (p *Process) current() (*exec.Cmd, chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cmd, p.done
}

// Running reports whether the current run has not exited.
func (p *Process) Running() bool {
	_, done := p.current()
	select {
	case <-done:
		return false
	default:
		return true
	}
}

// Kill sends SIGKILL (after SIGCONT, in case it was stopped) and waits
// for the process to exit.
func (p *Process) Kill() {
	cmd, done := p.current()
	if !p.Running() {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGCONT)
	_ = cmd.Process.Kill()
	<-done
}

// Pause sends SIGSTOP; Resume sends SIGCONT.
func (p *Process) Pause()  { p.signal(syscall.SIGSTOP) }
func (p *Process) Resume() { p.signal(syscall.SIGCONT) }

func (p *Process) signal(s syscall.Signal) {
	cmd, _ := p.current()
	if p.Running() {
		_ = cmd.Process.Signal(s)
	}
}

// Terminate sends SIGTERM and waits up to timeout for a graceful exit; it
// reports whether the process exited in time (it is killed otherwise).
func (p *Process) Terminate(timeout time.Duration) bool {
	cmd, done := p.current()
	if !p.Running() {
		return true
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
		return cmd.ProcessState.Success()
	case <-time.After(timeout):
		p.Kill()
		return false
	}
}

// Restart starts the process again after it exited (or kills it first).
func (p *Process) Restart() {
	p.Kill()
	p.start()
}

// Log returns what the process wrote so far.
func (p *Process) Log() string {
	b, _ := os.ReadFile(p.log)
	return string(b)
}

// CPUTime returns the CPU time (user and system) the current run has used
// so far, read from /proc (Linux only).
func (p *Process) CPUTime() (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.Pid()))
	if err != nil {
		return 0, err
	}
	// The command name, in parentheses, may hold spaces: fields are
	// counted after its closing parenthesis.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command name", p.Pid())
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", p.Pid(), len(f))
	}
	// utime and stime are fields 14 and 15 of stat, in USER_HZ (100/s).
	var ticks int64
	for _, s := range f[11:13] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/%d/stat: %w", p.Pid(), err)
		}
		ticks += n
	}
	return time.Duration(ticks) * 10 * time.Millisecond, nil
}
