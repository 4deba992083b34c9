package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/hosts/controller/controllertest"
	"github.com/edgekit/edgekit/internal/testenv/freeport"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/protobuf/encoding/protojson"
)

// region is a controller process and a CRM process on the local platform,
// with the API clients of an admin, an operator and a developer.
type region struct {
	t                       *testing.T
	bin                     binaries
	addr, dataDir, stateDir string
	keyFile, pidDir         string
	controller, crm         *proc
	admin                   string
	cloudlets               edgeproto.CloudletServiceClient
	clusters                edgeproto.ClusterInstServiceClient
	apps                    edgeproto.AppServiceClient
	appInsts                edgeproto.AppInstServiceClient
	flavors                 edgeproto.FlavorServiceClient
	site                    *edgeproto.CloudletKey
}

func (r *region) startController() {
	r.t.Helper()
	r.controller = start(r.t, "controller", r.bin.controller, "--data-dir", r.dataDir, "--listen", r.addr,
		"--metrics-listen", "", "--notify-keepalive", "300ms", "--log-level", "debug")
	conn, err := grpc.NewClient(r.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		r.t.Fatal(err)
	}
	defer conn.Close()
	controllertest.WaitFor(r.t, 30*time.Second, "the controller to serve", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
		return err == nil && resp.GetStatus() == healthpb.HealthCheckResponse_SERVING
	})
}

// edgectl runs the real edgectl against the controller as admin and
// returns its output; a failure fails the test.
func (r *region) edgectl(args ...string) string {
	r.t.Helper()
	cmd := exec.Command(r.bin.edgectl, append([]string{"--addr", r.addr, "--token-file", filepath.Join(r.dataDir, "admin.token"),
		"--insecure", "--timeout", "60s"}, args...)...)
	cmd.Env = append(os.Environ(), "EDGECTL_CONFIG="+filepath.Join(r.dataDir, "edgectl.yaml"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("edgectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func (r *region) startCRM() {
	r.t.Helper()
	r.crm = start(r.t, "crm", r.bin.crm, "--controller", r.addr, "--cloudlet", "operator/edge1", "--access-key-file", r.keyFile,
		"--platform", "local", "--state-dir", r.stateDir, "--metrics-listen", "", "--stop-timeout", "10s", "--log-level", "debug")
}

func (r *region) client(token string) *grpc.ClientConn {
	conn, err := grpc.NewClient(r.addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithPerRPCCredentials(controllertest.BearerToken(token)))
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { _ = conn.Close() })
	return conn
}

func newRegion(t *testing.T) *region {
	r := &region{t: t, bin: build(t), addr: freeport.Addr(t), dataDir: t.TempDir(), stateDir: t.TempDir(), pidDir: t.TempDir(),
		site: &edgeproto.CloudletKey{Organization: "operator", Name: "edge1"}}
	t.Cleanup(func() { killApps(r.pidDir, r.bin.webapp) }) // after the CRM stopped
	r.startController()
	tok, err := os.ReadFile(filepath.Join(r.dataDir, "admin.token"))
	if err != nil {
		t.Fatal(err)
	}
	r.admin = strings.TrimSpace(string(tok))
	conn := r.client(r.admin)
	r.cloudlets, r.clusters = edgeproto.NewCloudletServiceClient(conn), edgeproto.NewClusterInstServiceClient(conn)
	r.apps, r.appInsts = edgeproto.NewAppServiceClient(conn), edgeproto.NewAppInstServiceClient(conn)
	r.flavors = edgeproto.NewFlavorServiceClient(conn)
	return r
}

func (r *region) show(key *edgeproto.AppInstKey) *edgeproto.AppInst {
	s, err := r.appInsts.ShowAppInsts(context.Background(), &edgeproto.ShowAppInstsRequest{Filter: &edgeproto.AppInst{Key: key}})
	if err != nil {
		r.t.Fatal(err)
	}
	for {
		resp, err := s.Recv()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			r.t.Fatal(err)
		}
		if resp.GetAppInst().GetKey().GetName() == key.GetName() {
			return resp.GetAppInst()
		}
	}
}

func (r *region) waitInst(key *edgeproto.AppInstKey, want edgeproto.TrackedState) *edgeproto.AppInst {
	r.t.Helper()
	var last *edgeproto.AppInst
	controllertest.WaitFor(r.t, 40*time.Second, key.GetName()+" "+want.String(), func() bool {
		last = r.show(key)
		if want == edgeproto.TrackedState_TRACKED_STATE_DELETE_DONE {
			return last == nil
		}
		return last.GetState() == want
	})
	return last
}

// httpGet reads / of the app on port, waiting for it to answer: an
// instance adopted after a crash is reported READY by the local platform
// without its health check, so it may still be starting.
func httpGet(t *testing.T, port uint32) string {
	t.Helper()
	var body string
	controllertest.WaitFor(t, 10*time.Second, fmt.Sprintf("the app on port %d to answer", port), func() bool {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/", port))
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		body = string(b)
		return resp.StatusCode == http.StatusOK
	})
	return body
}

func (r *region) inst(name, app string) *edgeproto.AppInst {
	return &edgeproto.AppInst{Key: &edgeproto.AppInstKey{Organization: "developer", Name: name},
		AppKey:     &edgeproto.AppKey{Organization: "developer", Name: app, Version: "1"},
		ClusterKey: &edgeproto.ClusterKey{Organization: "developer", Name: "c1"}}
}

func (r *region) app(name string, delay time.Duration) *edgeproto.App {
	return &edgeproto.App{Key: &edgeproto.AppKey{Organization: "developer", Name: name, Version: "1"},
		ImageType: edgeproto.ImageType_IMAGE_TYPE_NONE, Deployment: "local", Command: r.bin.webapp,
		HealthCheck: edgeproto.HealthCheck_HEALTH_CHECK_HTTP, HealthCheckPath: "/healthz",
		Ports:   []*edgeproto.Port{{Proto: edgeproto.PortProtocol_PORT_PROTOCOL_HTTP, InternalPort: 8080}},
		EnvVars: []*edgeproto.EnvVar{{Name: "WEBAPP_PID_DIR", Value: r.pidDir}, {Name: "WEBAPP_READY_DELAY", Value: delay.String()}}}
}

// oneProcess checks that instance ai runs exactly one process, the one the
// controller shows, answering HTTP, and that it ever had at most starts
// processes (the others stopped: a CRM killed between the start of a
// process and the record of it leaves one the platform stops and starts
// again when it resumes the create).
func (r *region) oneProcess(ai *edgeproto.AppInst, starts int) {
	r.t.Helper()
	name := ai.GetKey().GetName()
	pids := appPids(r.t, r.pidDir, "developer."+name)
	var running []int
	for _, pid := range pids {
		if alive(pid, r.bin.webapp) {
			running = append(running, pid)
		}
	}
	if len(pids) == 0 || len(pids) > starts || len(running) != 1 {
		r.t.Fatalf("%s: processes %v started, %v running; want at most %d started and one running", name, pids, running, starts)
	}
	if got := ai.GetRuntimeInfo().GetPids(); len(got) != 1 || int(got[0]) != running[0] {
		r.t.Fatalf("%s: runtime pids %v, running %v", name, got, running)
	}
	if body := httpGet(r.t, ai.GetRuntimeInfo().GetPorts()[0]); body != fmt.Sprintf("hello from %d", running[0]) {
		r.t.Fatalf("%s answers %q", name, body)
	}
}

// TestEndToEnd runs the controller and the crm as processes, the CRM on
// the local platform deploying a real web app, through a lifecycle and
// the faults a site lives through: the CRM killed mid-create, the
// controller restarted mid-create, objects changed while the CRM is down.
func TestEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the controller, the crm and a web app")
	}
	began := time.Now()
	phase := func(what string) { t.Logf("%6.2fs %s", time.Since(began).Seconds(), what) }
	r := newRegion(t)
	phase("controller up")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	// An operator's edge site, created with edgectl: the access key is
	// shown once.
	r.edgectl("create", "flavor", "local.small", "--vcpus", "1", "--ram-mb", "2048", "--disk-gb", "10")
	out := r.edgectl("create", "cloudlet", "edge1", "--key.organization", "operator", "--platform-type", "local", "--crm-on-edge", "--no-wait")
	_, key, ok := strings.Cut(out, "crm_access_key: ")
	key, _, _ = strings.Cut(key, "\n")
	if !ok || strings.TrimSpace(key) == "" {
		t.Fatalf("edgectl printed no access key:\n%s", out)
	}
	r.keyFile = filepath.Join(t.TempDir(), "edge1.key")
	if err := os.WriteFile(r.keyFile, []byte(strings.TrimSpace(key)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r.startCRM()
	controllertest.WaitFor(t, 30*time.Second, "the cloudlet READY", func() bool {
		s, err := r.cloudlets.ShowCloudlets(ctx, &edgeproto.ShowCloudletsRequest{Filter: &edgeproto.Cloudlet{Key: r.site}})
		if err != nil {
			return false
		}
		c, err := s.Recv()
		return err == nil && c.GetCloudlet().GetState() == edgeproto.TrackedState_TRACKED_STATE_READY
	})

	// A cluster and an app with edgectl, which shows the CRM's progress
	// as it comes (one line per message when not on a terminal).
	phase("cloudlet READY")
	out = r.edgectl("create", "cluster", "c1", "--key.organization", "developer", "--cloudlet-key.organization", "operator",
		"--cloudlet-key.name", "edge1", "--flavor-name", "local.small", "--deployment", "local")
	if !strings.Contains(out, "CREATING  Creating ClusterInst") || !strings.Contains(out, "READY") {
		t.Errorf("edgectl create cluster shows no progress from the CRM:\n%s", out)
	}
	appFile := filepath.Join(t.TempDir(), "web.json")
	b, err := protojson.Marshal(r.app("web", 0))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(appFile, b, 0o600); err != nil {
		t.Fatal(err)
	}
	r.edgectl("create", "app", "-f", appFile)
	if _, err := r.apps.CreateApp(ctx, &edgeproto.CreateAppRequest{App: r.app("slow", 2*time.Second)}); err != nil {
		t.Fatal(err)
	}
	out = r.edgectl("create", "appinst", "i1", "--key.organization", "developer", "--app-key.organization", "developer",
		"--app-key.name", "web", "--app-key.version", "1", "--cluster-key.organization", "developer", "--cluster-key.name", "c1")
	t.Logf("edgectl create appinst:\n%s", out)
	for _, want := range []string{"Creating AppInst", "Starting process", "Waiting for health check", "READY"} {
		if !strings.Contains(out, want) {
			t.Errorf("edgectl create appinst output lacks %q:\n%s", want, out)
		}
	}
	r.oneProcess(r.show(r.inst("i1", "").Key), 1)
	out = r.edgectl("update", "appinst", "i1", "--key.organization", "developer", "--annotations", "team=blue")
	if !strings.Contains(out, "Updating AppInst") {
		t.Errorf("edgectl update appinst output lacks the CRM's task:\n%s", out)
	}
	if got := r.show(r.inst("i1", "").Key).GetAnnotations()["team"]; got != "blue" {
		t.Errorf("annotation after the update: %q", got)
	}

	phase("lifecycle done")
	// kill -9 of the CRM in the middle of a create, then a new CRM: the
	// create ends READY with the process the first CRM started.
	if _, err := controllertest.Drain(r.appInsts.CreateAppInst(ctx, &edgeproto.CreateAppInstRequest{AppInst: r.inst("i2", "slow"), NoWait: true})); err != nil {
		t.Fatal(err)
	}
	r.waitInst(r.inst("i2", "").Key, edgeproto.TrackedState_TRACKED_STATE_CREATING)
	r.crm.kill()
	r.startCRM()
	r.oneProcess(r.waitInst(r.inst("i2", "").Key, edgeproto.TrackedState_TRACKED_STATE_READY), 2)

	phase("kill -9 case done")
	// The controller stops in the middle of a create and comes back: the
	// CRM finishes, reconnects and delivers its reports.
	if _, err := controllertest.Drain(r.appInsts.CreateAppInst(ctx, &edgeproto.CreateAppInstRequest{AppInst: r.inst("i3", "slow"), NoWait: true})); err != nil {
		t.Fatal(err)
	}
	r.waitInst(r.inst("i3", "").Key, edgeproto.TrackedState_TRACKED_STATE_CREATING)
	r.controller.stop(15 * time.Second)
	if code := r.controller.exitCode(); code != 0 {
		t.Errorf("controller exited with %d after SIGTERM", code)
	}
	r.startController()
	r.oneProcess(r.waitInst(r.inst("i3", "").Key, edgeproto.TrackedState_TRACKED_STATE_READY), 1)

	phase("controller restart case done")
	// While the CRM is down, i1 is deleted and i4 asked for.
	r.crm.stop(15 * time.Second)
	if code := r.crm.exitCode(); code != 0 {
		t.Errorf("crm exited with %d after SIGTERM", code)
	}
	i1pid := appPids(t, r.pidDir, "developer.i1")[0]
	if _, err := controllertest.Drain(r.appInsts.DeleteAppInst(ctx, &edgeproto.DeleteAppInstRequest{Key: r.inst("i1", "").Key, NoWait: true})); err != nil {
		t.Fatal(err)
	}
	if _, err := controllertest.Drain(r.appInsts.CreateAppInst(ctx, &edgeproto.CreateAppInstRequest{AppInst: r.inst("i4", "web"), NoWait: true})); err != nil {
		t.Fatal(err)
	}
	r.startCRM()
	r.waitInst(r.inst("i1", "").Key, edgeproto.TrackedState_TRACKED_STATE_DELETE_DONE)
	if alive(i1pid, r.bin.webapp) {
		t.Errorf("i1's process %d outlived its delete", i1pid)
	}
	r.oneProcess(r.waitInst(r.inst("i4", "").Key, edgeproto.TrackedState_TRACKED_STATE_READY), 1)

	phase("changes-while-down case done")
	// Everything goes; no process is left.
	for _, n := range []string{"i2", "i3", "i4"} {
		pcs, err := controllertest.Drain(r.appInsts.DeleteAppInst(ctx, &edgeproto.DeleteAppInstRequest{Key: r.inst(n, "").Key}))
		if err != nil || controllertest.Final(pcs) != edgeproto.TrackedState_TRACKED_STATE_DELETE_DONE {
			t.Fatalf("delete %s: %v %v", n, pcs, err)
		}
	}
	for _, a := range []string{"web", "slow"} {
		if _, err := r.apps.DeleteApp(ctx, &edgeproto.DeleteAppRequest{Key: &edgeproto.AppKey{Organization: "developer", Name: a, Version: "1"}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, del := range [][]string{
		{"delete", "cluster", "c1", "--key.organization", "developer"},
		{"delete", "cloudlet", "edge1", "--key.organization", "operator"},
	} {
		if out := r.edgectl(del...); !strings.Contains(out, "DELETE_DONE") && !strings.Contains(out, "deleted") {
			t.Errorf("edgectl %s:\n%s", strings.Join(del, " "), out)
		}
	}
	ents, _ := os.ReadDir(r.pidDir)
	for _, e := range ents {
		i := strings.LastIndexByte(e.Name(), '.')
		var pid int
		fmt.Sscan(e.Name()[i+1:], &pid)
		if alive(pid, r.bin.webapp) {
			t.Errorf("process %s still runs after everything was deleted", e.Name())
		}
	}
	phase("all deleted")
}
