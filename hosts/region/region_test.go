package region

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/platforms/local"
)

func TestPickPorts(t *testing.T) {
	t.Parallel()
	p, err := pickPorts(55000, false)
	if err != nil {
		t.Fatal(err)
	}
	if p.controllerAPI != "127.0.0.1:55001" || p.controllerHTTP != "127.0.0.1:55002" || p.nodes[Consumer].api != "127.0.0.1:55032" {
		t.Errorf("ports of base 55000: %+v", p)
	}
	if _, ok := p.nodes[KubernetesProvider]; ok || len(p.uses()) != 11 {
		t.Errorf("without a Kubernetes cluster: the Kubernetes provider node has ports, or %d ports are used (want 11): %+v", len(p.uses()), p)
	}
	if k, err := pickPorts(55000, true); err != nil || k.nodes[KubernetesProvider].rear != "127.0.0.1:55041" ||
		k.nodes[KubernetesProvider].metrics != "127.0.0.1:55043" || len(k.uses()) != 14 {
		t.Errorf("ports of base 55000 with a Kubernetes cluster: %+v, %v", k, err)
	}
	free, err := pickPorts(0, true)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, a := range free.all() {
		if seen[a] || !strings.HasPrefix(a, "127.0.0.1:1") {
			t.Errorf("base 0 gave %s twice or off loopback: %v", a, free.all())
		}
		seen[a] = true
	}
	for _, bad := range []int{-1, 65535} {
		if _, err := pickPorts(bad, false); err == nil {
			t.Errorf("base %d accepted", bad)
		}
	}
}

func TestStateDirIsChecked(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := checkStateDir(filepath.Join(dir, "new")); err != nil {
		t.Errorf("a new directory: %v", err)
	}
	if err := checkStateDir(dir); err != nil {
		t.Errorf("an empty directory: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "precious"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := checkStateDir(dir); err == nil || !strings.Contains(err.Error(), "not a region's state directory") {
		t.Errorf("a directory of other files: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "up.lock"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := checkStateDir(dir); err != nil {
		t.Errorf("a state directory: %v", err)
	}
}

func TestLock(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "up.lock")
	if lockHeld(path) {
		t.Fatal("a missing lock is held")
	}
	unlock, err := lockState(path)
	if err != nil {
		t.Fatal(err)
	}
	if !lockHeld(path) {
		t.Error("the lock is not seen as held")
	}
	if _, err := lockState(path); !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "pid") {
		t.Errorf("a second lock: %v", err)
	}
	unlock()
	if lockHeld(path) {
		t.Error("the lock is held after unlock")
	}
	if _, err := ReadInfo(filepath.Dir(path)); !errors.Is(err, ErrNotRunning) {
		t.Errorf("ReadInfo without a region: %v", err)
	}
}

func TestInstall(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	if err := os.WriteFile(src, []byte("one"), 0o700); err != nil {
		t.Fatal(err)
	}
	for i, want := range []bool{true, false} {
		changed, err := install(src, dst)
		if err != nil || changed != want {
			t.Fatalf("install %d: changed %v, %v", i, changed, err)
		}
	}
	if fi, err := os.Stat(dst); err != nil || fi.Mode().Perm() != 0o755 {
		t.Fatalf("installed copy: %v %v", fi.Mode(), err)
	}
	if err := os.WriteFile(src, []byte("two"), 0o700); err != nil {
		t.Fatal(err)
	}
	if changed, err := install(src, dst); err != nil || !changed {
		t.Fatalf("a changed program: %v %v", changed, err)
	}
	if b, _ := os.ReadFile(dst); string(b) != "two" {
		t.Errorf("the copy holds %q", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("temporary files left: %v", ents)
	}
}

func TestPoweredOffKeys(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "powered-off.json")
	if keys := readKeys(path); keys != nil {
		t.Errorf("no file: %v", keys)
	}
	keys := []*edgeproto.AppInstKey{{Organization: "a", Name: "x"}, {Organization: "b", Name: "y"}}
	if err := writeKeys(path, keys); err != nil {
		t.Fatal(err)
	}
	got := readKeys(path)
	if len(got) != 2 || got[1].GetOrganization() != "b" || got[1].GetName() != "y" {
		t.Errorf("read back %v", got)
	}
}

// An application process of the state directory (working under it, with
// the local platform's marker) is found and stopped with its process
// group; a process without the marker is not touched.
func TestLeftovers(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	work := filepath.Join(dir, "cloudlets", "x", "work")
	if err := os.MkdirAll(work, 0o700); err != nil {
		t.Fatal(err)
	}
	start := func(marker bool) *exec.Cmd {
		cmd := exec.Command("sleep", "60")
		cmd.Dir = work
		cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
		if marker {
			cmd.Env = append(cmd.Env, local.MarkerEnv+"=test:launch:x")
		}
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		t.Cleanup(func() {
			_ = cmd.Process.Kill()
			<-done
		})
		return cmd
	}
	app, other := start(true), start(false)
	found := findLeftovers(dir)
	if len(found) != 1 || found[0].pid != app.Process.Pid || found[0].pgrp != app.Process.Pid {
		t.Fatalf("leftovers %+v, want the marked process %d alone", found, app.Process.Pid)
	}
	if n := stopLeftovers(dir, 5*time.Second); n != 1 {
		t.Fatalf("stopped %d", n)
	}
	if err := syscall.Kill(other.Process.Pid, 0); err != nil {
		t.Errorf("the unmarked process was signalled: %v", err)
	}
	if found := findLeftovers(dir); len(found) != 0 {
		t.Errorf("still running: %+v", found)
	}
}

func TestBusyPorts(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	freeAddr, err := freeAddr(nil)
	if err != nil {
		t.Fatal(err)
	}
	busy := busyPorts([]string{l.Addr().String(), freeAddr, ""}, 100*time.Millisecond)
	if len(busy) != 1 || busy[0] != l.Addr().String() {
		t.Errorf("busy %v, want %s", busy, l.Addr())
	}
}

// all lists every address.
func (p ports) all() []string {
	out := []string{p.controllerAPI, p.controllerHTTP, p.crmMetrics, p.ccrmMetrics[0], p.ccrmMetrics[1]}
	for _, n := range p.nodes {
		out = append(out, n.rear, n.api, n.metrics)
	}
	return out
}

func TestATourStepThatOverrunsFailsNamingIt(t *testing.T) {
	t.Parallel()
	err := bounded(t.Context(), 20*time.Millisecond, "stuck step", func(ctx context.Context) error {
		<-ctx.Done()
		return ctx.Err()
	})
	if err == nil || !strings.Contains(err.Error(), `tour step "stuck step" did not finish within 20ms`) {
		t.Fatalf("overrun: %v", err)
	}
	if err := bounded(t.Context(), time.Minute, "quick step", func(context.Context) error { return nil }); err != nil {
		t.Fatalf("quick step: %v", err)
	}
}

// A port of the region that another program holds stops Up before it starts
// anything, with one line naming the port, what wanted it and --base-port.
func TestUpRefusesATakenPortBeforeStartingAnything(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	exe, err := exec.LookPath("true")
	if err != nil {
		t.Skip("no true program:", err)
	}
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	// The controller's API listens on base+1.
	err = Up(ctx, Options{StateDir: state, Executable: exe, BasePort: port - 1, EdgectlConfig: filepath.Join(dir, "edgectl.yaml"),
		ReadyTimeout: 20 * time.Second, StopTimeout: 5 * time.Second})
	want := fmt.Sprintf("port %d (the controller's API)", port)
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "--base-port") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("Up with port %d taken: %v\nwant one line naming %q and --base-port", port, err, want)
	}
	if logs, _ := os.ReadDir(filepath.Join(state, "logs")); len(logs) != 0 {
		t.Errorf("processes were started: logs %v", logs)
	}
}
