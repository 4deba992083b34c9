package k8senv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"
)

// shared is the Env of the test package, started by the first ForTest.
var shared struct {
	sync.Mutex
	inMain  bool  // Shared runs the tests
	env     *Env  // started
	err     error // the start failed: every ForTest fails the same way
	started time.Duration
}

// Shared runs the package's tests (call it from TestMain) and then closes
// the Env that ForTest started, if any; it exits the process with the
// tests' code, or 1 when the Env does not close cleanly:
//
//	func TestMain(m *testing.M) { k8senv.Shared(m) }
//
// A package whose tests never call ForTest starts nothing.
func Shared(m *testing.M) { os.Exit(Run(m)) }

// Run is Shared for a TestMain that has more to do after the tests (it
// returns the code instead of exiting):
//
//	func TestMain(m *testing.M) {
//		setUp()
//		code := k8senv.Run(m)
//		tearDown()
//		os.Exit(code)
//	}
func Run(m *testing.M) int {
	shared.Lock()
	shared.inMain = true
	shared.Unlock()
	code := m.Run()
	shared.Lock()
	env := shared.env
	shared.env = nil
	shared.Unlock()
	if env != nil {
		if err := env.Close(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			if code == 0 {
				code = 1
			}
		}
	}
	return code
}

// ForTest returns the test package's shared Env, starting it on first use.
// Where the binaries are missing it skips t with a message saying to run
// `make k8s-testenv`, or fails t when the CI environment variable is set
// (to anything but "false" or "0"): CI builds them, so missing binaries
// there are a failure. A start that fails fails t, and every later ForTest
// of the package, with the same error. The package's TestMain must call
// Shared, which closes the Env.
func ForTest(t testing.TB) *Env {
	t.Helper()
	shared.Lock()
	defer shared.Unlock()
	if !shared.inMain {
		t.Fatal("k8senv: ForTest needs the package's TestMain to call k8senv.Shared(m) (or Run), which closes the shared Env")
	}
	if shared.env != nil {
		return shared.env
	}
	if shared.err == nil {
		if _, err := Binaries(); err != nil {
			if inCI() {
				t.Fatalf("%v (CI is set: the binaries must be built before the tests)", err)
			}
			t.Skip(err)
		}
		begin := time.Now()
		shared.env, shared.err = Start(context.Background(), Options{})
		shared.started = time.Since(begin)
		if shared.err == nil {
			t.Logf("k8senv: control plane %s started in %v (logs in %s)", shared.env.Server(), shared.started.Round(time.Millisecond), shared.env.Dir())
			return shared.env
		}
	}
	if errors.Is(shared.err, ErrNoBinaries) && !inCI() {
		t.Skip(shared.err)
	}
	t.Fatal(shared.err)
	return nil
}

// inCI reports whether the CI environment variable says the tests run in
// CI.
func inCI() bool {
	v := os.Getenv("CI")
	return v != "" && v != "false" && v != "0"
}
