package local

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
)

// testAppPath is the test server binary, built once by TestMain.
var testAppPath string

func TestMain(m *testing.M) {
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

// syncBuffer collects log output from several goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
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
	p        *Platform
	logs     *syncBuffer
	res      *executor.MemReservations
	cloudlet *edgeproto.Cloudlet
	cluster  *edgeproto.ClusterInst
}

type option func(*Config)

func withGrace(d time.Duration) option { return func(c *Config) { c.StopGrace = d } }

func newEnv(t *testing.T, opts ...option) *env {
	t.Helper()
	root := t.TempDir()
	e := &env{
		t:    t,
		root: root,
		logs: &syncBuffer{},
		res:  executor.NewMemReservations(),
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
	t.Cleanup(func() { killAll(t, root) })
	return e
}

// newPlatform makes another platform over the same root: an engine restart.
func (e *env) newPlatform(opts ...option) *Platform {
	e.t.Helper()
	cfg := Config{
		Root:           e.root,
		Logger:         slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		StopGrace:      5 * time.Second,
		HealthInterval: 20 * time.Millisecond,
		HealthTimeout:  20 * time.Second,
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

// killAll kills the process group of every application recorded under
// root whose process is still the recorded one.
func killAll(t *testing.T, root string) {
	_ = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != appStateFile {
			return nil
		}
		var rec appRecord
		if ok, err := readJSON(path, &rec); err != nil || !ok || rec.Pid == 0 {
			return nil
		}
		if isOurs(rec.Pid, rec.StartTime) {
			t.Logf("cleanup: killing process group %d", rec.Pid)
			_ = syscall.Kill(-rec.Pid, syscall.SIGKILL)
		}
		return nil
	})
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
