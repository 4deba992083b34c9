package local

import (
	"encoding/json"
	"flag"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// chaosKills is how many engine processes TestKillAtRandomInstants kills;
// the default keeps the package's tests within seconds, raise it for a
// longer run: go test ./platforms/local -run KillAtRandom -local.chaos-kills=200
var chaosKills = flag.Int("local.chaos-kills", 4, "engine processes TestKillAtRandomInstants kills at random instants")

func newScenario(t *testing.T, instances int) scenario {
	t.Helper()
	root := t.TempDir()
	t.Cleanup(func() { killAll(t, root) })
	return scenario{root: root, ports: freePortRange(t, 4*testRangeSize), instances: instances}
}

// checkCreated checks what a converged create leaves: exactly one process
// per instance (no duplicate, no leftover of an interrupted start), the
// one its record names, and no temporary file of an interrupted write.
func checkCreated(t *testing.T, sc scenario) {
	t.Helper()
	checkNoTemps(t, sc.root)
	byInst := map[string][]int{}
	for pid, m := range markedProcs(t, sc.root) {
		_, mark, _ := strings.Cut(m, ":")
		byInst[mark] = append(byInst[mark], pid)
	}
	if len(byInst) != sc.instances {
		t.Errorf("processes of %d instances run, want %d: %v", len(byInst), sc.instances, byInst)
	}
	for mark, pids := range byInst {
		if len(pids) != 1 {
			t.Errorf("instance %s has %d processes %v: duplicates", mark, len(pids), pids)
			continue
		}
		parts := strings.Split(mark, "/")
		path := filepath.Join(sc.root, cloudletsDir, parts[0], clustersDir, parts[1], appsDir, parts[2], appStateFile)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("instance %s: %v", mark, err)
			continue
		}
		var rec appRecord
		if err := json.Unmarshal(b, &rec); err != nil || rec.Pid != pids[0] || rec.Phase != phaseReady {
			t.Errorf("instance %s: record %+v (%v) does not name its process %d as ready", mark, rec, err, pids[0])
		}
	}
}

// checkDeleted checks what a converged delete leaves: no process carrying
// a marker of the state directory (no orphan), no cloudlet directory.
func checkDeleted(t *testing.T, sc scenario) {
	t.Helper()
	checkNoneRunning(t, sc.root)
	if ents, err := os.ReadDir(filepath.Join(sc.root, cloudletsDir)); err == nil && len(ents) > 0 {
		t.Errorf("cloudlet directories left: %v", ents)
	}
}

// TestKillAtEachPoint kills a real engine process at each point where a
// crash used to leave a process unrecorded or a delete half done, re-runs
// the engine to convergence and checks there is no duplicate; then a
// delete leaves no orphan.
func TestKillAtEachPoint(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		op, point string
	}{
		{"create", hookClusterIntent},
		{"create", hookAppIntent},
		{"create", hookAppStarted},
		{"create", hookAppRecorded},
		{"delete", hookAppStopped},
		{"delete", hookClusterDeleting},
		// A kill between a record's temporary file and its rename.
		{"create", hookTempWritten + cloudletFile},
		{"create", hookTempWritten + clusterFile},
		{"create", hookTempWritten + appStateFile},
		{"delete", hookTempWritten + clusterFile},
	} {
		t.Run(tc.op+" at "+tc.point, func(t *testing.T) {
			t.Parallel()
			sc := newScenario(t, 2)
			if tc.op == "delete" {
				runEngine(t, sc, "create")
			}
			ep := startEngine(t, sc, tc.op, tc.point)
			ep.waitLine("paused")
			ep.kill()
			runEngine(t, sc, tc.op)
			if tc.op == "create" {
				checkCreated(t, sc)
				runEngine(t, sc, "delete")
			}
			checkDeleted(t, sc)
		})
	}
}

// TestKillAtRandomInstants kills a real engine process at random instants
// of creates and deletes (by pid, SIGKILL), re-runs the engine each time
// and checks that it converges with no duplicate after a create and no
// orphan after a delete.
func TestKillAtRandomInstants(t *testing.T) {
	t.Parallel()
	sc := newScenario(t, 3)
	// How long each scenario takes uninterrupted, from the engine's start:
	// kills land anywhere in it.
	took := map[string]time.Duration{}
	for _, op := range []string{"create", "delete"} {
		ep := startEngine(t, sc, op, "")
		ep.waitLine("ready")
		start := time.Now()
		if code := ep.exitCode(); code != engineOK {
			t.Fatalf("%s exited with %d:\n%s", op, code, ep.stderr)
		}
		took[op] = time.Since(start)
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 8))
	interrupted := 0
	op := "create"
	for i := range *chaosKills {
		d := time.Duration(rng.Int64N(int64(took[op]) + 1))
		ep := startEngine(t, sc, op, "")
		ep.waitLine("ready")
		timer := time.AfterFunc(d, ep.kill) // the random instant
		code := ep.exitCode()
		timer.Stop()
		if code != engineOK {
			interrupted++
		}
		runEngine(t, sc, op)
		if op == "create" {
			checkCreated(t, sc)
		} else {
			checkDeleted(t, sc)
		}
		if t.Failed() {
			t.Fatalf("kill %d, %s after %s", i+1, op, d)
		}
		op = map[string]string{"create": "delete", "delete": "create"}[op]
	}
	t.Logf("%d kills, %d of them before the operation finished (create takes %s, delete %s)", *chaosKills, interrupted, took["create"], took["delete"])
	if op == "delete" {
		runEngine(t, sc, "delete")
		checkDeleted(t, sc)
	}
}

// TestSecondEngineOnSameRoot: an engine process started on a state
// directory another engine uses runs beside it; while the first one is
// paused holding an instance's lock (its launch recorded, its process not
// started), the second one's create of that instance waits; once the
// first one is killed, the second one finishes the create with one
// process per instance.
func TestSecondEngineOnSameRoot(t *testing.T) {
	t.Parallel()
	sc := newScenario(t, 1)
	first := startEngine(t, sc, "create", hookAppIntent)
	first.waitLine("paused")
	second := startEngine(t, sc, "create", "")
	second.waitLine("ready")
	// The second engine must reach the instance and wait on its lock,
	// rather than print nothing because it never got there yet.
	second.waitLine("busy")
	if got := markedProcs(t, sc.root); len(got) != 0 {
		t.Fatalf("processes %v started while the first engine holds the instance's lock", got)
	}
	first.kill()
	if code := second.exitCode(); code != engineOK {
		t.Fatalf("second engine exited with %d, want %d:\n%s", code, engineOK, second.stderr)
	}
	checkCreated(t, sc)
	runEngine(t, sc, "delete")
	checkDeleted(t, sc)
}

// checkNoTemps fails the test when a temporary file of a record (or of
// the key) is left anywhere under root.
func checkNoTemps(t *testing.T, root string) {
	t.Helper()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		for _, n := range []string{cloudletFile, clusterFile, appStateFile, keyFileName} {
			if strings.HasPrefix(d.Name(), tempPrefix(n)) {
				t.Errorf("temporary file left: %s", path)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
