package k8senv

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// KubernetesVersion is the version of the control plane's binaries (the
// k8s.io/kubernetes version build/go.mod requires).
const KubernetesVersion = "v1.34.2"

// DirEnv names the environment variable that overrides where the binaries
// are (and where `make k8s-testenv` builds them).
const DirEnv = "EDGEKIT_K8S_TESTENV"

// Files the binaries directory holds.
const (
	apiserverBin  = "kube-apiserver"
	controllerBin = "kube-controller-manager"
	schedulerBin  = "kube-scheduler"
	kwokBin       = "kwok"
	kwokStages    = "kwok-stages.yaml"
)

// ErrNoBinaries is wrapped by the error of Binaries when a file is missing.
var ErrNoBinaries = errors.New("k8senv: the control plane's binaries are not built")

// DefaultDir is where `make k8s-testenv` builds the binaries unless DirEnv
// says otherwise: edgekit/k8s-testenv/VERSION under $XDG_CACHE_HOME, or
// under $HOME/.cache when that is unset (the Makefile computes the same).
func DefaultDir() (string, error) {
	if d := os.Getenv(DirEnv); d != "" {
		return d, nil
	}
	base := os.Getenv("XDG_CACHE_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("k8senv: no cache directory (set %s): %w", DirEnv, err)
		}
		base = filepath.Join(home, ".cache")
	}
	return filepath.Join(base, "edgekit", "k8s-testenv", KubernetesVersion), nil
}

// Binaries returns the directory that holds the control plane's binaries,
// or an error wrapping ErrNoBinaries that names the first missing file and
// says to run `make k8s-testenv`.
func Binaries() (dir string, err error) {
	dir, err = DefaultDir()
	if err != nil {
		return "", err
	}
	return dir, checkBinaries(dir)
}

func checkBinaries(dir string) error {
	for _, f := range []string{apiserverBin, controllerBin, schedulerBin, kwokBin, kwokStages} {
		p := filepath.Join(dir, f)
		st, err := os.Stat(p)
		switch {
		case err != nil:
			return fmt.Errorf("%w: %s is missing: run `make k8s-testenv` (it builds them once, into %s; %s overrides)", ErrNoBinaries, p, dir, DirEnv)
		case f != kwokStages && st.Mode()&0o111 == 0:
			return fmt.Errorf("%w: %s is not executable: run `make k8s-testenv`", ErrNoBinaries, p)
		}
	}
	return nil
}
