package main

import (
	"bufio"
	"context"
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
	"github.com/edgekit/edgekit/hosts/controller/controllertest"
	"google.golang.org/grpc"
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

// The real binary starts on a fresh data directory with no other set-up,
// serves the API and /metrics, and stops cleanly on SIGTERM.
func TestBinaryStartsServesAndStops(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	cmd := exec.Command(binary, "--data-dir", dataDir, "--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0", "--log-format", "json")
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
	addr, metrics := "", ""
	deadline := time.After(60 * time.Second)
	for addr == "" {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("controller exited before it was ready")
			}
			if strings.Contains(l, "controller ready") {
				addr = field(l, "addr")
				metrics = field(l, "metrics")
			}
		case <-deadline:
			t.Fatal("controller not ready within 60s")
		}
	}
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
		`edgekit_controller_store_operation_seconds_count{kind="",op="txn",result="ok"}`,
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
	for _, args := range [][]string{{}, {"--data-dir", t.TempDir(), "--log-format", "xml"}, {"--data-dir", t.TempDir(), "extra"}} {
		if err := run(args, io.Discard); err == nil {
			t.Errorf("run(%q) succeeded", args)
		}
	}
}
