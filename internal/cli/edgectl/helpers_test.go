package edgectl_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/edgekit/edgekit/internal/cli/clitest"
	"github.com/edgekit/edgekit/internal/cli/edgectl"
	"github.com/edgekit/edgekit/internal/cli/fakecontroller"
)

// result is what one edgectl run printed and returned.
type result struct {
	out, err string
	code     int
}

// env is the environment of edgectl runs: a configuration file of its own
// and whatever the test sets.
type env map[string]string

func newEnv(t *testing.T) env {
	return env{"EDGECTL_CONFIG": filepath.Join(t.TempDir(), "edgectl.yaml")}
}

func (e env) getenv(k string) string { return e[k] }

// syncBuffer is written by edgectl while a test reads it.
type syncBuffer = clitest.Buffer

// runCtx runs edgectl in process with args and returns its output.
func runCtx(ctx context.Context, t *testing.T, e env, term *edgectl.Terminal, stdin string, args ...string) result {
	t.Helper()
	var out, errOut syncBuffer
	code := edgectl.Execute(ctx, edgectl.Options{
		In:       strings.NewReader(stdin),
		Out:      &out,
		ErrOut:   &errOut,
		Getenv:   e.getenv,
		Terminal: term,
	}, args)
	return result{out: out.String(), err: errOut.String(), code: code}
}

// run runs edgectl against srv over plaintext.
func run(t *testing.T, srv *fakecontroller.Server, args ...string) result {
	t.Helper()
	return runCtx(context.Background(), t, newEnv(t), nil, "", append([]string{"--addr", srv.Addr, "--insecure"}, args...)...)
}

// ok fails the test unless the run succeeded.
func (r result) ok(t *testing.T) result {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("exit code %d\nstdout:\n%s\nstderr:\n%s", r.code, r.out, r.err)
	}
	return r
}

// fails fails the test unless the run exited with code and stderr holds
// every one of want.
func (r result) fails(t *testing.T, code int, want ...string) {
	t.Helper()
	if r.code != code {
		t.Errorf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, code, r.out, r.err)
	}
	for _, w := range want {
		if !strings.Contains(r.err, w) {
			t.Errorf("stderr lacks %q:\n%s", w, r.err)
		}
	}
}
