package k8senv_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edgekit/edgekit/internal/testenv/k8senv"
)

func TestBinariesNamesTheMissingFileAndTheBuildCommand(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(k8senv.DirEnv, dir)
	got, err := k8senv.Binaries()
	if got != dir {
		t.Errorf("Binaries() dir = %q, want %q (from %s)", got, dir, k8senv.DirEnv)
	}
	if !errors.Is(err, k8senv.ErrNoBinaries) {
		t.Fatalf("Binaries() err = %v, want ErrNoBinaries", err)
	}
	for _, want := range []string{filepath.Join(dir, "kube-apiserver"), "make k8s-testenv"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Binaries() err = %q, want it to name %q", err, want)
		}
	}
}

// A component that fails at start fails Start with the end of its log, and
// leaves nothing running.
func TestStartFailureQuotesTheComponentsLog(t *testing.T) {
	dir := t.TempDir()
	script := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	script("kube-apiserver", `echo "starting with $# flags"; echo "E1204 invalid value for --etcd-servers" >&2; exit 3`)
	for _, n := range []string{"kube-controller-manager", "kube-scheduler", "kwok"} {
		script(n, "exit 1")
	}
	if err := os.WriteFile(filepath.Join(dir, "kwok-stages.yaml"), []byte("---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := k8senv.Start(t.Context(), k8senv.Options{BinDir: dir, StartTimeout: time.Minute})
	if err == nil {
		t.Fatal("Start with an API server that exits at once succeeded")
	}
	for _, want := range []string{"kube-apiserver exited", "exit status 3", "E1204 invalid value for --etcd-servers", "starting with"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Start error does not contain %q:\n%v", want, err)
		}
	}
}
