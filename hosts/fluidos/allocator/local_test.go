package allocator_test

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/fluidos/rear"
	"github.com/edgekit/edgekit/hosts/fluidos/allocator"
	"github.com/edgekit/edgekit/hosts/fluidos/nodetest"
	"github.com/edgekit/edgekit/hosts/fluidos/provider"
	"github.com/edgekit/edgekit/internal/store"
	"github.com/edgekit/edgekit/platforms/local"
)

// kvPath is the edgekit-kv binary, built once by TestMain.
var kvPath string

func TestMain(m *testing.M) { os.Exit(nodetest.RunWithKV(m, &kvPath)) }

// onLocal runs the allocator on the local platform (real processes), with
// the kv image, in a fresh state directory.
func onLocal(t testing.TB) envOption {
	root := t.TempDir()
	first := 12000 + rand.IntN(18000)
	p, err := local.New(local.Config{Root: root, PortMin: first, PortMax: first + 499, PortRangeSize: 50,
		HealthInterval: 20 * time.Millisecond, StopGrace: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return func(a *allocator.Config, _ *provider.Config) {
		a.Platform, a.Images, a.Probe = p, map[string]string{"kv": kvPath}, allocator.TCPProbe
	}
}

// kvDo calls the kv service at endpoint (http://host:port).
func kvDo(t *testing.T, method, endpoint, path, user, pass, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, endpoint+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth(user, pass)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

func TestServiceRunsAndIsRestartedWhenItDies(t *testing.T) {
	t.Parallel()
	e := newEnv(t, onLocal(t))
	ctx := ctxT(t)
	c := e.buy(provider.ServiceFlavorID(seller, "kv"), service(map[string]string{"username": "bob", "password": "kv-pass-1234"}))
	a := e.waitAllocation(c, "ACTIVE", state(fluidos.AllocationState_ALLOCATION_STATE_ACTIVE))
	cr := a.GetCredentials()
	if code, _ := kvDo(t, http.MethodPut, cr.GetEndpoint(), "/kv/k", cr.GetUsername(), cr.GetPassword(), "v1"); code != http.StatusNoContent {
		t.Fatalf("PUT with the delivered credentials: %d", code)
	}
	if code, _ := kvDo(t, http.MethodGet, cr.GetEndpoint(), "/kv/k", cr.GetUsername(), "wrong-password", ""); code != http.StatusUnauthorized {
		t.Errorf("GET with a wrong password: %d", code)
	}
	info, _, err := store.NewKind[*edgeproto.AppInstInfo](e.store).Get(ctx, a.GetResources().GetAppInst())
	if err != nil || len(info.GetRuntimeInfo().GetPids()) != 1 {
		t.Fatalf("runtime of the service: %v, %v", info.GetRuntimeInfo(), err)
	}
	pid := int(info.GetRuntimeInfo().GetPids()[0])
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	degraded := false
	a = e.waitAllocation(c, "ACTIVE again after a restart", func(a *fluidos.Allocation) bool {
		degraded = degraded || a.GetStatus().GetState() == fluidos.AllocationState_ALLOCATION_STATE_DEGRADED
		return a.GetStatus().GetRestarts() >= 1 && a.GetStatus().GetState() == fluidos.AllocationState_ALLOCATION_STATE_ACTIVE
	})
	if !degraded {
		t.Error("the allocation was never seen DEGRADED")
	}
	if a.GetStatus().GetRestarts() != 1 {
		t.Errorf("%d restarts, want 1", a.GetStatus().GetRestarts())
	}
	cr = a.GetCredentials()
	if code, body := kvDo(t, http.MethodGet, cr.GetEndpoint(), "/kv/", cr.GetUsername(), cr.GetPassword(), ""); code != http.StatusOK || body != "" {
		t.Errorf("the restarted service: %d %q (a new process starts empty)", code, body)
	}
	if _, err := e.prov.Release(ctx, "alice", c.GetId(), ""); err != nil {
		t.Fatal(err)
	}
	e.waitAllocation(c, "RELEASED", state(fluidos.AllocationState_ALLOCATION_STATE_RELEASED))
	info, _, err = store.NewKind[*edgeproto.AppInstInfo](e.store).Get(ctx, a.GetResources().GetAppInst())
	if err == nil {
		t.Errorf("the instance's info is left: %v", info)
	}
	if code, _ := tryGet(cr.GetEndpoint() + "/healthz"); code != 0 {
		t.Errorf("the service still answers after its release: %d", code)
	}
}

// tryGet is the status of a GET, 0 when nothing answers.
func tryGet(url string) (int, error) {
	resp, err := (&http.Client{Timeout: 2 * time.Second}).Get(url)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

func TestSliceRunsTheBuyersInstancesWithinItsQuota(t *testing.T) {
	t.Parallel()
	e := newEnv(t, onLocal(t))
	ctx := ctxT(t)
	c := e.buy(provider.K8SliceFlavorID(seller), slice(1000, 512<<20, 2))
	a := e.waitAllocation(c, "ACTIVE", state(fluidos.AllocationState_ALLOCATION_STATE_ACTIVE))
	srv := httptest.NewServer(e.alloc.SliceHandler(false))
	t.Cleanup(srv.Close)
	cr := a.GetCredentials()
	cr.Endpoint = strings.TrimPrefix(srv.URL, "http://") // the test's listener, not the node's REAR
	client := rear.NewClient(nil, 30*time.Second)
	s := rear.Slice{Credentials: cr}
	web := &fluidos.SliceInstance{Name: "web", Image: "kv", Cpu: 600, Memory: 128 << 20, Env: map[string]string{"KV_PASSWORD": "slice-pass-1"},
		Ports: []*fluidos.SlicePort{{Port: 8080, Protocol: "http"}}, HealthCheckPath: "/healthz"}
	got, err := client.SliceDeploy(ctx, s, web)
	if err != nil {
		t.Fatal(err)
	}
	if got.GetStatus().GetState() != "READY" || !got.GetStatus().GetRunning() || len(got.GetPorts()) != 1 || got.GetPorts()[0].GetPublicPort() == 0 {
		t.Fatalf("deployed instance %v", got)
	}
	url := fmt.Sprintf("http://%s:%d", got.GetStatus().GetHost(), got.GetPorts()[0].GetPublicPort())
	if code, _ := kvDo(t, http.MethodPut, url, "/kv/x", "admin", "slice-pass-1", "y"); code != http.StatusNoContent {
		t.Errorf("reaching the instance on the slice: %d", code)
	}
	big := &fluidos.SliceInstance{Name: "big", Image: "kv", Cpu: 600, Memory: 64 << 20, Env: map[string]string{"KV_PASSWORD": "slice-pass-2"},
		Ports: []*fluidos.SlicePort{{Port: 8080}}}
	got, err = client.SliceDeploy(ctx, s, big)
	if err != nil {
		t.Fatal(err)
	}
	if got.GetStatus().GetState() != "CREATE_ERROR" || len(got.GetStatus().GetErrors()) == 0 || !strings.Contains(got.GetStatus().GetErrors()[0], "quota") {
		t.Errorf("an instance beyond the slice's quota: %v", got.GetStatus())
	}
	list, err := client.SliceList(ctx, s)
	if err != nil || len(list) != 2 {
		t.Errorf("instances of the slice: %v, %v", list, err)
	}
	bad := rear.Slice{Credentials: &fluidos.PeeringTargetCredentials{Endpoint: cr.GetEndpoint(), ClusterId: cr.GetClusterId(), Token: "guess"}}
	if _, err := client.SliceGet(ctx, bad, "web"); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("a wrong token: %v", err)
	}
	if _, err := client.SliceDeploy(ctx, s, &fluidos.SliceInstance{Name: "evil", Image: "sh", Cpu: 1, Memory: 1}); err == nil || !strings.Contains(err.Error(), "catalog") {
		t.Errorf("an image outside the catalog: %v", err)
	}
	if got, err := client.SliceDelete(ctx, s, "big"); err != nil || got.GetStatus().GetState() != "DELETE_DONE" {
		t.Errorf("deleting an instance: %v, %v", got.GetStatus(), err)
	}

	if _, err := e.prov.Release(ctx, "alice", c.GetId(), ""); err != nil {
		t.Fatal(err)
	}
	e.waitAllocation(c, "RELEASED", state(fluidos.AllocationState_ALLOCATION_STATE_RELEASED))
	if code, _ := tryGet(url + "/healthz"); code != 0 {
		t.Errorf("the buyer's instance still answers after the slice's release: %d", code)
	}
	if _, err := client.SliceGet(ctx, s, "web"); err == nil || !strings.Contains(err.Error(), "410") {
		t.Errorf("a released slice: %v", err)
	}
	insts, _, _ := store.NewKind[*edgeproto.AppInst](e.store).List(context.Background())
	if len(insts) != 0 {
		t.Errorf("instances left in the store: %d", len(insts))
	}
}
