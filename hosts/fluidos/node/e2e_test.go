package node_test

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/hosts/fluidos/node"
	"github.com/edgekit/edgekit/hosts/fluidos/nodetest"
	"github.com/edgekit/edgekit/internal/kvservice"
	"github.com/edgekit/edgekit/internal/testenv/logbuf"
	"github.com/edgekit/edgekit/platforms/local"
)

// kvPath is the edgekit-kv binary, built once by TestMain.
var kvPath string

func TestMain(m *testing.M) { os.Exit(nodetest.RunWithKV(m, &kvPath)) }

// localPlatform runs what a node sells as real processes, in a port range
// of its own.
func localPlatform(o *node.Options) {
	first := 12000 + rand.IntN(18000)
	o.PlatformType = local.PlatformType
	o.PlatformProperties = map[string]string{local.PropPortMin: strconv.Itoa(first), local.PropPortMax: strconv.Itoa(first + 499),
		local.PropPortRangeSize: "50", local.PropStopGrace: "3s"}
	o.Images = map[string]string{"kv": kvPath}
}

// httpDo sends a request with basic credentials and returns the status
// and the body (0 when nothing answers).
func httpDo(method, url, user, pass, body string) (int, string) {
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		return 0, err.Error()
	}
	if user != "" {
		req.SetBasicAuth(user, pass)
	}
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestEndToEndOnRealProcesses: over mutual TLS on loopback, alice buys a
// Service from bob and uses it with the credentials bob hands over, and
// buys a K8Slice from bob and runs an instance on it through her own API
// (bob's slice routes underneath), within the slice's quota; both are
// released, bob's flavors go back on sale, nothing bob started runs any
// more; the password alice chose, planted for the purpose, shows up in no
// log, no metric, nothing bob's API shows, and no file anyone else may
// read.
func TestEndToEndOnRealProcesses(t *testing.T) {
	t.Parallel()
	const planted = "planted-secret-7d1c0a"
	nw := nodetest.NewNetwork(t)
	var bobLogs, aliceLogs logbuf.Buffer
	debug := func(w io.Writer) *slog.Logger {
		return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	bobOpts := node.Options{NodeID: "bob", Capacity: capacity("amd64"), Blueprints: []*fluidos.ServiceBlueprint{kvservice.Blueprint("kv", 2)},
		MetricsListen: "127.0.0.1:0", Logger: debug(&bobLogs), DataDir: t.TempDir()}
	localPlatform(&bobOpts)
	bob := nw.Start(bobOpts)
	alice := nw.Start(node.Options{NodeID: "alice", Capacity: capacity("amd64"), Peers: []string{bob.RearAddr()},
		MetricsListen: "127.0.0.1:0", Logger: debug(&aliceLogs)})
	ctx := ctxT(t)

	// A Service, used with the credentials bob handed over.
	svc := solve(t, alice, allocate(kvSelector(), kvConfig(map[string]string{"username": "alice", "password": planted})))
	if svc.GetStatus().GetSolverPhase() != fluidos.Phase_PHASE_SOLVED {
		t.Fatalf("service solver ended %v", svc.GetStatus())
	}
	cr := credentials(t, alice, svc.GetStatus().GetAllocationId())
	if code, _ := httpDo(http.MethodPut, cr.GetEndpoint()+"/kv/greeting", cr.GetUsername(), cr.GetPassword(), "hello"); code != http.StatusNoContent {
		t.Fatalf("PUT to the service bought: %d", code)
	}
	if code, body := httpDo(http.MethodGet, cr.GetEndpoint()+"/kv/greeting", cr.GetUsername(), cr.GetPassword(), ""); code != http.StatusOK || body != "hello" {
		t.Errorf("GET from the service bought: %d %q", code, body)
	}
	if code, _ := httpDo(http.MethodGet, cr.GetEndpoint()+"/kv/greeting", cr.GetUsername(), "not-the-password", ""); code != http.StatusUnauthorized {
		t.Errorf("the service answers a wrong password with %d", code)
	}
	// The service dies: bob restarts it, and alice sees it.
	pids := nodetest.ProcessesUnder(bobOpts.DataDir)
	if len(pids) != 1 {
		t.Fatalf("bob runs %v for the service", pids)
	}
	if err := syscall.Kill(pids[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	alice.WaitAllocation(svc.GetStatus().GetAllocationId(), bought, 30*time.Second, "ACTIVE after a restart", func(a *fluidos.Allocation) bool {
		return a.GetStatus().GetRestarts() == 1 && a.GetStatus().GetState() == fluidos.AllocationState_ALLOCATION_STATE_ACTIVE
	})
	cr = credentials(t, alice, svc.GetStatus().GetAllocationId())
	if code, _ := httpDo(http.MethodPut, cr.GetEndpoint()+"/kv/greeting", cr.GetUsername(), cr.GetPassword(), "again"); code != http.StatusNoContent {
		t.Errorf("PUT to the restarted service: %d", code)
	}

	// A K8Slice, and an instance on it deployed from alice's side.
	sl := solve(t, alice, allocate(cpuAtLeast(1000), partition(1000, 512<<20, 2)))
	if sl.GetStatus().GetSolverPhase() != fluidos.Phase_PHASE_SOLVED || credentials(t, alice, sl.GetStatus().GetAllocationId()).GetToken() == "" {
		t.Fatalf("slice solver ended %v", sl.GetStatus())
	}
	cid := sl.GetStatus().GetContractId()
	dep, err := alice.Slices().DeploySliceInstance(ctx, &fluidos.DeploySliceInstanceRequest{ContractId: cid, Instance: &fluidos.SliceInstance{
		Name: "web", Image: "kv", Cpu: 500, Memory: 128 << 20, Env: map[string]string{"KV_PASSWORD": "slice-pass-99"},
		Ports: []*fluidos.SlicePort{{Port: 8080, Protocol: "http"}}, HealthCheckPath: "/healthz",
	}})
	if err != nil {
		t.Fatal(err)
	}
	in := dep.GetInstance()
	if in.GetStatus().GetState() != "READY" || !in.GetStatus().GetRunning() || len(in.GetPorts()) != 1 {
		t.Fatalf("instance on the slice: %v", in)
	}
	webURL := fmt.Sprintf("http://%s:%d", in.GetStatus().GetHost(), in.GetPorts()[0].GetPublicPort())
	if code, _ := httpDo(http.MethodPut, webURL+"/kv/x", "admin", "slice-pass-99", "1"); code != http.StatusNoContent {
		t.Errorf("reaching the instance on the slice: %d", code)
	}
	over, err := alice.Slices().DeploySliceInstance(ctx, &fluidos.DeploySliceInstanceRequest{ContractId: cid, Instance: &fluidos.SliceInstance{
		Name: "more", Image: "kv", Cpu: 600, Memory: 64 << 20, Env: map[string]string{"KV_PASSWORD": "slice-pass-98"}, Ports: []*fluidos.SlicePort{{Port: 8080}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if st := over.GetInstance().GetStatus(); st.GetState() != "CREATE_ERROR" || len(st.GetErrors()) == 0 || !strings.Contains(st.GetErrors()[0], "quota exceeded") {
		t.Errorf("an instance beyond the slice's CPU: %v", st)
	}

	// Both released: nothing of them is left at bob's.
	for _, s := range []*fluidos.Solver{svc, sl} {
		if _, err := alice.Solvers().DeleteSolver(ctx, &fluidos.DeleteSolverRequest{Id: s.GetId()}); err != nil {
			t.Fatal(err)
		}
		bob.WaitAllocation(nodetest.SoldID(s.GetStatus().GetAllocationId()), sold, 30*time.Second, "RELEASED", nodetest.InState(fluidos.AllocationState_ALLOCATION_STATE_RELEASED))
	}
	fl, err := bob.Flavors().ListFlavors(ctx, &fluidos.ListFlavorsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fl.GetFlavors() {
		if k := f.GetK8Slice(); k != nil && k.GetCharacteristics().GetCpu() != 4000 {
			t.Errorf("the slice is not back on sale: %v", k.GetCharacteristics())
		}
		if s := f.GetService(); s != nil && s.GetSoldInstances() != 0 {
			t.Errorf("the service is not back on sale: %v", s)
		}
	}
	if pids := nodetest.ProcessesUnder(bobOpts.DataDir); len(pids) != 0 {
		t.Errorf("processes bob started still run: %v", pids)
	}
	for _, url := range []string{cr.GetEndpoint(), webURL} {
		if code, _ := httpDo(http.MethodGet, url+"/healthz", "", "", ""); code != 0 {
			t.Errorf("%s still answers (%d) after its release", url, code)
		}
	}
	clusters, err := filepath.Glob(filepath.Join(bobOpts.DataDir, "platform", "cloudlets", "*", "clusters", "*"))
	if err != nil || len(clusters) != 0 {
		t.Errorf("cluster directories left: %v, %v", clusters, err)
	}

	// The planted secret.
	for who, logs := range map[string]string{"bob": bobLogs.String(), "alice": aliceLogs.String()} {
		if strings.Contains(logs, planted) {
			t.Errorf("%s's logs show the password", who)
		}
		if len(logs) == 0 {
			t.Errorf("%s logged nothing: the check is void", who)
		}
	}
	for who, n := range map[string]*nodetest.Node{"bob": bob, "alice": alice} {
		if code, body := httpDo(http.MethodGet, "http://"+n.Running().MetricsAddr+"/metrics", "", "", ""); code != http.StatusOK || strings.Contains(body, planted) {
			t.Errorf("%s's metrics: %d, password shown: %v", who, code, strings.Contains(body, planted))
		}
	}
	shown := []string{}
	as, err := bob.Allocations().ListAllocations(ctx, &fluidos.ListAllocationsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := bob.Contracts().ListContracts(ctx, &fluidos.ListContractsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range [][]byte{mustJSON(t, as), mustJSON(t, cs)} {
		shown = append(shown, string(b))
	}
	if strings.Contains(strings.Join(shown, "\n"), planted) {
		t.Error("bob's API shows the buyer's password")
	}
	// The stores hold it sealed (encrypted at rest): no file under either
	// node's data directory holds it in clear, etcd's own files included.
	etcdFiles := 0
	for _, dir := range []string{bobOpts.DataDir, alice.Options().DataDir} {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			fi, err := d.Info()
			if err != nil || fi.Size() > 256<<20 {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if strings.Contains(path, string(filepath.Separator)+"etcd"+string(filepath.Separator)) && fi.Size() > 0 {
				etcdFiles++
			}
			if bytes.Contains(b, []byte(planted)) {
				t.Errorf("%s holds the password in clear", path)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if etcdFiles == 0 {
		t.Error("the search read no file of etcd's: it is void")
	}
}

func mustJSON(t *testing.T, m proto.Message) []byte {
	t.Helper()
	b, err := protojson.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
