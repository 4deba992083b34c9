package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/hosts/fluidos/node"
	"github.com/edgekit/edgekit/hosts/fluidos/nodetest"
	"github.com/edgekit/edgekit/internal/devtls"
)

// binary is the node, kvPath the kv image, built once by TestMain.
var binary, kvPath string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "fluidos-node-bin")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "fluidos-node")
	if out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		panic("build: " + err.Error() + "\n" + string(out))
	}
	if kvPath, err = nodetest.BuildKV(dir); err != nil {
		os.RemoveAll(dir)
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// process is a node binary the test started.
type process struct {
	cmd    *exec.Cmd
	exited chan error
	ready  map[string]any // attributes of the "FLUIDOS node ready" log line
}

// startNode starts the binary with args (plus free loopback ports and JSON
// logs), waits for its ready line, and kills it by pid in cleanup if it
// still runs.
func startNode(t *testing.T, args ...string) *process {
	t.Helper()
	args = append([]string{"--rear-listen", "127.0.0.1:0", "--api-listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0", "--log-format", "json"}, args...)
	cmd := exec.Command(binary, args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &process{cmd: cmd, exited: make(chan error, 1)}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.exited
	})
	ready := make(chan map[string]any, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			var line map[string]any
			if json.Unmarshal(sc.Bytes(), &line) == nil && line["msg"] == "FLUIDOS node ready" {
				ready <- line
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
		p.exited <- cmd.Wait()
	}()
	select {
	case p.ready = <-ready:
	case err := <-p.exited:
		p.exited <- err
		t.Fatalf("node exited before it was ready: %v", err)
	case <-time.After(60 * time.Second):
		t.Fatal("node not ready within 60s")
	}
	return p
}

func (p *process) attr(name string) string { s, _ := p.ready[name].(string); return s }

// stop sends SIGTERM and waits for a clean exit.
func (p *process) stop(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-p.exited:
		p.exited <- err
		if err != nil {
			t.Errorf("node exited with %v after SIGTERM", err)
		}
	case <-time.After(30 * time.Second):
		t.Error("node still running 30s after SIGTERM")
	}
}

func TestTwoNodeProcessesTrade(t *testing.T) {
	t.Parallel()
	caDir := t.TempDir()
	bob := startNode(t, "--id", "bob", "--data-dir", t.TempDir(), "--dev-tls", caDir)
	alice := startNode(t, "--id", "alice", "--data-dir", t.TempDir(), "--dev-tls", caDir, "--peers", bob.attr("rear"))

	ca, err := devtls.OpenCA(caDir)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := ca.Issue("admin", devtls.LeafOptions{})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient(alice.attr("api"), grpc.WithTransportCredentials(credentials.NewTLS(admin.ClientConfig())))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	solvers := fluidos.NewSolverServiceClient(conn)
	created, err := solvers.CreateSolver(ctx, &fluidos.CreateSolverRequest{Solver: &fluidos.Solver{
		Selector:      &fluidos.Selector{FlavorType: fluidos.FlavorType_FLAVOR_TYPE_K8SLICE},
		Configuration: &fluidos.Configuration{Spec: &fluidos.Configuration_K8Slice{K8Slice: &fluidos.K8SliceConfiguration{Cpu: 500, Memory: 512 << 20, Pods: 1}}},
		FindCandidate: true, ReserveAndBuy: true,
	}})
	if err != nil {
		t.Fatal(err)
	}
	var s *fluidos.Solver
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		resp, err := solvers.GetSolver(ctx, &fluidos.GetSolverRequest{Id: created.GetSolver().GetId()})
		if err != nil {
			t.Fatal(err)
		}
		s = resp.GetSolver()
		if p := s.GetStatus().GetSolverPhase(); p == fluidos.Phase_PHASE_SOLVED || p == fluidos.Phase_PHASE_FAILED || time.Now().After(deadline) {
			break
		}
	}
	if s.GetStatus().GetSolverPhase() != fluidos.Phase_PHASE_SOLVED {
		t.Fatalf("solver ended %v", s.GetStatus())
	}

	scrape := func(p *process) string {
		t.Helper()
		resp, err := http.Get("http://" + p.attr("metrics") + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return string(body)
	}
	body := scrape(bob)
	for _, want := range []string{`edgekit_fluidos_provider_purchases_total{result="ok"} 1`, `edgekit_fluidos_provider_reservations_total{result="ok"} 1`, `edgekit_fluidos_rear_requests_total{code="200",route="purchase"} 1`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("bob's metrics lack %s", want)
		}
	}
	// Each node exports the series of the side it acted on only: alice
	// bought and sold nothing, bob sold and bought nothing.
	aliceBody := scrape(alice)
	if want := `edgekit_fluidos_consumer_solvers_total{result="solved"} 1`; !strings.Contains(aliceBody, want) {
		t.Errorf("alice's metrics lack %s", want)
	}
	for who, b := range map[string]struct{ body, side string }{"alice": {aliceBody, "provider"}, "bob": {body, "consumer"}} {
		for line := range strings.Lines(b.body) {
			if strings.HasPrefix(line, "edgekit_fluidos_"+b.side+"_") {
				t.Errorf("%s, which acted on no %s side, exports %s", who, b.side, strings.TrimSpace(line))
			}
		}
	}
	alice.stop(t)
	bob.stop(t)
}

func TestFlagErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--data-dir", dir, "--id", "n"}, "mutual TLS"},
		{[]string{"--data-dir", dir, "--id", "n", "--tls-cert-file", "x"}, "go together"},
		{[]string{"--data-dir", dir, "--id", "n", "--insecure-rear", "--price", "free"}, "--price"},
		{[]string{"--data-dir", dir, "--id", "bad/name", "--insecure-rear"}, "node ID"},
		{[]string{"--data-dir", dir, "--id", "n", "--insecure-rear", "--peers", "nowhere"}, "nowhere"},
		{[]string{"--data-dir", dir, "--id", "n", "--insecure-rear", "--api-listen", "0.0.0.0:7001"}, "loopback"},
		{[]string{"--data-dir", dir, "--id", "n", "--insecure-rear", "--blueprints", filepath.Join(dir, "absent.json")}, "--blueprints"},
		{[]string{"--data-dir", dir, "--id", "n", "--insecure-rear", "extra"}, "unexpected"},
		{[]string{"--data-dir", dir, "--id", "n", "--insecure-rear", "--image", "kv"}, "NAME=/absolute/path"},
		{[]string{"--data-dir", dir, "--id", "n", "--insecure-rear", "--image", "kv=/a", "--image", "kv=/b"}, "twice"},
		{[]string{"--data-dir", dir, "--id", "n", "--insecure-rear", "--port-range", "30000-20000"}, "--port-range"},
		{[]string{"--data-dir", dir, "--id", "n", "--insecure-rear", "--flavors", filepath.Join(dir, "absent.yaml")}, "--flavors"},
		{[]string{"--data-dir", dir, "--id", "n", "--insecure-rear", "--kubeconfig", filepath.Join(dir, "kc")}, "--platform kubernetes"},
		{[]string{"--data-dir", dir, "--id", "n", "--insecure-rear", "--platform", "kubernetes", "--kubeconfig", filepath.Join(dir, "absent")}, "--kubeconfig"},
	} {
		err := node.Main(context.Background(), c.args, io.Discard)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Main(%q) = %v, want an error with %q", c.args, err, c.want)
		}
	}
}
