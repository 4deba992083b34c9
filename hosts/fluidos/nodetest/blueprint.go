package nodetest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// BuildKV builds cmd/edgekit-kv into dir and returns the binary's path:
// the image "kv" that blueprints and slices run on the local platform
// (for a TestMain, once per test binary).
func BuildKV(dir string) (string, error) {
	path := filepath.Join(dir, "edgekit-kv")
	out, err := exec.Command("go", "build", "-o", path, "github.com/edgekit/edgekit/cmd/edgekit-kv").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("building edgekit-kv: %w\n%s", err, out)
	}
	return path, nil
}

// RunWithKV is the body of a TestMain whose tests run the image "kv": it
// builds it into a temporary directory, sets *path, runs the tests and
// removes the directory, and returns the exit code.
func RunWithKV(m *testing.M, path *string) int {
	dir, err := os.MkdirTemp("", "edgekit-kv-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if *path, err = BuildKV(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}
