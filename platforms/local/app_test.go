package local

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
)

func TestCreateAppWithHTTPHealthCheck(t *testing.T) {
	e := newEnv(t)
	e.createCluster(e.cluster)
	inst := e.newInst("a1")
	var pr steps
	rt, err := e.p.CreateAppInst(e.ctx(), e.cluster, newApp(), inst, e.res, &pr)
	if err != nil {
		t.Fatal(err)
	}
	if len(rt.Pids) != 1 || len(rt.Ports) != 1 {
		t.Fatalf("runtime = %v, want one pid and one port", rt)
	}
	pid := int(rt.Pids[0])
	if !running(pid) {
		t.Fatalf("pid %d is not running", pid)
	}
	if code, body := httpGet(t, rt.Ports[0], "/healthz"); code != 200 || strings.TrimSpace(body) != "ok" {
		t.Fatalf("GET /healthz = %d %q", code, body)
	}
	if code, body := httpGet(t, rt.Ports[0], "/pid"); code != 200 || body != strconv.Itoa(pid) {
		t.Fatalf("GET /pid = %d %q, want %d", code, body, pid)
	}
	got := pr.list()
	for _, want := range []string{"Starting process", "Waiting for health check"} {
		if !slices.Contains(got, want) {
			t.Errorf("progress %q lacks %q", got, want)
		}
	}
	// Port inside the cluster's range, and reserved for the instance.
	rng := e.reserved(KindPortRange, clusterOwner(e.cluster.Key))
	if len(rng) != 1 {
		t.Fatalf("cluster range reservations = %v", rng)
	}
	r, err := parsePortRange(rng[0])
	if err != nil {
		t.Fatal(err)
	}
	if p := int(rt.Ports[0]); p < r.first || p > r.last {
		t.Errorf("port %d outside cluster range %s", p, r)
	}
	if got := e.reserved(KindPort, appOwner(inst.Key)); !slices.Equal(got, []string{strconv.Itoa(int(rt.Ports[0]))}) {
		t.Errorf("port reservations = %v, want [%d]", got, rt.Ports[0])
	}
	// Output captured in the app directory; the process works inside it.
	dir, err := e.appDir(inst)
	if err != nil {
		t.Fatal(err)
	}
	if n := countLines(t, filepath.Join(dir, stdoutLogFile), "listening on"); n != 1 {
		t.Errorf("stdout.log has %d start lines, want 1", n)
	}
	cwd, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "cwd"))
	if err != nil {
		t.Fatal(err)
	}
	if cwd != filepath.Join(dir, appWorkDir) {
		t.Errorf("process cwd = %s, want %s", cwd, filepath.Join(dir, appWorkDir))
	}
}

func TestEnvVarsAndPortsPassed(t *testing.T) {
	t.Setenv("LOCAL_PLATFORM_TEST_LEAK", "x")
	e := newEnv(t)
	e.createCluster(e.cluster)
	app := newApp("GREETING=hello world")
	app.EnvVars = append(app.EnvVars, &edgeproto.EnvVar{Name: "API_TOKEN", Secret: true, SecretValue: "s3cr3t-value"})
	app.Ports = append(app.Ports,
		&edgeproto.Port{Proto: edgeproto.PortProtocol_PORT_PROTOCOL_TCP, InternalPort: 9000},
		&edgeproto.Port{Proto: edgeproto.PortProtocol_PORT_PROTOCOL_UDP, InternalPort: 7000, EndPort: 7002},
	)
	inst := e.newInst("a1")
	rt := e.createApp(app, inst)
	if len(rt.Ports) != 5 {
		t.Fatalf("runtime ports = %v, want 5 (1 + 1 + a range of 3)", rt.Ports)
	}
	http := rt.Ports[0]
	for name, want := range map[string]string{
		"GREETING":      "hello world",
		"API_TOKEN":     "s3cr3t-value",
		"PORT":          strconv.Itoa(int(http)),
		"PORT_8080":     strconv.Itoa(int(http)),
		"PORT_9000":     strconv.Itoa(int(rt.Ports[1])),
		"PORT_7000":     strconv.Itoa(int(rt.Ports[2])),
		"PORT_7000_END": strconv.Itoa(int(rt.Ports[4])),
		"HOME":          "",
	} {
		code, got := httpGet(t, http, "/env?name="+name)
		if code != 200 {
			t.Errorf("%s: status %d", name, code)
			continue
		}
		if want != "" && got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	// Nothing of this process's environment leaks besides PATH.
	if code, _ := httpGet(t, http, "/env?name=LOCAL_PLATFORM_TEST_LEAK"); code != 404 {
		t.Errorf("engine environment leaked into the process")
	}
	for i := 1; i < len(rt.Ports); i++ {
		if rt.Ports[i] <= rt.Ports[i-1] {
			t.Errorf("ports not distinct and ordered: %v", rt.Ports)
		}
	}
	if rt.Ports[4]-rt.Ports[2] != 2 {
		t.Errorf("UDP range not consecutive: %v", rt.Ports)
	}
	mapped, err := e.p.MappedPorts(e.cluster, inst)
	if err != nil {
		t.Fatal(err)
	}
	if len(mapped) != 3 || mapped[0].PublicPort != int32(http) || mapped[1].InternalPort != 9000 ||
		mapped[1].PublicPort != int32(rt.Ports[1]) || mapped[2].EndPort != 7002 || mapped[2].PublicPort != int32(rt.Ports[2]) {
		t.Errorf("mapped ports = %v", mapped)
	}
	if inst.Uri != "127.0.0.1" || len(inst.MappedPorts) != 3 || inst.MappedPorts[1].PublicPort != int32(rt.Ports[1]) {
		t.Errorf("inst uri %q, mapped ports %v", inst.Uri, inst.MappedPorts)
	}
	// The secret is in no log and no state file.
	if strings.Contains(e.logs.String(), "s3cr3t-value") {
		t.Error("secret value logged")
	}
	_ = filepath.WalkDir(e.root, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if b, _ := os.ReadFile(path); strings.Contains(string(b), "s3cr3t-value") {
				t.Errorf("secret value stored in %s", path)
			}
		}
		return nil
	})
}

func TestAdoptAfterRestart(t *testing.T) {
	e := newEnv(t)
	e.createCluster(e.cluster)
	inst := e.newInst("a1")
	app := newApp()
	rt1 := e.createApp(app, inst)
	// A new engine process: new platform over the same root, and an
	// in-memory reservation store that starts empty.
	e.restart()
	e.res = executor.NewMemReservations()
	if err := e.p.CreateCluster(e.ctx(), e.cloudlet, e.cluster, e.res, nil); err != nil {
		t.Fatal(err)
	}
	var pr steps
	rt2, err := e.p.CreateAppInst(e.ctx(), e.cluster, app, inst, e.res, &pr)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rt1.Pids, rt2.Pids) || !slices.Equal(rt1.Ports, rt2.Ports) {
		t.Fatalf("runtime after restart = %v, want %v", rt2, rt1)
	}
	if slices.Contains(pr.list(), "Starting process") {
		t.Errorf("adoption started a process: %q", pr.list())
	}
	dir := e.mustAppDir(inst)
	if n := countLines(t, filepath.Join(dir, stdoutLogFile), "listening on"); n != 1 {
		t.Errorf("%d processes started, want 1", n)
	}
	if got := e.reserved(KindPort, appOwner(inst.Key)); len(got) != 1 || got[0] != strconv.Itoa(int(rt1.Ports[0])) {
		t.Errorf("ports not reserved again after restart: %v", got)
	}
	// The cluster kept its range too.
	if got := e.reserved(KindPortRange, clusterOwner(e.cluster.Key)); len(got) != 1 {
		t.Errorf("cluster range after restart = %v", got)
	}
}

// A process that was healthy once and hung while no engine ran is not
// adopted as READY: the create that finds it runs its health check again,
// and on failure stops it and fails.
func TestAdoptionChecksHealthAgain(t *testing.T) {
	e := newEnv(t)
	e.createCluster(e.cluster)
	inst := e.newInst("a1")
	app := newApp()
	rt := e.createApp(app, inst)
	pid := int(rt.Pids[0])
	if err := syscall.Kill(-pid, syscall.SIGSTOP); err != nil { // alive, answering nothing
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-pid, syscall.SIGCONT) })
	e.restart(withGrace(200 * time.Millisecond))
	ctx, cancel := context.WithTimeout(e.ctx(), 2*time.Second) // the health check's bound
	defer cancel()
	var pr steps
	_, err := e.p.CreateAppInst(ctx, e.cluster, app, inst, e.res, &pr)
	if err == nil || !strings.Contains(err.Error(), "health") {
		t.Fatalf("create adopting a hung process: %v, want a health check error", err)
	}
	if !slices.Contains(pr.list(), "Waiting for health check") {
		t.Errorf("progress = %q", pr.list())
	}
	waitFor(t, "the hung process to be stopped", 10*time.Second, func() bool { return !running(pid) })
}

func TestStaleRecordWithDeadPidRestarts(t *testing.T) {
	e := newEnv(t)
	e.createCluster(e.cluster)
	inst := e.newInst("a1")
	app := newApp()
	rt1 := e.createApp(app, inst)
	old := int(rt1.Pids[0])
	// The process dies while no engine runs.
	if err := syscall.Kill(-old, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "old process to die", 10*time.Second, func() bool { return !running(old) })

	e.restart()
	var pr steps
	rt2, err := e.p.CreateAppInst(e.ctx(), e.cluster, app, inst, e.res, &pr)
	if err != nil {
		t.Fatal(err)
	}
	if len(rt2.Pids) != 1 || int(rt2.Pids[0]) == old || !running(int(rt2.Pids[0])) {
		t.Fatalf("runtime = %v, want a new live pid (old %d)", rt2, old)
	}
	if !slices.Contains(pr.list(), "Cleaning up stale process record") {
		t.Errorf("progress = %q", pr.list())
	}
	if code, _ := httpGet(t, rt2.Ports[0], "/healthz"); code != 200 {
		t.Errorf("restarted process unhealthy: %d", code)
	}
}

// A record whose pid now belongs to another process (start time differs)
// is stale: that process is never signalled.
func TestReusedPidIsNeverSignalled(t *testing.T) {
	e := newEnv(t)
	e.createCluster(e.cluster)
	inst := e.newInst("a1")
	app := newApp()

	fpid, done := startForeign(t)
	pi, err := readProcStat(fpid)
	if err != nil {
		t.Fatal(err)
	}

	stale := appRecord{Format: stateFileFormat, Organization: "dev", Name: "a1", Phase: phaseReady, Launch: "x", Pid: fpid, StartTime: pi.startTime + 1, Ports: []int{}}
	e.writeAppRecord(inst, &stale)
	rt := e.createApp(app, inst)
	if int(rt.Pids[0]) == fpid {
		t.Fatal("adopted a process it did not start")
	}
	// Same with delete: put the foreign pid back in the record.
	e.writeAppRecord(inst, &stale)
	_ = syscall.Kill(-int(rt.Pids[0]), syscall.SIGKILL) // the record no longer names it
	if err := e.p.DeleteAppInst(e.ctx(), e.cluster, app, inst, e.res, nil); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
		t.Fatal("foreign process was signalled")
	default:
	}
	if !running(fpid) {
		t.Fatal("foreign process is gone")
	}
}

func TestDeleteHonoursSIGTERM(t *testing.T) {
	e := newEnv(t)
	e.createCluster(e.cluster)
	inst := e.newInst("a1")
	termFile := filepath.Join(t.TempDir(), "term")
	childFile := filepath.Join(t.TempDir(), "child")
	app := newApp("TESTAPP_TERM_FILE="+termFile, "TESTAPP_CHILD_PID_FILE="+childFile)
	rt := e.createApp(app, inst)
	pid := int(rt.Pids[0])
	child := readPidFile(t, childFile)
	var pr steps
	if err := e.p.DeleteAppInst(e.ctx(), e.cluster, app, inst, e.res, &pr); err != nil {
		t.Fatal(err)
	}
	if running(pid) || running(child) {
		t.Fatalf("process %d or its child %d still running", pid, child)
	}
	if b, err := os.ReadFile(termFile); err != nil || string(b) != "term" {
		t.Errorf("process did not see SIGTERM: %q %v", b, err)
	}
	if strings.Contains(e.logs.String(), "killed") {
		t.Errorf("SIGKILL used although the process honoured SIGTERM:\n%s", e.logs)
	}
	if !slices.Contains(pr.list(), "Stopping process") {
		t.Errorf("progress = %q", pr.list())
	}
	dir := e.mustAppDir(inst)
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("app directory left: %v", err)
	}
	if got := e.reserved(KindPort, appOwner(inst.Key)); len(got) != 0 {
		t.Errorf("ports still reserved: %v", got)
	}
}

func TestDeleteKillsAfterGrace(t *testing.T) {
	e := newEnv(t, withGrace(200*time.Millisecond))
	e.createCluster(e.cluster)
	inst := e.newInst("a1")
	childFile := filepath.Join(t.TempDir(), "child")
	app := newApp("TESTAPP_IGNORE_TERM=1", "TESTAPP_CHILD_PID_FILE="+childFile)
	rt := e.createApp(app, inst)
	pid := int(rt.Pids[0])
	child := readPidFile(t, childFile)
	if err := e.p.DeleteAppInst(e.ctx(), e.cluster, app, inst, e.res, nil); err != nil {
		t.Fatal(err)
	}
	if running(pid) || running(child) {
		t.Fatalf("process %d or its child %d survived", pid, child)
	}
	if !strings.Contains(e.logs.String(), "did not exit after SIGTERM; killed") {
		t.Errorf("no SIGKILL escalation logged:\n%s", e.logs)
	}
}

func TestStopProcessEscalation(t *testing.T) {
	for _, tc := range []struct {
		name   string
		env    []string
		result stopResult
	}{
		{"honours SIGTERM", nil, stopTerminated},
		{"ignores SIGTERM", []string{"TESTAPP_IGNORE_TERM=1"}, stopKilled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, withGrace(300*time.Millisecond))
			dir := t.TempDir()
			const mark = "c/k/i"
			s, err := startProcess(procSpec{
				path: testAppPath, env: append([]string{"PORT=0", MarkerEnv + "=" + e.p.marker("l1", mark)}, tc.env...), dir: dir,
				stdout: filepath.Join(dir, "out"), stderr: filepath.Join(dir, "err"),
			})
			if err != nil {
				t.Fatal(err)
			}
			// Wait until it handles signals (it listens after installing them).
			waitFor(t, "start", 10*time.Second, func() bool {
				b, _ := os.ReadFile(filepath.Join(dir, "out"))
				return strings.Contains(string(b), "listening")
			})
			got, err := e.p.stopMarked(context.Background(), mark, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.result {
				t.Errorf("result = %d, want %d", got, tc.result)
			}
			if alive(s.pid, s.startTime) {
				t.Error("still running")
			}
			// Stopping again does nothing.
			if got, err := e.p.stopMarked(context.Background(), mark, nil); err != nil || got != stopNotRunning {
				t.Errorf("second stop = %d, %v", got, err)
			}
		})
	}
}

func TestHealthCheckFailureCleansUp(t *testing.T) {
	e := newEnv(t)
	e.createCluster(e.cluster)
	inst := e.newInst("a1")
	pidFile := filepath.Join(t.TempDir(), "pid")
	app := newApp("TESTAPP_HEALTH=fail", "TESTAPP_PID_FILE="+pidFile)
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	_, err := e.p.CreateAppInst(ctx, e.cluster, app, inst, e.res, nil)
	if !errors.Is(err, ErrUnhealthy) {
		t.Fatalf("err = %v, want ErrUnhealthy", err)
	}
	var he *HealthCheckError
	if !errors.As(err, &he) || he.Check != "http" || he.Exited || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %#v", err)
	}
	pid := readPidFile(t, pidFile)
	if running(pid) {
		t.Fatalf("unhealthy process %d left running", pid)
	}
	if got := e.reserved(KindPort, appOwner(inst.Key)); len(got) != 0 {
		t.Errorf("ports still reserved: %v", got)
	}
	// The engine undoes with a delete, which succeeds.
	if err := e.p.DeleteAppInst(e.ctx(), e.cluster, app, inst, e.res, nil); err != nil {
		t.Fatal(err)
	}
}

func TestProcessExitingBeforeHealthy(t *testing.T) {
	e := newEnv(t)
	e.createCluster(e.cluster)
	inst := e.newInst("a1")
	_, err := e.p.CreateAppInst(e.ctx(), e.cluster, newApp("TESTAPP_EXIT=3"), inst, e.res, nil)
	var he *HealthCheckError
	if !errors.As(err, &he) || !he.Exited {
		t.Fatalf("err = %v, want a HealthCheckError for an exited process", err)
	}
	dir := e.mustAppDir(inst)
	if n := countLines(t, filepath.Join(dir, stderrLogFile), "exiting at once"); n != 1 {
		t.Errorf("stderr not captured")
	}
}

func TestCommandNotFound(t *testing.T) {
	e := newEnv(t)
	e.createCluster(e.cluster)
	inst := e.newInst("a1")
	app := newApp()
	app.Command = filepath.Join(t.TempDir(), "missing")
	_, err := e.p.CreateAppInst(e.ctx(), e.cluster, app, inst, e.res, nil)
	if !errors.Is(err, ErrStart) {
		t.Fatalf("err = %v, want ErrStart", err)
	}
	if got := e.reserved(KindPort, appOwner(inst.Key)); len(got) != 0 {
		t.Errorf("ports still reserved: %v", got)
	}
	app.Command = ""
	if _, err := e.p.CreateAppInst(e.ctx(), e.cluster, app, inst, e.res, nil); !errors.Is(err, ErrInvalidObject) {
		t.Fatalf("empty command: err = %v", err)
	}
}

func TestAppInMissingCluster(t *testing.T) {
	e := newEnv(t)
	_, err := e.p.CreateAppInst(e.ctx(), e.cluster, newApp(), e.newInst("a1"), e.res, nil)
	if !errors.Is(err, ErrClusterNotFound) {
		t.Fatalf("err = %v, want ErrClusterNotFound", err)
	}
}

func TestPowerOffAndOn(t *testing.T) {
	e := newEnv(t)
	e.createCluster(e.cluster)
	inst := e.newInst("a1")
	app := newApp()
	rt := e.createApp(app, inst)
	pid := int(rt.Pids[0])

	inst.PowerState = edgeproto.PowerState_POWER_STATE_POWER_OFF
	off, err := e.p.UpdateAppInst(e.ctx(), e.cluster, app, inst, e.res, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(off.Pids) != 0 || !slices.Equal(off.Ports, rt.Ports) || running(pid) {
		t.Fatalf("after power off: runtime %v, running %v", off, running(pid))
	}
	// Adopting a powered-off instance starts nothing.
	e.restart()
	if rt2, err := e.p.CreateAppInst(e.ctx(), e.cluster, app, inst, e.res, nil); err != nil || len(rt2.Pids) != 0 {
		t.Fatalf("create of a powered-off instance = %v, %v", rt2, err)
	}

	inst.PowerState = edgeproto.PowerState_POWER_STATE_POWER_ON
	var pr steps
	on, err := e.p.UpdateAppInst(e.ctx(), e.cluster, app, inst, e.res, &pr)
	if err != nil {
		t.Fatal(err)
	}
	if len(on.Pids) != 1 || int(on.Pids[0]) == pid || !running(int(on.Pids[0])) {
		t.Fatalf("after power on: %v", on)
	}
	if code, _ := httpGet(t, on.Ports[0], "/healthz"); code != 200 {
		t.Errorf("unhealthy after power on")
	}
	// An update with nothing changed keeps the process.
	same, err := e.p.UpdateAppInst(e.ctx(), e.cluster, app, inst, e.res, nil)
	if err != nil || !slices.Equal(same.Pids, on.Pids) {
		t.Fatalf("no-op update = %v, %v; want pid %v", same, err, on.Pids)
	}
	// Changing the environment restarts it with the new value.
	app.EnvVars = append(app.EnvVars, &edgeproto.EnvVar{Name: "MODE", Value: "two"})
	changed, err := e.p.UpdateAppInst(e.ctx(), e.cluster, app, inst, e.res, nil)
	if err != nil || slices.Equal(changed.Pids, on.Pids) {
		t.Fatalf("config update = %v, %v; want a new pid", changed, err)
	}
	if _, v := httpGet(t, changed.Ports[0], "/env?name=MODE"); v != "two" {
		t.Errorf("MODE = %q after update", v)
	}
}

func TestDeleteAbsentSucceeds(t *testing.T) {
	e := newEnv(t)
	ctx := e.ctx()
	if err := e.p.DeleteAppInst(ctx, e.cluster, newApp(), e.newInst("nope"), e.res, nil); err != nil {
		t.Errorf("DeleteAppInst: %v", err)
	}
	if err := e.p.DeleteCluster(ctx, e.cloudlet, e.cluster, e.res, nil); err != nil {
		t.Errorf("DeleteCluster: %v", err)
	}
	if err := e.p.CleanupCloudlet(ctx, e.cloudlet, nil); err != nil {
		t.Errorf("CleanupCloudlet: %v", err)
	}
	// Twice after a real create too.
	e.createCluster(e.cluster)
	inst := e.newInst("a1")
	if _, err := e.p.CreateAppInst(ctx, e.cluster, newApp(), inst, e.res, nil); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := e.p.DeleteAppInst(ctx, e.cluster, newApp(), inst, e.res, nil); err != nil {
			t.Fatal(err)
		}
	}
}
