package local

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
)

// signals records the signals a platform would send, instead of sending
// them.
type signals struct {
	mu   sync.Mutex
	sent []int // pids, negative for groups
}

func (s *signals) hook(pid int, _ syscall.Signal) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sent = append(s.sent, pid)
	return nil
}

func (s *signals) list() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int(nil), s.sent...)
}

// TestPidOneIsNeverSignalled: a record naming pid 1 with pid 1's real
// start time (as a state file carried into a PID namespace whose pid 1
// leads its group could) makes the platform signal nothing: not pid 1,
// not its group, never kill(-1).
func TestPidOneIsNeverSignalled(t *testing.T) {
	t.Parallel()
	init, err := readProcStat(1)
	if err != nil {
		t.Skipf("pid 1 is not visible here: %v", err)
	}
	e := newEnv(t)
	var sig signals
	e.p.signalHook = sig.hook
	e.createCluster(e.cluster)
	inst := e.newInst("a1")
	exe, _ := procExe(1)
	e.writeAppRecord(inst, &appRecord{Format: stateFileFormat, Organization: "dev", Name: "a1", Phase: phaseReady, Created: true,
		Launch: "l", Pid: 1, StartTime: init.startTime, Exe: exe, BootID: bootID(), Ports: []int{}})
	if err := e.p.DeleteAppInst(e.ctx(), e.cluster, newApp(), inst, e.res, nil); err != nil {
		t.Fatal(err)
	}
	e.writeAppRecord(inst, &appRecord{Format: stateFileFormat, Organization: "dev", Name: "a1", Phase: phaseReady, Created: true,
		Launch: "l", Pid: 1, StartTime: init.startTime, Exe: exe, BootID: bootID(), Ports: []int{}})
	if err := e.p.DeleteCluster(e.ctx(), e.cloudlet, e.cluster, e.res, nil); err != nil {
		t.Fatal(err)
	}
	if got := sig.list(); len(got) != 0 {
		t.Fatalf("signals sent to %v", got)
	}
}

// pidNamespaceEnv marks the copy of the test binary that
// TestPidOneLeaderInNamespace runs as pid 1 of a new PID namespace.
const pidNamespaceEnv = "LOCAL_TEST_IN_PID_NAMESPACE"

// TestPidOneLeaderInNamespace reproduces the setting where a state file
// naming pid 1 did harm: a PID namespace whose pid 1 leads its process
// group, with an unrelated process in another session. The test binary
// runs itself as that pid 1 (through unshare and setsid; skipped where
// user and PID namespaces are not allowed); the delete must signal
// nothing, and the other session's process must live on. Signals inside
// the namespace cannot reach any process outside it.
func TestPidOneLeaderInNamespace(t *testing.T) {
	if os.Getenv(pidNamespaceEnv) != "" {
		pidOneScenario(t)
		return
	}
	t.Parallel()
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("no unshare command: cannot make a PID namespace")
	}
	cmd := exec.Command(unshare, "--user", "--map-root-user", "--pid", "--fork", "--mount-proc",
		"setsid", os.Args[0], "-test.run=^TestPidOneLeaderInNamespace$", "-test.v")
	cmd.Env = append(os.Environ(), pidNamespaceEnv+"=1", testAppEnv+"="+testAppPath)
	out, err := cmd.CombinedOutput()
	if err != nil && strings.Contains(string(out), "unshare failed") {
		t.Skipf("PID namespaces not allowed here: %s", strings.TrimSpace(string(out)))
	}
	if err != nil || !strings.Contains(string(out), "--- PASS: TestPidOneLeaderInNamespace") {
		t.Fatalf("in a PID namespace: %v\n%s", err, out)
	}
}

// pidOneScenario runs as pid 1, leader of its group, in its own PID
// namespace.
func pidOneScenario(t *testing.T) {
	if pi, err := readProcStat(1); os.Getpid() != 1 || err != nil || pi.pgrp != 1 {
		t.Fatalf("not pid 1 leading its group: pid %d, %+v, %v", os.Getpid(), pi, err)
	}
	bystander, done := startForeign(t)
	e := newEnv(t)
	e.createCluster(e.cluster)
	inst := e.newInst("a1")
	init, err := readProcStat(1)
	if err != nil {
		t.Fatal(err)
	}
	exe, _ := procExe(1)
	e.writeAppRecord(inst, &appRecord{Format: stateFileFormat, Organization: "dev", Name: "a1", Phase: phaseReady, Created: true,
		Launch: "l", Pid: 1, StartTime: init.startTime, Exe: exe, BootID: bootID(), Ports: []int{}})
	if !running(bystander) {
		t.Fatalf("process %d of another session did not start", bystander)
	}
	if err := e.p.DeleteAppInst(e.ctx(), e.cluster, newApp(), inst, e.res, nil); err != nil {
		t.Errorf("delete: %v", err)
	}
	select {
	case <-done:
		t.Fatalf("process %d of another session was killed by the delete", bystander)
	default:
	}
}

// TestGuardRefusesDangerousTargets: whatever the caller passes, the
// platform never signals pid 0, 1 or -1 (every process of the user), this
// program or its process group.
func TestGuardRefusesDangerousTargets(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var sig signals
	e.p.signalHook = sig.hook
	for _, pid := range []int{0, 1, -1, os.Getpid(), syscall.Getpgrp()} {
		if err := e.p.signalGroup(pid, syscall.SIGTERM); !errors.Is(err, errRefused) {
			t.Errorf("signalGroup(%d) = %v, want a refusal", pid, err)
		}
		if err := e.p.signalProcess(found{pid: pid}, syscall.SIGTERM); !errors.Is(err, errRefused) {
			t.Errorf("signalProcess(%d) = %v, want a refusal", pid, err)
		}
	}
	if got := sig.list(); len(got) != 0 {
		t.Fatalf("signals sent to %v", got)
	}
}

// startForeign starts a process of the test in its own session (as
// `setsid sleep` would be): it leads its group, like the platform's
// processes, but carries no marker.
func startForeign(t *testing.T) (pid int, done <-chan struct{}) {
	t.Helper()
	foreign := exec.Command(testAppPath)
	foreign.Env = []string{"TESTAPP_MODE=child"}
	foreign.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := foreign.Start(); err != nil {
		t.Fatal(err)
	}
	ch := make(chan struct{})
	go func() { _ = foreign.Wait(); close(ch) }()
	t.Cleanup(func() { _ = foreign.Process.Kill(); <-ch })
	return foreign.Process.Pid, ch
}

// TestForeignSessionLeaderIsNeverAdoptedOrSignalled: a record naming a
// live process of another session with its real start time and executable
// (a `setsid sleep` whose pid was written into a state file) is neither
// adopted nor signalled: create, update, delete, cluster delete and
// cloudlet cleanup fail with ErrNotOwned, and the process lives on.
func TestForeignSessionLeaderIsNeverAdoptedOrSignalled(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var sig signals
	e.p.signalHook = sig.hook
	e.createCluster(e.cluster)
	inst := e.newInst("a1")
	fpid, done := startForeign(t)
	pi, err := readProcStat(fpid)
	if err != nil {
		t.Fatal(err)
	}
	exe, err := procExe(fpid)
	if err != nil {
		t.Fatal(err)
	}
	e.writeAppRecord(inst, &appRecord{Format: stateFileFormat, Organization: "dev", Name: "a1", Phase: phaseReady, Created: true,
		Launch: "l", Pid: fpid, StartTime: pi.startTime, Exe: exe, BootID: bootID(), Ports: []int{}})

	app := newApp()
	if _, err := e.p.CreateAppInst(e.ctx(), e.cluster, app, inst, e.res, nil); !errors.Is(err, ErrNotOwned) {
		t.Errorf("create: %v, want ErrNotOwned", err)
	}
	if _, err := e.p.UpdateAppInst(e.ctx(), e.cluster, app, inst, e.res, nil); !errors.Is(err, ErrNotOwned) {
		t.Errorf("update: %v, want ErrNotOwned", err)
	}
	if err := e.p.DeleteAppInst(e.ctx(), e.cluster, app, inst, e.res, nil); !errors.Is(err, ErrNotOwned) {
		t.Errorf("delete: %v, want ErrNotOwned", err)
	}
	if err := e.p.DeleteCluster(e.ctx(), e.cloudlet, e.cluster, e.res, nil); !errors.Is(err, ErrNotOwned) {
		t.Errorf("cluster delete: %v, want ErrNotOwned", err)
	}
	if err := e.p.CleanupCloudlet(e.ctx(), e.cloudlet, nil); !errors.Is(err, ErrNotOwned) {
		t.Errorf("cloudlet cleanup: %v, want ErrNotOwned", err)
	}
	select {
	case <-done:
		t.Fatal("the foreign process ended")
	default:
	}
	if got := sig.list(); len(got) != 0 {
		t.Fatalf("signals sent to %v", got)
	}
	// The state directory is left for an operator to look at.
	if _, err := os.Stat(filepath.Join(e.mustAppDir(inst), appStateFile)); err != nil {
		t.Errorf("record removed: %v", err)
	}
}

// corruptions are the ways a state file is found broken.
var corruptions = map[string][]byte{
	"truncated": []byte(`{"format": 2, "organization": "dev", "na`),
	"garbage":   []byte("\x00\x01not json"),
	"empty":     {},
}

// TestUnreadableRecordDoesNotHideItsProcess: whether the instance, its
// cluster or its cloudlet is deleted, a broken state file is never a
// reason to report success while the process runs: its processes are
// found by their marker and stopped.
func TestUnreadableRecordDoesNotHideItsProcess(t *testing.T) {
	t.Parallel()
	for name, content := range corruptions {
		for _, del := range []string{"instance", "cluster", "cloudlet"} {
			t.Run(name+"/"+del, func(t *testing.T) {
				t.Parallel()
				e := newEnv(t)
				e.createCluster(e.cluster)
				inst := e.newInst("a1")
				rt := e.createApp(newApp(), inst)
				pid := int(rt.Pids[0])
				if err := os.WriteFile(filepath.Join(e.mustAppDir(inst), appStateFile), content, 0o600); err != nil {
					t.Fatal(err)
				}
				var err error
				switch del {
				case "instance":
					err = e.p.DeleteAppInst(e.ctx(), e.cluster, newApp(), inst, e.res, nil)
				case "cluster":
					err = e.p.DeleteCluster(e.ctx(), e.cloudlet, e.cluster, e.res, nil)
				default:
					err = e.p.CleanupCloudlet(e.ctx(), e.cloudlet, nil)
				}
				if err != nil {
					t.Fatal(err)
				}
				if running(pid) {
					t.Fatalf("delete of the %s succeeded while process %d runs", del, pid)
				}
				checkNoneRunning(t, e.root)
				if del != "cloudlet" { // a cloudlet cleanup gets no reservation store
					if got := e.reserved(KindPort, appOwner(inst.Key)); len(got) != 0 {
						t.Errorf("ports still reserved: %v", got)
					}
				}
			})
		}
	}
}

// TestUnreadableRecordFailsCreateNotList: a create that meets a broken
// record fails with an error naming the file (relative to the state
// directory), rather than acting as if nothing were there; a listing
// lists the instance as an unfinished create keyed from its directory
// (so that the engine's create reports it in error and its delete stops
// it), and logs the file.
func TestUnreadableRecordFailsCreateNotList(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createCluster(e.cluster)
	inst := e.newInst("a1")
	dir := e.mustAppDir(inst)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, appStateFile), corruptions["truncated"], 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := e.p.CreateAppInst(e.ctx(), e.cluster, newApp(), inst, e.res, nil)
	if !errors.Is(err, ErrState) {
		t.Fatalf("create: %v, want ErrState", err)
	}
	file := filepath.Join("apps", filepath.Base(dir), appStateFile)
	if !strings.Contains(err.Error(), file) || strings.Contains(err.Error(), e.root) {
		t.Errorf("error %q should name the state file relative to the state directory", err)
	}
	inv, err := e.p.ListInsts(e.ctx(), e.cloudlet)
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	if len(inv.AppInsts) != 1 || !inv.AppInsts[0].GetKey().Equal(inst.Key) || inv.AppInsts[0].GetState() != edgeproto.TrackedState_TRACKED_STATE_CREATING {
		t.Errorf("listed %v, want %v CREATING", inv.AppInsts, inst.Key)
	}
	if logs := e.logs.String(); !strings.Contains(logs, file) || strings.Contains(logs, e.root) {
		t.Errorf("the log should name the state file relative to the state directory:\n%s", logs)
	}
	checkNoneRunning(t, e.root)
}

// TestProcessWithoutRecordIsFound: a process of the platform whose state
// file is gone is still found by its marker: a create does not start a
// duplicate beside it, a delete stops it.
func TestProcessWithoutRecordIsFound(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createCluster(e.cluster)
	inst := e.newInst("a1")
	app := newApp()
	rt := e.createApp(app, inst)
	old := int(rt.Pids[0])
	if err := os.Remove(filepath.Join(e.mustAppDir(inst), appStateFile)); err != nil {
		t.Fatal(err)
	}
	rt2 := e.createApp(app, inst)
	if running(old) {
		t.Errorf("the unrecorded process %d runs beside the new one %d", old, rt2.Pids[0])
	}
	if n := len(markedProcs(t, e.root)); n != 1 {
		t.Errorf("%d processes run, want 1", n)
	}
	if err := os.Remove(filepath.Join(e.mustAppDir(inst), appStateFile)); err != nil {
		t.Fatal(err)
	}
	if err := e.p.DeleteAppInst(e.ctx(), e.cluster, app, inst, e.res, nil); err != nil {
		t.Fatal(err)
	}
	checkNoneRunning(t, e.root)
}

// TestMarkerCannotBeSetByApp: an App may not set the marker variable.
func TestMarkerCannotBeSetByApp(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createCluster(e.cluster)
	app := newApp(MarkerEnv + "=x")
	if _, err := e.p.CreateAppInst(e.ctx(), e.cluster, app, e.newInst("a1"), e.res, nil); !errors.Is(err, ErrInvalidObject) {
		t.Fatalf("create with %s set: %v, want ErrInvalidObject", MarkerEnv, err)
	}
	if _, err := New(Config{Root: t.TempDir(), InheritEnv: []string{MarkerEnv}}); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("InheritEnv with %s: %v, want ErrInvalidConfig", MarkerEnv, err)
	}
}

// execApp is an application whose command is a shell that execs the
// program doing the work, the way most wrapper scripts start a server.
// When fifo is set, the shell first waits for a line on it, so that a test
// decides when the exec happens (after the platform recorded the shell).
func execApp(fifo string, extraEnv ...string) *edgeproto.App {
	app := newApp(extraEnv...)
	app.Key.Name = "web-sh"
	script := `exec "$0"`
	if fifo != "" {
		script = `read line < "$EXEC_FIFO"; ` + script
		app.EnvVars = append(app.EnvVars, &edgeproto.EnvVar{Name: "EXEC_FIFO", Value: fifo})
	}
	app.Command, app.Args = "/bin/sh", []string{"-c", script, testAppPath}
	return app
}

// TestExecingAppIsOurs: an instance whose command execs another program
// (`/bin/sh -c 'exec server'`) keeps its pid, start time, group and
// marker, so it stays the platform's: a new engine adopts it rather than
// failing or starting a duplicate, and deleting the instance, its cluster
// or its cloudlet stops it.
func TestExecingAppIsOurs(t *testing.T) {
	t.Parallel()
	for _, del := range []string{"instance", "cluster", "cloudlet"} {
		t.Run(del, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.createCluster(e.cluster)
			inst := e.newInst("a1")
			fifo := filepath.Join(t.TempDir(), "exec")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			// The shell waits on the fifo: no health check, so the create
			// returns while the shell runs and is recorded as it.
			app := execApp(fifo, "TESTAPP_MODE=child")
			app.HealthCheck = edgeproto.HealthCheck_HEALTH_CHECK_NONE
			rt := e.createApp(app, inst)
			pid := int(rt.Pids[0])
			shell, err := procExe(pid)
			if err != nil {
				t.Fatal(err)
			}
			// The writer below blocks until a reader opens the fifo: if the
			// shell never does, opening it here at the end releases it.
			t.Cleanup(func() {
				if f, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
					_ = f.Close()
				}
			})
			go func() { // blocks until the shell opens the fifo to read
				if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
					_, _ = f.WriteString("go\n")
					_ = f.Close()
				}
			}()
			waitFor(t, "the shell to exec the application", 10*time.Second, func() bool {
				exe, err := procExe(pid)
				return err == nil && exe != shell
			})

			// A new engine adopts it: same pid, no duplicate.
			e.restart()
			rt2, err := e.p.CreateAppInst(e.ctx(), e.cluster, app, inst, e.res, nil)
			if err != nil {
				t.Fatalf("create again after the exec: %v", err)
			}
			if got := int(rt2.Pids[0]); got != pid {
				t.Errorf("create again started process %d, want the running %d adopted", got, pid)
			}
			if _, err := e.p.UpdateAppInst(e.ctx(), e.cluster, app, inst, e.res, nil); err != nil {
				t.Fatalf("update after the exec: %v", err)
			}
			inv, err := e.p.ListInsts(e.ctx(), e.cloudlet)
			if err != nil {
				t.Fatal(err)
			}
			if len(inv.AppInsts) != 1 || !slices.Equal(inv.AppInsts[0].GetRuntimeInfo().GetPids(), []int64{int64(pid)}) {
				t.Errorf("listed %v, want the instance with pid %d", inv.AppInsts, pid)
			}
			if n := len(markedProcs(t, e.root)); n != 1 {
				t.Errorf("%d processes run, want 1", n)
			}

			switch del {
			case "instance":
				err = e.p.DeleteAppInst(e.ctx(), e.cluster, app, inst, e.res, nil)
			case "cluster":
				err = e.p.DeleteCluster(e.ctx(), e.cloudlet, e.cluster, e.res, nil)
			default:
				err = e.p.CleanupCloudlet(e.ctx(), e.cloudlet, nil)
			}
			if err != nil {
				t.Fatalf("delete of the %s: %v", del, err)
			}
			if running(pid) {
				t.Errorf("process %d runs after the delete of its %s", pid, del)
			}
			checkNoneRunning(t, e.root)
		})
	}
}
