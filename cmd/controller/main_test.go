package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/hosts/controller"
	"github.com/edgekit/edgekit/hosts/controller/controllertest"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
)

var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "controller-bin")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "controller")
	if out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		panic("build: " + err.Error() + "\n" + string(out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// process is a controller binary the test started.
type process struct {
	cmd     *exec.Cmd
	exited  chan error
	addr    string
	metrics string
}

// startBinary starts the controller with args (plus a fresh data dir, free
// ports and JSON logs) and waits until it is ready; it is killed by pid in
// cleanup if still running.
func startBinary(t *testing.T, dataDir string, args ...string) *process {
	t.Helper()
	args = append([]string{"--data-dir", dataDir, "--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0", "--log-format", "json"}, args...)
	cmd := exec.Command(binary, args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default:
			}
		}
		close(lines)
		exited <- cmd.Wait()
	}()
	p := &process{cmd: cmd, exited: exited}
	deadline := time.After(60 * time.Second)
	for p.addr == "" {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("controller exited before it was ready")
			}
			if strings.Contains(l, "controller ready") {
				p.addr = field(l, "addr")
				p.metrics = field(l, "metrics")
			}
		case <-deadline:
			t.Fatal("controller not ready within 60s")
		}
	}
	return p
}

// The real binary starts on a fresh data directory with no other set-up,
// serves the API and /metrics, and stops cleanly on SIGTERM.
func TestBinaryStartsServesAndStops(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	p := startBinary(t, dataDir)
	addr, metrics, cmd, exited := p.addr, p.metrics, p.cmd, p.exited
	tok, err := os.ReadFile(filepath.Join(dataDir, "admin.token"))
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(filepath.Join(dataDir, "admin.token")); fi.Mode().Perm() != 0o600 {
		t.Errorf("admin token file mode %v, want 0600", fi.Mode().Perm())
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithPerRPCCredentials(controllertest.BearerToken(strings.TrimSpace(string(tok)))))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := edgeproto.NewFlavorServiceClient(conn).CreateFlavor(ctx, &edgeproto.CreateFlavorRequest{
		Flavor: &edgeproto.Flavor{Key: &edgeproto.FlavorKey{Name: "f"}}}); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get("http://" + metrics + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`edgekit_controller_api_calls_total{code="OK",method="/edgeproto.v1.FlavorService/CreateFlavor"} 1`,
		`edgekit_controller_store_operation_seconds_count{kind="mixed",op="txn",result="ok"}`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		exited <- err
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("controller did not stop within 30s of SIGTERM")
	}
}

func field(jsonLine, name string) string {
	m := regexp.MustCompile(`"` + name + `":"([^"]*)"`).FindStringSubmatch(jsonLine)
	if m == nil {
		return ""
	}
	return m[1]
}

func TestBadFlags(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{}, {"--data-dir", t.TempDir(), "--log-format", "xml"}, {"--data-dir", t.TempDir(), "extra"},
		{"--data-dir", t.TempDir(), "--fluidos-dev-tls", t.TempDir()},
		{"--data-dir", t.TempDir(), "--fluidos-nodes", "127.0.0.1:1"},
		{"--data-dir", t.TempDir(), "--fluidos-nodes", "127.0.0.1:1", "--fluidos-dev-tls", t.TempDir(), "--fluidos-tls-ca-file", "x"}} {
		if err := controller.Main(context.Background(), args, io.Discard); err == nil {
			t.Errorf("Main(%q) succeeded", args)
		}
	}
}

// With --dev-tls the API speaks TLS only, verified with the data dir's CA.
func TestBinaryDevTLS(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	p := startBinary(t, dataDir, "--dev-tls")
	tok, err := os.ReadFile(filepath.Join(dataDir, "admin.token"))
	if err != nil {
		t.Fatal(err)
	}
	caPEM, err := os.ReadFile(filepath.Join(dataDir, "tls", "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	call := func(creds credentials.TransportCredentials) error {
		conn, err := grpc.NewClient(p.addr, grpc.WithTransportCredentials(creds),
			grpc.WithPerRPCCredentials(controllertest.BearerToken(strings.TrimSpace(string(tok)))))
		if err != nil {
			return err
		}
		defer conn.Close()
		_, err = edgeproto.NewSettingsServiceClient(conn).ShowSettings(ctx, &edgeproto.ShowSettingsRequest{})
		return err
	}
	if err := call(credentials.NewTLS(&tls.Config{RootCAs: pool, ServerName: "localhost"})); err != nil {
		t.Fatalf("TLS call: %v", err)
	}
	if err := call(insecure.NewCredentials()); err == nil {
		t.Fatal("a plaintext call succeeded against --dev-tls")
	}
}
