package k8senv

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// stopTimeout bounds how long a process may take to exit after SIGTERM
// before it gets SIGKILL.
const stopTimeout = 10 * time.Second

// tailBytes is how much of a process's log an error quotes.
const tailBytes = 4 << 10

// process is one binary run by an Env, in a process group of its own, with
// its output in a log file.
type process struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	done    chan struct{} // closed when the process has exited
	waitErr error         // set before done is closed
}

// startProcess runs bin with args; its stdout and stderr go to
// dir/name.log.
func startProcess(dir, name, bin string, args []string) (*process, error) {
	logPath := filepath.Join(dir, name+".log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("k8senv: %s: log file: %w", name, err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("k8senv: start %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, logPath: logPath, done: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		_ = logFile.Close()
		close(p.done)
	}()
	return p, nil
}

// exited reports whether the process has exited.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// exitError describes how the process ended, with the tail of its log.
func (p *process) exitError() error {
	return fmt.Errorf("k8senv: %s exited (%v); the end of its log:\n%s", p.name, p.waitErr, p.tail())
}

// stop sends SIGTERM to the process's group (its pid is the group's id),
// then SIGKILL when it has not exited within stopTimeout, and waits for it.
func (p *process) stop() error {
	if p.exited() {
		return nil
	}
	pid := p.cmd.Process.Pid
	_ = syscall.Kill(-pid, syscall.SIGTERM)
	t := time.NewTimer(stopTimeout)
	defer t.Stop()
	select {
	case <-p.done:
		return nil
	case <-t.C:
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	t.Reset(stopTimeout)
	select {
	case <-p.done:
		return nil
	case <-t.C:
		return fmt.Errorf("k8senv: %s (pid %d) did not exit after SIGKILL", p.name, pid)
	}
}

// tail returns the last tailBytes of the process's log.
func (p *process) tail() string {
	f, err := os.Open(p.logPath)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > tailBytes {
		_, _ = f.Seek(st.Size()-tailBytes, io.SeekStart)
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return fmt.Sprintf("(log unreadable: %v)", err)
	}
	if i := bytes.IndexByte(b, '\n'); i >= 0 && len(b) == tailBytes {
		b = b[i+1:] // from the first whole line
	}
	return strings.TrimRight(string(b), "\n")
}

// addrInUse reports whether the process exited because its port was taken
// between picking and binding it.
func (p *process) addrInUse() bool {
	return p.exited() && strings.Contains(p.tail(), "address already in use")
}
