package region

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/edgekit/edgekit/internal/cmdutil"
)

// proc is one process of the region: the multi-call binary run with a
// subcommand, its output appended to a log file, its readiness announced
// through a ready file (cmdutil.Ready). It runs in a process group of its
// own, so that a Ctrl-C at the terminal reaches up alone and up stops the
// processes in order; it gets SIGTERM if up dies (Pdeathsig).
type proc struct {
	name  string
	exe   string
	args  []string
	log   string
	ready string

	mu    sync.Mutex
	cmd   *exec.Cmd
	done  chan struct{} // closed when cmd exited
	err   error         // cmd's exit, once done
	state cmdutil.Ready // what the ready file said
}

// start starts the process (again, after an exit).
func (p *proc) start() error {
	if err := os.Remove(p.ready); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%s: %w", p.name, err)
	}
	logf, err := os.OpenFile(p.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("%s: %w", p.name, err)
	}
	defer logf.Close() // the child has its own descriptor
	fmt.Fprintf(logf, "--- %s edgekit %s\n", time.Now().Format(time.RFC3339), strings.Join(p.args, " "))
	cmd := exec.Command(p.exe, p.args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%s: %w", p.name, err)
	}
	done := make(chan struct{})
	p.mu.Lock()
	p.cmd, p.done, p.err, p.state = cmd, done, nil, cmdutil.Ready{}
	p.mu.Unlock()
	go func() {
		err := cmd.Wait()
		p.mu.Lock()
		p.err = err
		p.mu.Unlock()
		close(done)
	}()
	return nil
}

// pid is the running process's id.
func (p *proc) pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// exited is closed when the current process exits.
func (p *proc) exited() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.done
}

func (p *proc) exitErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// waitReady waits until the process wrote its ready file (with its own
// pid), and returns what the file says. It fails when the process exits
// first, naming its exit and the end of its log.
func (p *proc) waitReady(ctx context.Context) (cmdutil.Ready, error) {
	pid, done := p.pid(), p.exited()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if r, err := cmdutil.ReadReady(p.ready); err == nil && r.PID == pid {
			p.mu.Lock()
			p.state = r
			p.mu.Unlock()
			return r, nil
		}
		select {
		case <-done:
			return cmdutil.Ready{}, fmt.Errorf("%s exited before it was ready (%v); the end of %s:\n%s", p.name, p.exitErr(), p.log, tail(p.log, 12))
		case <-ctx.Done():
			return cmdutil.Ready{}, fmt.Errorf("%s not ready: %w; the end of %s:\n%s", p.name, context.Cause(ctx), p.log, tail(p.log, 12))
		case <-tick.C:
		}
	}
}

// stop sends SIGTERM and waits up to grace for the exit, then sends
// SIGKILL and waits for the exit. It reports whether the process had to
// be killed.
func (p *proc) stop(grace time.Duration) (killed bool) {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	if cmd == nil {
		return false
	}
	select {
	case <-done:
		return false
	default:
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
		return false
	case <-time.After(grace):
	}
	_ = cmd.Process.Kill()
	<-done
	return true
}

// tail returns the last n lines of a file, indented.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "    (" + err.Error() + ")"
	}
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "    " + string(bytes.Join(lines, []byte("\n    ")))
}
