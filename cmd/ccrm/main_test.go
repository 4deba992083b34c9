package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
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

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/hosts/controller/controllertest"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
)

var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "ccrm-bin")
	if err != nil {
		panic(err)
	}
	bin = dir
	for _, pkg := range []string{".", "../controller"} {
		out, err := exec.Command("go", "build", "-o", dir+"/", pkg).CombinedOutput()
		if err != nil {
			os.RemoveAll(dir)
			panic("build " + pkg + ": " + err.Error() + "\n" + string(out))
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// proc is a binary the test started; it is killed by pid in cleanup.
type proc struct {
	cmd    *exec.Cmd
	lines  chan map[string]any
	exited chan error
}

func start(t *testing.T, name string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(filepath.Join(bin, name), append(args, "--log-format", "json")...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, lines: make(chan map[string]any, 1024), exited: make(chan error, 1)}
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				select {
				case p.lines <- m:
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
		p.exited <- cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		select {
		case <-p.exited:
		case <-time.After(10 * time.Second):
		}
	})
	return p
}

// await returns the first log line whose message is msg.
func (p *proc) await(t *testing.T, msg string) map[string]any {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		select {
		case m := <-p.lines:
			if m["msg"] == msg {
				return m
			}
		case err := <-p.exited:
			t.Fatalf("exited before logging %q: %v", msg, err)
		case <-deadline:
			t.Fatalf("no %q logged within 60s", msg)
		}
	}
}

// The commands of the README: a controller with --dev-tls and two CCRM
// replicas identified by the certificates of its authority; a cluster on
// a cloudlet they serve gets READY; /metrics is served; SIGTERM stops a
// replica cleanly.
func TestControllerAndTwoReplicas(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	ctl := start(t, "controller", "--data-dir", data, "--dev-tls", "--listen", "127.0.0.1:0", "--metrics-listen", "")
	ready := ctl.await(t, "controller ready")
	addr := ready["addr"].(string)
	endpoint, err := os.ReadFile(filepath.Join(data, "etcd-endpoint"))
	if err != nil {
		t.Fatal(err)
	}
	var reps []*proc
	var metrics []string
	for _, id := range []string{"a", "b"} {
		p := start(t, "ccrm", "--etcd-endpoints", strings.TrimSpace(string(endpoint)), "--controller", addr,
			"--dev-tls", filepath.Join(data, "tls"), "--replica-id", id, "--metrics-listen", "127.0.0.1:0", "--lease-ttl", "3s",
			"--encryption-key-file", filepath.Join(data, "encryption.keys"))
		metrics = append(metrics, p.await(t, "metrics")["addr"].(string)) // http://host:port/metrics
		reps = append(reps, p)
	}

	pem, err := os.ReadFile(filepath.Join(data, "tls", "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	tok, err := os.ReadFile(filepath.Join(data, "admin.token"))
	if err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12})),
		grpc.WithPerRPCCredentials(controllertest.BearerToken(strings.TrimSpace(string(tok)))))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := edgeproto.NewFlavorServiceClient(conn).CreateFlavor(ctx, &edgeproto.CreateFlavorRequest{Flavor: &edgeproto.Flavor{
		Key: &edgeproto.FlavorKey{Name: "fake.small"}, Vcpus: 1, RamMb: 1024, DiskGb: 10}}); err != nil {
		t.Fatal(err)
	}
	cl := &edgeproto.CloudletKey{Organization: "op", Name: "offsite"}
	// Its access variables are stored encrypted: the replicas read them
	// with the controller's key file.
	cs, err := edgeproto.NewCloudletServiceClient(conn).CreateCloudlet(ctx, &edgeproto.CreateCloudletRequest{Cloudlet: &edgeproto.Cloudlet{Key: cl, PlatformType: "fake",
		AccessVars: map[string]string{"API_KEY": "AccessVar-Secret-456"}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := lastState(t, func() (*edgeproto.Progress, error) { r, err := cs.Recv(); return r.GetProgress(), err }); got != edgeproto.TrackedState_TRACKED_STATE_READY {
		t.Fatalf("cloudlet ended in %v", got)
	}
	cc, err := edgeproto.NewClusterInstServiceClient(conn).CreateClusterInst(ctx, &edgeproto.CreateClusterInstRequest{ClusterInst: &edgeproto.ClusterInst{
		Key: &edgeproto.ClusterKey{Organization: "dev", Name: "c1"}, CloudletKey: cl, FlavorName: "fake.small", Deployment: "docker"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := lastState(t, func() (*edgeproto.Progress, error) { r, err := cc.Recv(); return r.GetProgress(), err }); got != edgeproto.TrackedState_TRACKED_STATE_READY {
		t.Fatalf("cluster ended in %v", got)
	}

	if !strings.HasPrefix(metrics[0], "http://127.0.0.1:") {
		t.Fatalf("metrics served at %q, want a loopback address", metrics[0])
	}
	resp, err := http.Get(metrics[0])
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, m := range []string{"edgekit_ccrm_claims_held", "edgekit_ccrm_takeovers_total", "edgekit_ccrm_claim_attempts_total"} {
		if !strings.Contains(string(body), m) {
			t.Errorf("/metrics lacks %s", m)
		}
	}
	for _, p := range reps {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-p.exited:
			if err != nil {
				t.Errorf("replica exited with %v after SIGTERM", err)
			}
		case <-time.After(20 * time.Second):
			t.Error("replica did not stop within 20s of SIGTERM")
		}
	}
}

// lastState reads a progress stream to its end and returns the last state.
func lastState(t *testing.T, recv func() (*edgeproto.Progress, error)) edgeproto.TrackedState {
	t.Helper()
	var last edgeproto.TrackedState
	for {
		p, err := recv()
		if err == io.EOF {
			return last
		}
		if err != nil {
			t.Fatalf("progress: %v (last state %v)", err, last)
		}
		last = p.GetState()
	}
}

func TestBadFlags(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{},
		{"--etcd-endpoints", "http://127.0.0.1:1", "--lease-ttl", "100ms"},
		{"--etcd-endpoints", "http://127.0.0.1:1", "--workers", "0"},
		{"--etcd-endpoints", "http://127.0.0.1:1", "--platforms", "nope"},
		{"--etcd-endpoints", "http://127.0.0.1:1", "extra"},
	} {
		out, err := exec.Command(filepath.Join(bin, "ccrm"), args...).CombinedOutput()
		if err == nil {
			t.Errorf("ccrm %q succeeded:\n%s", args, out)
		}
	}
}
