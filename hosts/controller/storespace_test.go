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
	"testing"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/hosts/controller"
	"github.com/edgekit/edgekit/hosts/controller/controllertest"
	"github.com/edgekit/edgekit/internal/etcd"
	"github.com/edgekit/edgekit/internal/testenv/logbuf"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

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
	var logs logbuf.Buffer
	run, _ := startController(t, controller.Options{DataDir: filepath.Join(dir, "data"), Region: "r", Listen: "127.0.0.1:0",
		MetricsListen: "127.0.0.1:0", EtcdQuotaBytes: 8 << 20, SpaceCheckInterval: 50 * time.Millisecond, StopTimeout: 2 * time.Second,
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
	// Filling the store in steps, and its recovery (a defragmentation at
	// most every 30 s), take longer than testCtx allows on a loaded machine.
	ctx := fillCtx(t)
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

	// Some Apps, then filler written to etcd beside the controller until
	// the NOSPACE alarm fires, in rounds: the controller's compaction and
	// defragmentation may give room back at once (the database file has
	// slack); then fill again, until the alarm stays on.
	big := strings.Repeat("x", 256<<10)
	var created []*edgeproto.AppKey
	for i := range 4 {
		key := &edgeproto.AppKey{Organization: "dev", Name: fmt.Sprintf("a%03d", i)}
		if _, err := apps.CreateApp(ctx, &edgeproto.CreateAppRequest{App: &edgeproto.App{Key: key, Deployment: "docker",
			ImagePath: "example/app", Args: []string{big}}}); err != nil {
			t.Fatal(err)
		}
		created = append(created, key)
	}
	cli, err := etcd.NewClient(etcd.ClientConfig{Endpoints: run.EtcdEndpoints})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	for round := 0; ; round++ {
		if round == 10 {
			t.Fatal("the NOSPACE alarm did not stay on after 10 rounds of filling")
		}
		for i := 0; ; i++ {
			if i == 1000 {
				t.Fatal("1000 puts of 256 KiB did not fill an 8 MiB quota")
			}
			_, err := cli.Put(ctx, fmt.Sprintf("/filler/%d/%04d", round, i), big)
			if errors.Is(err, rpctypes.ErrNoSpace) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		// The controller's verdict: the alarm disarmed, or kept once its
		// look ended (the size it reports is etcd's).
		kept := false
		controllertest.WaitFor(t, 60*time.Second, "the controller to keep or disarm the alarm", func() bool {
			al, err := cli.AlarmList(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(al.Alarms) == 0 {
				return true
			}
			st, err := cli.Status(ctx, run.EtcdEndpoints[0])
			if err != nil {
				t.Fatal(err)
			}
			var seen float64
			_, _ = fmt.Sscan(metricValue(t, metrics+"/metrics", "edgekit_controller_store_db_size_bytes"), &seen)
			kept = alarmGauge() == "1" && seen == float64(st.DbSize)
			return kept
		})
		if !kept {
			continue
		}
		// Every write is refused, even a small one. (The controller's
		// next look may still compact and defragment enough to disarm the
		// alarm before this create: then it is stored, and the store is
		// filled again.)
		key := &edgeproto.AppKey{Organization: "dev", Name: fmt.Sprintf("small%d", round)}
		_, err = apps.CreateApp(ctx, &edgeproto.CreateAppRequest{App: &edgeproto.App{Key: key,
			Deployment: "docker", ImagePath: "example/app"}})
		if err == nil {
			created = append(created, key)
			continue
		}
		if status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "NOSPACE") {
			t.Fatalf("a create into a full store: %v; want ResourceExhausted naming the NOSPACE alarm", err)
		}
		break
	}
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
	if _, err := cli.Delete(ctx, "/filler/", clientv3.WithPrefix()); err != nil {
		t.Fatal(err)
	}

	// The controller compacts, defragments and disarms by itself. (The
	// database file grows in steps of a few MiB, a good share of this
	// small quota: an alarm disarmed while Apps were still being deleted
	// can fire again once, and is then disarmed again.)
	var lastErr error
	controllertest.WaitFor(t, 60*time.Second, "a create to succeed after the deletes", func() bool {
		_, lastErr = apps.CreateApp(ctx, &edgeproto.CreateAppRequest{App: &edgeproto.App{Key: &edgeproto.AppKey{Organization: "dev", Name: "after"},
			Deployment: "docker", ImagePath: "example/app"}})
		if lastErr != nil && status.Code(lastErr) != codes.ResourceExhausted {
			t.Fatalf("a create after the deletes: %v", lastErr)
		}
		return lastErr == nil
	})
	if g := alarmGauge(); g != "0" {
		t.Errorf("the NOSPACE gauge after a create succeeded: %q, want 0", g)
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

// metricValue returns the value of an unlabelled metric on a /metrics page.
func metricValue(t *testing.T, metricsURL, name string) string {
	t.Helper()
	for _, line := range strings.Split(httpGet(t, http.DefaultClient, metricsURL), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			return v
		}
	}
	return ""
}

// A store nearly full (95% of its quota) refuses the API's writes that add
// data before etcd's NOSPACE alarm refuses every write: the request to
// delete an object with a lifecycle (itself a write) still goes through.
// Once the data is deleted, writes work again.
func TestStoreNearlyFullStillTakesDeletes(t *testing.T) {
	t.Parallel()
	const quota = 8 << 20
	run, _ := startController(t, controller.Options{DataDir: filepath.Join(t.TempDir(), "data"), Region: "r", Listen: "127.0.0.1:0",
		MetricsListen: "127.0.0.1:0", EtcdQuotaBytes: quota, SpaceCheckInterval: 20 * time.Millisecond, StopTimeout: 2 * time.Second})
	tok, err := os.ReadFile(run.AdminTokenFile)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient(run.Addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithPerRPCCredentials(controllertest.BearerToken(strings.TrimSpace(string(tok)))))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	api := clientsOf(conn)
	// Filling the store in steps, and its recovery (a defragmentation at
	// most every 30 s), take longer than testCtx allows on a loaded machine.
	ctx := fillCtx(t)
	metrics := "http://" + run.MetricsAddr + "/metrics"
	cl := &edgeproto.CloudletKey{Organization: "op", Name: "edge"}
	if _, err := drain(api.cloudlets.CreateCloudlet(ctx, &edgeproto.CreateCloudletRequest{NoWait: true,
		Cloudlet: &edgeproto.Cloudlet{Key: cl, PlatformType: "fake"}})); err != nil {
		t.Fatal(err)
	}

	// Fill etcd beside the controller in small steps, letting the
	// controller see each one, until it refuses a create for being nearly
	// full. (Its first compaction and defragmentation there may give room
	// back: then go on.)
	cli, err := etcd.NewClient(etcd.ClientConfig{Endpoints: run.EtcdEndpoints})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	val := strings.Repeat("x", 32<<10)
	for i := 0; ; i++ {
		if i == 1000 {
			t.Fatal("1000 writes of 32 KiB did not fill an 8 MiB quota")
		}
		if _, err := cli.Put(ctx, fmt.Sprintf("/filler/%04d", i), val); err != nil {
			t.Fatalf("filler %d: %v", i, err)
		}
		controllertest.WaitFor(t, 30*time.Second, "the controller to see the database's size", func() bool {
			st, err := cli.Status(ctx, run.EtcdEndpoints[0])
			if err != nil {
				t.Fatal(err)
			}
			var seen float64
			_, _ = fmt.Sscan(metricValue(t, metrics, "edgekit_controller_store_db_size_bytes"), &seen)
			return seen == float64(st.DbSize)
		})
		if metricValue(t, metrics, "edgekit_controller_store_full") != "1" {
			continue
		}
		_, err = api.apps.CreateApp(ctx, &edgeproto.CreateAppRequest{App: &edgeproto.App{
			Key: &edgeproto.AppKey{Organization: "dev", Name: fmt.Sprintf("a%04d", i)}, Deployment: "docker", ImagePath: "example/app"}})
		if err == nil {
			continue
		}
		if status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "nearly full") {
			t.Fatalf("a create into a nearly full store: %v; want ResourceExhausted saying the store is nearly full", err)
		}
		snap := pageSnapshot(t, "http://"+run.MetricsAddr, strings.TrimSpace(string(tok)))
		if strings.Contains(snap, "NEARLY_FULL") {
			break
		}
		if metricValue(t, metrics, "edgekit_controller_store_full") != "0" {
			t.Fatalf("the status page does not show the store nearly full: %s", snap)
		}
		// The defragmentation that followed gave room back meanwhile.
	}
	if v := metricValue(t, metrics, "edgekit_controller_store_nospace_alarm"); v != "0" {
		t.Fatalf("the NOSPACE alarm is on (%s): the controller did not stop writes before etcd did", v)
	}

	if _, err := drain(api.cloudlets.DeleteCloudlet(ctx, &edgeproto.DeleteCloudletRequest{Key: cl, NoWait: true,
		CrmOverride: edgeproto.CRMOverride_CRM_OVERRIDE_IGNORE_TRANSIENT_STATE})); err != nil {
		t.Fatalf("a request to delete a cloudlet from a nearly full store: %v", err)
	}
	got, err := recvAll(api.cloudlets.ShowCloudlets(ctx, &edgeproto.ShowCloudletsRequest{}))
	if err != nil || len(got) != 1 || got[0].(*edgeproto.Cloudlet).GetState() != edgeproto.TrackedState_TRACKED_STATE_DELETE_REQUESTED {
		t.Fatalf("show cloudlets of a nearly full store: %v, %v; want the cloudlet DELETE_REQUESTED", got, err)
	}

	if _, err := cli.Delete(ctx, "/filler/", clientv3.WithPrefix()); err != nil {
		t.Fatal(err)
	}
	controllertest.WaitFor(t, 60*time.Second, "the store to have room again", func() bool {
		return metricValue(t, metrics, "edgekit_controller_store_full") == "0"
	})
	if _, err := api.apps.CreateApp(ctx, &edgeproto.CreateAppRequest{App: &edgeproto.App{Key: &edgeproto.AppKey{Organization: "dev", Name: "a"},
		Deployment: "docker", ImagePath: "example/app"}}); err != nil {
		t.Fatalf("a create once the store has room: %v", err)
	}
}

// fillCtx bounds a test that fills the store and waits for it to recover.
func fillCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	t.Cleanup(cancel)
	return ctx
}
