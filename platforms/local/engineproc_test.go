package local

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/internal/testenv/logbuf"
)

// An engine process is this test binary started again with
// engineProcessEnv set: TestMain then runs runEngineProcess instead of the
// tests. It runs the real engine over the local platform on a state
// directory, drives one scenario to its end and exits 0 when every
// operation succeeded. Tests kill it by pid at any instant, or at a named
// point of the platform (it then prints "paused <point>" and blocks).
const (
	engineProcessEnv = "LOCAL_TEST_ENGINE_PROCESS" // the scenario: "create" or "delete"
	engineRootEnv    = "LOCAL_TEST_ROOT"
	enginePortsEnv   = "LOCAL_TEST_PORTS" // "first-last"
	engineAppEnv     = "LOCAL_TEST_APP"   // the testapp binary
	engineInstsEnv   = "LOCAL_TEST_INSTANCES"
	enginePauseEnv   = "LOCAL_TEST_PAUSE_AT" // a hook point, optional
)

// Exit codes of an engine process.
const (
	engineOK       = 0
	engineFailed   = 1 // an operation failed
	engineNotBuilt = 3 // the platform could not be opened
)

// scenario is what the engine processes of one test work on.
type scenario struct {
	root      string
	ports     portRange
	instances int
}

func (sc scenario) cloudlet() *edgeproto.Cloudlet {
	return &edgeproto.Cloudlet{Key: &edgeproto.CloudletKey{Organization: "operator", Name: "host"}, PlatformType: PlatformType}
}

func (sc scenario) cluster() *edgeproto.ClusterInst {
	return &edgeproto.ClusterInst{Key: &edgeproto.ClusterKey{Organization: "dev", Name: "c1"}, CloudletKey: sc.cloudlet().Key}
}

// inst is the i-th instance of the scenario: of newApp for even i, of
// execApp (a shell that execs the server) for odd i, so that every
// scenario of two instances or more covers both.
func (sc scenario) inst(i int) *edgeproto.AppInst {
	app := newApp().Key
	if i%2 == 1 {
		app = execApp("").Key
	}
	return &edgeproto.AppInst{
		Key:         &edgeproto.AppInstKey{Organization: "dev", Name: "a" + strconv.Itoa(i)},
		AppKey:      app,
		ClusterKey:  sc.cluster().Key,
		CloudletKey: sc.cloudlet().Key,
	}
}

// runEngineProcess is the main of an engine process.
func runEngineProcess() int {
	op := os.Getenv(engineProcessEnv)
	rng, err := parsePortRange(os.Getenv(enginePortsEnv))
	n, nerr := strconv.Atoi(os.Getenv(engineInstsEnv))
	if err != nil || nerr != nil || (op != "create" && op != "delete") {
		fmt.Fprintln(os.Stderr, "engine process: bad environment")
		return engineNotBuilt
	}
	sc := scenario{root: os.Getenv(engineRootEnv), ports: rng, instances: n}
	p, err := New(Config{Root: sc.root, StopGrace: 2 * time.Second, HealthInterval: 10 * time.Millisecond,
		PortMin: rng.first, PortMax: rng.last, PortRangeSize: testRangeSize})
	if err != nil {
		fmt.Fprintln(os.Stderr, "engine process:", err)
		return engineNotBuilt
	}
	if at := os.Getenv(enginePauseEnv); at != "" {
		var once sync.Once
		p.hook = func(point string) {
			if point == at {
				once.Do(func() { fmt.Println("paused", point) })
				select {} // until killed
			}
		}
	}
	// "busy" tells a test that this engine found an object's lock held
	// by another process and waits for it.
	var busyOnce sync.Once
	p.locks.busy = func(key string) { busyOnce.Do(func() { fmt.Println("busy", key) }) }
	cloudlets := executor.NewCache[*edgeproto.Cloudlet]()
	clusters := executor.NewCache[*edgeproto.ClusterInst]()
	apps := executor.NewCache[*edgeproto.App]()
	eng, err := executor.New(executor.Config{
		Platform: p,
		Objects: executor.Objects{
			Cloudlets:    executor.CacheGetter[*edgeproto.CloudletKey](cloudlets),
			ClusterInsts: executor.CacheGetter[*edgeproto.ClusterKey](clusters),
			Apps:         executor.CacheGetter[*edgeproto.AppKey](apps),
		},
		Settings: &edgeproto.Settings{CreateAppInstTimeout: durationpb.New(30 * time.Second)},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "engine process:", err)
		return engineNotBuilt
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	go func() { _ = eng.Start(ctx) }()
	fmt.Println("ready")

	ready := func(c *edgeproto.Cloudlet) *edgeproto.Cloudlet {
		c.State = edgeproto.TrackedState_TRACKED_STATE_READY
		return c
	}
	cloudlets.Put(ready(sc.cloudlet()))
	cl := sc.cluster()
	cl.State = edgeproto.TrackedState_TRACKED_STATE_READY
	clusters.Put(cl)
	testAppPath = os.Getenv(engineAppEnv)
	apps.Put(newApp())
	apps.Put(execApp(""))

	run := func(state edgeproto.TrackedState, objs ...any) error {
		var hs []*executor.Handle
		for _, o := range objs {
			var h *executor.Handle
			var err error
			switch o := o.(type) {
			case *edgeproto.Cloudlet:
				o.State = state
				h, err = eng.SubmitCloudlet(o)
			case *edgeproto.ClusterInst:
				o.State = state
				h, err = eng.SubmitClusterInst(o)
			case *edgeproto.AppInst:
				o.State = state
				h, err = eng.SubmitAppInst(o)
			}
			if err != nil {
				return err
			}
			hs = append(hs, h)
		}
		var errs []error
		for _, h := range hs {
			errs = append(errs, h.Wait(ctx))
		}
		return errors.Join(errs...)
	}
	insts := make([]any, n)
	for i := range insts {
		insts[i] = sc.inst(i)
	}
	var steps [][]any
	create, del := edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED, edgeproto.TrackedState_TRACKED_STATE_DELETE_REQUESTED
	state := create
	if op == "create" {
		steps = [][]any{{sc.cloudlet()}, {sc.cluster()}, insts}
	} else {
		state = del
		steps = [][]any{insts, {sc.cluster()}, {sc.cloudlet()}}
	}
	for _, objs := range steps {
		if err := run(state, objs...); err != nil {
			fmt.Fprintln(os.Stderr, "engine process:", err)
			return engineFailed
		}
	}
	return engineOK
}

// engineProc is a running engine process.
type engineProc struct {
	t      *testing.T
	cmd    *exec.Cmd
	lines  chan string   // what it prints on stdout, closed at its end
	done   chan struct{} // closed once it exited and was reaped
	stderr *logbuf.Buffer
}

// engineTimeout bounds every wait for an engine process.
const engineTimeout = time.Minute

// startEngine starts an engine process for op ("create" or "delete"),
// pausing at the hook point pauseAt ("" for none). It is killed by pid at
// the end of the test if it still runs.
func startEngine(t *testing.T, sc scenario, op, pauseAt string) *engineProc {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(),
		engineProcessEnv+"="+op,
		engineRootEnv+"="+sc.root,
		enginePortsEnv+"="+sc.ports.String(),
		engineAppEnv+"="+testAppPath,
		engineInstsEnv+"="+strconv.Itoa(sc.instances),
		enginePauseEnv+"="+pauseAt,
	)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	ep := &engineProc{t: t, cmd: cmd, lines: make(chan string, 64), done: make(chan struct{}), stderr: &logbuf.Buffer{}}
	cmd.Stderr = ep.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			select {
			case ep.lines <- sc.Text():
			default: // nobody reads that far
			}
		}
		close(ep.lines)
		_ = cmd.Wait() // after every read from the pipe, as os/exec requires
		close(ep.done)
	}()
	t.Cleanup(ep.kill)
	return ep
}

// waitLine waits for a line starting with prefix.
func (ep *engineProc) waitLine(prefix string) string {
	ep.t.Helper()
	timeout := time.After(engineTimeout)
	for {
		select {
		case l, ok := <-ep.lines:
			if !ok {
				ep.t.Fatalf("engine process ended before printing %q: %v\n%s", prefix, ep.cmd.ProcessState, ep.stderr)
			}
			if strings.HasPrefix(l, prefix) {
				return l
			}
		case <-timeout:
			ep.t.Fatalf("engine process did not print %q within %s", prefix, engineTimeout)
		}
	}
}

// kill sends SIGKILL to the engine process (by its pid) and waits until it
// is reaped; it does nothing when the process already ended.
func (ep *engineProc) kill() {
	select {
	case <-ep.done:
		return
	default:
	}
	_ = syscall.Kill(ep.cmd.Process.Pid, syscall.SIGKILL)
	<-ep.done
}

// exitCode waits for the engine process to end and returns its exit code.
func (ep *engineProc) exitCode() int {
	ep.t.Helper()
	select {
	case <-ep.done:
	case <-time.After(engineTimeout):
		ep.t.Fatalf("engine process still running after %s", engineTimeout)
	}
	return ep.cmd.ProcessState.ExitCode()
}

// runEngine runs op to its end in an engine process and fails the test
// unless every operation succeeded.
func runEngine(t *testing.T, sc scenario, op string) {
	t.Helper()
	ep := startEngine(t, sc, op, "")
	if code := ep.exitCode(); code != engineOK {
		t.Fatalf("%s run exited with %d:\n%s", op, code, ep.stderr)
	}
}
