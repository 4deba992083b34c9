package k8senv_test

import (
	"bytes"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/edgekit/edgekit/internal/testenv/k8senv"
)

// processesWithArg returns the pids of processes whose command line
// contains arg (every component's flags name files of the Env's
// directory).
func processesWithArg(t *testing.T, arg string) []string {
	t.Helper()
	cmdlines, err := filepath.Glob("/proc/[0-9]*/cmdline")
	if err != nil || len(cmdlines) == 0 {
		t.Skip("no /proc to look for processes in")
	}
	var pids []string
	for _, f := range cmdlines {
		b, err := os.ReadFile(f)
		if err == nil && bytes.Contains(b, []byte(arg)) {
			pids = append(pids, filepath.Base(filepath.Dir(f)))
		}
	}
	return pids
}

// An Env of its own (not the shared one): Close stops every process it
// started, frees the API server's port and removes the directory.
func TestCloseStopsEveryProcessAndRemovesTheDirectory(t *testing.T) {
	if _, err := k8senv.Binaries(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	env, err := k8senv.Start(t.Context(), k8senv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close()
	dir := env.Dir()
	if pids := processesWithArg(t, dir); len(pids) < 4 {
		t.Fatalf("%d processes run with %s in their flags, want the 4 components", len(pids), dir)
	}
	u, err := url.Parse(env.Server())
	if err != nil {
		t.Fatal(err)
	}

	if err := env.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if pids := processesWithArg(t, dir); len(pids) != 0 {
		t.Errorf("processes %v still run after Close", pids)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s is still there after Close (stat: %v)", dir, err)
	}
	if c, err := net.DialTimeout("tcp", u.Host, 2*time.Second); err == nil {
		c.Close()
		t.Errorf("the API server's address %s still accepts connections after Close", u.Host)
	}
	if err := env.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}
