package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestDemoRunsTheWholeLifecycle builds the demo and runs it as a user would:
// it must exit 0, call its application over HTTP before and after the
// update, and delete everything it created.
func TestDemoRunsTheWholeLifecycle(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "edgekit-demo")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	state := filepath.Join(dir, "state")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "-state-dir", state).CombinedOutput()
	if err != nil {
		t.Fatalf("demo failed: %v\n%s", err, out)
	}
	text := string(out)
	for _, want := range []string{
		`GET / -> "hello from pid`,
		`GET / -> "bonjour from pid`,
		"DELETE_DONE",
		"NOT_PRESENT",
		"done: everything created was deleted again",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "never-printed") {
		t.Errorf("a debug_redact value was printed:\n%s", text)
	}
	// The app's processes are gone: no pid printed runs the demo's binary
	// any more (a pid may be reused by an unrelated process meanwhile, and
	// an exited child may linger as a zombie until it is reaped).
	for _, m := range regexp.MustCompile(`pids \[(\d+)\]`).FindAllStringSubmatch(text, -1) {
		if runsBinary(m[1], bin) {
			t.Errorf("app process %s still runs after the demo", m[1])
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(state, "cloudlets")); len(entries) != 0 {
		t.Errorf("state left behind: %v", entries)
	}
}

// runsBinary reports whether pid is a live (not zombie) process whose
// command line starts with bin.
func runsBinary(pid, bin string) bool {
	stat, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return false
	}
	if i := strings.LastIndexByte(string(stat), ')'); i >= 0 && len(stat) > i+2 && stat[i+2] == 'Z' {
		return false
	}
	cmdline, err := os.ReadFile("/proc/" + pid + "/cmdline")
	return err == nil && strings.HasPrefix(string(cmdline), bin)
}
