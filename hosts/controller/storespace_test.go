package controller_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/hosts/controller"
	"github.com/edgekit/edgekit/hosts/controller/controllertest"
	"github.com/edgekit/edgekit/internal/etcd"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// logBuffer is a log sink safe for concurrent writers.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// httpGet returns the body of a GET of url with client.
func httpGet(t *testing.T, c *http.Client, u string) string {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// pageSnapshot logs in to the status page with token and returns the data
// of its first event: the rows the page shows.
func pageSnapshot(t *testing.T, base, token string) string {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	resp, err := c.PostForm(base+"/ui/login", url.Values{"token": {token}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("login: %s", resp.Status)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/ui/events", nil)
	resp, err = c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			return data
		}
	}
	t.Fatalf("no event from the status page: %v", sc.Err())
	return ""
}

// A store that reaches its quota: writes answer ResourceExhausted naming
// etcd's NOSPACE alarm, reads and deletes work, /metrics, the status page
// and the log show it, and once objects are deleted the controller
// recovers by itself and writes work again, without a restart.
func TestStoreFullRefusesWritesAndRecovers(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var logs logBuffer
	run, _ := startController(t, controller.Options{DataDir: filepath.Join(dir, "data"), Region: "r", Listen: "127.0.0.1:0",
		MetricsListen: "127.0.0.1:0", EtcdQuotaBytes: 8 << 20, StopTimeout: 2 * time.Second,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	tok, err := os.ReadFile(run.AdminTokenFile)
	if err != nil {
		t.Fatal(err)
	}
	token := strings.TrimSpace(string(tok))
	conn, err := grpc.NewClient(run.Addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithPerRPCCredentials(controllertest.BearerToken(token)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	apps := clientsOf(conn).apps
	ctx := testCtx(t)
	metrics := "http://" + run.MetricsAddr
	alarmGauge := func() string {
		for _, line := range strings.Split(httpGet(t, http.DefaultClient, metrics+"/metrics"), "\n") {
			if v, ok := strings.CutPrefix(line, "edgekit_controller_store_nospace_alarm "); ok {
				return v
			}
		}
		return ""
	}
	if g := alarmGauge(); g != "0" {
		t.Fatalf("the NOSPACE gauge before the store is full: %q, want 0", g)
	}

	// Fill the store with Apps of 256 KiB until it refuses one.
	big := strings.Repeat("x", 256<<10)
	var created []*edgeproto.AppKey
	var full error
	for i := range 100 {
		key := &edgeproto.AppKey{Organization: "dev", Name: fmt.Sprintf("a%03d", i)}
		_, err := apps.CreateApp(ctx, &edgeproto.CreateAppRequest{App: &edgeproto.App{Key: key, Deployment: "docker",
			ImagePath: "example/app", Args: []string{big}}})
		if err != nil {
			full = err
			break
		}
		created = append(created, key)
	}
	if full == nil {
		t.Fatal("the store took 100 Apps of 256 KiB under an 8 MiB quota")
	}
	if status.Code(full) != codes.ResourceExhausted || !strings.Contains(full.Error(), "NOSPACE") {
		t.Fatalf("a create into a full store: %v; want ResourceExhausted naming the NOSPACE alarm", full)
	}
	if len(created) < 2 {
		t.Fatalf("only %d Apps fit", len(created))
	}
	// Every write is refused, even a small one.
	_, err = apps.CreateApp(ctx, &edgeproto.CreateAppRequest{App: &edgeproto.App{Key: &edgeproto.AppKey{Organization: "dev", Name: "small"},
		Deployment: "docker", ImagePath: "example/app"}})
	wantCode(t, err, codes.ResourceExhausted, "a small create into a full store")

	controllertest.WaitFor(t, 30*time.Second, "the NOSPACE gauge at 1", func() bool { return alarmGauge() == "1" })
	if snap := pageSnapshot(t, metrics, token); !strings.Contains(snap, `"kind":"Store"`) || !strings.Contains(snap, "NOSPACE_ALARM") {
		t.Errorf("the status page does not show the alarm: %s", snap)
	}
	if !strings.Contains(logs.String(), "NOSPACE") || !strings.Contains(logs.String(), "To recover, delete objects") {
		t.Errorf("the log does not say how to recover:\n%s", logs.String())
	}

	// Reads and deletes work.
	got, err := recvAll(apps.ShowApps(ctx, &edgeproto.ShowAppsRequest{}))
	if err != nil || len(got) != len(created) {
		t.Fatalf("show apps of a full store: %d apps, %v; want %d", len(got), err, len(created))
	}
	for _, key := range created {
		if _, err := apps.DeleteApp(ctx, &edgeproto.DeleteAppRequest{Key: key}); err != nil {
			t.Fatalf("delete %v from a full store: %v", key, err)
		}
	}

	// The controller compacts, defragments and disarms by itself.
	controllertest.WaitFor(t, 30*time.Second, "the NOSPACE gauge back at 0", func() bool { return alarmGauge() == "0" })
	if _, err := apps.CreateApp(ctx, &edgeproto.CreateAppRequest{App: &edgeproto.App{Key: &edgeproto.AppKey{Organization: "dev", Name: "after"},
		Deployment: "docker", ImagePath: "example/app"}}); err != nil {
		t.Fatalf("a create after the deletes: %v", err)
	}
	if snap := pageSnapshot(t, metrics, token); strings.Contains(snap, `"kind":"Store"`) {
		t.Errorf("the status page still shows the alarm: %s", snap)
	}
	if !strings.Contains(logs.String(), "alarm cleared") {
		t.Errorf("the log does not say the alarm cleared:\n%s", logs.String())
	}
}

// A data directory whose disk cannot hold the quota is refused before etcd
// starts, in one line naming what is needed and the flag.
func TestControllerRefusesDiskWithoutRoomForTheQuota(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var stderr bytes.Buffer
	err := controller.Main(context.Background(), []string{"--data-dir", dir, "--listen", "127.0.0.1:0", "--metrics-listen", "",
		"--etcd-quota-bytes", fmt.Sprint(int64(1) << 60)}, &stderr)
	var se *etcd.SpaceError
	if !errors.As(err, &se) {
		t.Fatalf("err %v, want a SpaceError", err)
	}
	msg := err.Error()
	for _, want := range []string{filepath.Join(dir, "etcd"), "1 EiB", "needed", "--etcd-quota-bytes"} {
		if !strings.Contains(msg, want) {
			t.Errorf("%q does not say %q", msg, want)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("%q is more than one line", msg)
	}
}
