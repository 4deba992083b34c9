package local

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/internal/testenv/freeport"
	"github.com/edgekit/edgekit/internal/testenv/logbuf"
)

// testAppPath is the test server binary, built once by TestMain.
var testAppPath string

// testAppEnv passes testAppPath to a copy of this test binary that a test
// starts, so that it does not build it again.
const testAppEnv = "LOCAL_TEST_APP_PATH"

func TestMain(m *testing.M) {
	if os.Getenv(engineProcessEnv) != "" {
		// This binary was started as an engine process by a test.
		os.Exit(runEngineProcess())
	}
	if p := os.Getenv(testAppEnv); p != "" {
		// Started by a test that built it already.
		testAppPath = p
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "local-testapp-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testAppPath = filepath.Join(dir, "testapp")
	build := exec.Command("go", "build", "-o", testAppPath, "./internal/testapp")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building testapp:", err)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// steps records progress messages.
type steps struct {
	mu  sync.Mutex
	msg []string
}

func (s *steps) Step(m string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.msg = append(s.msg, m)
}

func (s *steps) list() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.msg...)
}

// env is one test's platform, reservations and objects.
type env struct {
	t        *testing.T
	root     string
	ports    portRange // chosen free at run time
	p        *Platform
	logs     *logbuf.Buffer
	res      *executor.MemReservations
	cloudlet *edgeproto.Cloudlet
	cluster  *edgeproto.ClusterInst
}

type option func(*Config)

func withGrace(d time.Duration) option { return func(c *Config) { c.StopGrace = d } }

// testRangeSize is the port range size of test clusters; envPorts ports
// are chosen free for each test, room for envPorts/testRangeSize clusters.
const (
	testRangeSize = 25
	envPorts      = 250
)

func newEnv(t *testing.T, opts ...option) *env {
	t.Helper()
	root := t.TempDir()
	e := &env{
		t:     t,
		root:  root,
		ports: freePortRange(t, envPorts),
		logs:  &logbuf.Buffer{},
		res:   executor.NewMemReservations(),
		cloudlet: &edgeproto.Cloudlet{
			Key:          &edgeproto.CloudletKey{Organization: "operator", Name: "host"},
			PlatformType: PlatformType,
		},
	}
	e.cluster = &edgeproto.ClusterInst{
		Key:         &edgeproto.ClusterKey{Organization: "dev", Name: "c1"},
		CloudletKey: e.cloudlet.Key,
	}
	e.p = e.newPlatform(opts...)
	// Kill whatever a test left running, before the directory goes.
	t.Cleanup(func() {
		killAll(t, root)
		_ = e.p.Close()
	})
	return e
}

// newPlatform opens a platform over the test's root with opts.
func (e *env) newPlatform(opts ...option) *Platform {
	e.t.Helper()
	cfg := Config{
		Root:           e.root,
		Logger:         slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		StopGrace:      5 * time.Second,
		HealthInterval: 20 * time.Millisecond,
		HealthTimeout:  20 * time.Second,
		PortMin:        e.ports.first,
		PortMax:        e.ports.last,
		PortRangeSize:  testRangeSize,
	}
	for _, o := range opts {
		o(&cfg)
	}
	p, err := New(cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	return p
}

// restart simulates a new engine process: the platform is closed and a
// new one opened over the same root.
func (e *env) restart(opts ...option) {
	e.t.Helper()
	if err := e.p.Close(); err != nil {
		e.t.Fatal(err)
	}
	e.p = e.newPlatform(opts...)
}

// handedOut are the port ranges freePortRange gave to the running tests
// of this process, which it never gives twice; a range is free again when
// its test ends (its processes are gone by then).
var handedOut struct {
	sync.Mutex
	ranges []portRange
}

// freePortRange picks n consecutive ports on 127.0.0.1 that nothing
// listens on now and that no other test of this process got, at a random
// place below the kernel's ephemeral ports (so that no outgoing connection
// takes one meanwhile), so that tests never depend on a fixed range being
// free.
func freePortRange(t testing.TB, n int) portRange {
	t.Helper()
	low, high := 10000, ephemeralStart()
	handedOut.Lock()
	defer handedOut.Unlock()
	for range 200 {
		first := low + rand.IntN(high-low-n)
		r := portRange{first, first + n - 1}
		if slices.ContainsFunc(handedOut.ranges, func(o portRange) bool { return r.first <= o.last && o.first <= r.last }) {
			continue
		}
		free := true
		for q := r.first; q <= r.last && free; q++ {
			l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(q)))
			if err != nil {
				free = false
				continue
			}
			_ = l.Close()
		}
		if free {
			handedOut.ranges = append(handedOut.ranges, r)
			t.Cleanup(func() {
				handedOut.Lock()
				defer handedOut.Unlock()
				handedOut.ranges = slices.DeleteFunc(handedOut.ranges, func(o portRange) bool { return o == r })
			})
			return r
		}
	}
	t.Fatalf("no %d free consecutive ports found in %d-%d", n, low, high)
	return portRange{}
}

// ephemeralStart is the first port the kernel hands to outgoing
// connections (32768 unless configured otherwise).
func ephemeralStart() int { return freeport.EphemeralStart() }

// appDir is the directory of an instance on the test's cluster.
func (e *env) appDir(inst *edgeproto.AppInst) (string, error) {
	l, err := e.p.appLoc(e.cluster, inst)
	return l.dir, err
}

func (e *env) mustAppDir(inst *edgeproto.AppInst) string {
	e.t.Helper()
	dir, err := e.appDir(inst)
	if err != nil {
		e.t.Fatal(err)
	}
	return dir
}

// writeAppRecord writes rec as the record of inst.
func (e *env) writeAppRecord(inst *edgeproto.AppInst, rec *appRecord) {
	e.t.Helper()
	dir := e.mustAppDir(inst)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		e.t.Fatal(err)
	}
	if err := e.p.writeRecord(e.ctx(), filepath.Join(dir, appStateFile), rec); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	e.t.Cleanup(cancel)
	return ctx
}

func (e *env) createCluster(c *edgeproto.ClusterInst) {
	e.t.Helper()
	if err := e.p.InitCloudlet(e.ctx(), e.cloudlet, e.res, nil); err != nil {
		e.t.Fatal(err)
	}
	if err := e.p.CreateCluster(e.ctx(), e.cloudlet, c, e.res, nil); err != nil {
		e.t.Fatal(err)
	}
}

func newApp(extraEnv ...string) *edgeproto.App {
	app := &edgeproto.App{
		Key:             &edgeproto.AppKey{Organization: "dev", Name: "web", Version: "1"},
		ImageType:       edgeproto.ImageType_IMAGE_TYPE_NONE,
		Deployment:      "local",
		Command:         testAppPath,
		HealthCheck:     edgeproto.HealthCheck_HEALTH_CHECK_HTTP,
		HealthCheckPath: "/healthz",
		Ports:           []*edgeproto.Port{{Proto: edgeproto.PortProtocol_PORT_PROTOCOL_HTTP, InternalPort: 8080}},
	}
	for _, kv := range extraEnv {
		k, v, _ := strings.Cut(kv, "=")
		app.EnvVars = append(app.EnvVars, &edgeproto.EnvVar{Name: k, Value: v})
	}
	return app
}

func (e *env) newInst(name string) *edgeproto.AppInst {
	return &edgeproto.AppInst{
		Key:         &edgeproto.AppInstKey{Organization: "dev", Name: name},
		AppKey:      &edgeproto.AppKey{Organization: "dev", Name: "web", Version: "1"},
		ClusterKey:  e.cluster.Key,
		CloudletKey: e.cloudlet.Key,
	}
}

// createApp creates inst of app on the test's cluster and fails the test
// on error.
func (e *env) createApp(app *edgeproto.App, inst *edgeproto.AppInst) *edgeproto.AppInstRuntime {
	e.t.Helper()
	rt, err := e.p.CreateAppInst(e.ctx(), e.cluster, app, inst, e.res, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	return rt
}

// reserved lists what owner holds of kind in the test's reservations.
func (e *env) reserved(kind, owner string) []string {
	e.t.Helper()
	var out []string
	err := e.res.Update(e.ctx(), cloudletID(e.cloudlet.Key), func(set executor.ReservationSet) error {
		out = set.Values(kind, owner)
		return nil
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return out
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// running reports whether pid is a live process (not a zombie).
func running(pid int) bool {
	pi, err := readProcStat(pid)
	return err == nil && pi.running()
}

// readPidFile waits for a pid file written by testapp.
func readPidFile(t *testing.T, path string) int {
	t.Helper()
	var pid int
	waitFor(t, "pid file "+filepath.Base(path), 10*time.Second, func() bool {
		b, err := os.ReadFile(path)
		if err != nil {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil && pid > 0
	})
	return pid
}

func httpGet(t *testing.T, port uint32, path string) (int, string) {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{Proxy: nil}, Timeout: 5 * time.Second}
	resp, err := client.Get(fmt.Sprintf("http://127.0.0.1:%d%s", port, path))
	if err != nil {
		t.Fatalf("GET %s on port %d: %v", path, port, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// markedProcs lists the live processes whose environment carries a
// marker of the state directory root. It reads /proc itself, apart from
// the platform's scan, so that tests check the platform against an
// independent view.
func markedProcs(t testing.TB, root string) map[int]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, keyFileName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	key, err := hex.DecodeString(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	prefix := MarkerEnv + "=" + rootID(key) + ":"
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]string{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue
		}
		for _, kv := range strings.Split(string(env), "\x00") {
			if strings.HasPrefix(kv, prefix) && running(pid) {
				out[pid] = strings.TrimPrefix(kv, prefix)
			}
		}
	}
	return out
}

// checkNoneRunning fails the test when a process carrying a marker of
// root still runs.
func checkNoneRunning(t *testing.T, root string) {
	t.Helper()
	if left := markedProcs(t, root); len(left) != 0 {
		t.Errorf("processes left running: %v", left)
	}
}

// killAll kills every process carrying a marker of root (the test started
// them all).
func killAll(t *testing.T, root string) {
	for pid := range markedProcs(t, root) {
		t.Logf("cleanup: killing process %d", pid)
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// countLines counts lines of path holding s.
func countLines(t *testing.T, path, s string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), s)
}

func dirExists(dir string) bool {
	_, err := os.Stat(dir)
	return err == nil
}
