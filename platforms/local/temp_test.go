package local

import (
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// TestTempFilesOfInterruptedWritesAreRemoved: the temporary files that a
// kill between a record's write and its rename leaves (named as this
// version or an earlier one names them) are removed when their object is
// next touched: the key's when a platform opens the directory, the
// cloudlet's by its init, a cluster's by its create or update, an
// instance's by its create or update. Other files stay.
func TestTempFilesOfInterruptedWritesAreRemoved(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createCluster(e.cluster)
	inst := e.newInst("a1")
	app := newApp()
	pid := e.createApp(app, inst).Pids[0]

	clusterDir := filepath.Dir(filepath.Dir(e.mustAppDir(inst))) // .../clusters/<cluster>/apps/<inst>
	cloudletDir := filepath.Dir(filepath.Dir(clusterDir))        // .../cloudlets/<cloudlet>/clusters/<cluster>
	leftovers := []string{
		filepath.Join(e.root, ".key.tmp123456"),
		filepath.Join(cloudletDir, ".cloudlet.json.tmp2034117"),
		filepath.Join(clusterDir, ".cluster.json.tmp88"),
		filepath.Join(clusterDir, ".cluster.json.tmp0123456789abcdef.42"), // another platform's tag
		filepath.Join(e.mustAppDir(inst), ".state.json.tmp3141"),
	}
	kept := []string{
		filepath.Join(clusterDir, "notes.tmp"),
		filepath.Join(e.mustAppDir(inst), ".stdout.log.tmp1"),
	}
	for _, f := range append(append([]string{}, leftovers...), kept...) {
		if err := os.WriteFile(f, []byte(`{"format": 2, "organiz`), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	e.restart() // a new engine
	if err := e.p.InitCloudlet(e.ctx(), e.cloudlet, e.res, nil); err != nil {
		t.Fatal(err)
	}
	if err := e.p.CreateCluster(e.ctx(), e.cloudlet, e.cluster, e.res, nil); err != nil {
		t.Fatal(err)
	}
	rt := e.createApp(app, inst)
	if rt.Pids[0] != pid {
		t.Errorf("create after a restart started process %d, want %d adopted", rt.Pids[0], pid)
	}
	for _, f := range leftovers {
		if _, err := os.Stat(f); !os.IsNotExist(err) {
			t.Errorf("%s: left (%v)", e.p.rel(f), err)
		}
	}
	for _, f := range kept {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("%s was removed: %v", e.p.rel(f), err)
		}
	}
	checkNoTemps(t, e.root)
}

// TestTempFileOfAWriteInProgressIsKept: an init of a cloudlet runs beside
// another one, by another platform over the same directory (both hold the
// cloudlet's lock shared); the second one waits for the first one's
// record write, so the temporary file of that write is not taken for a
// leftover and the first one's rename succeeds.
func TestTempFileOfAWriteInProgressIsKept(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	other := e.newPlatform()
	t.Cleanup(func() { _ = other.Close() })
	reached, release := make(chan struct{}), make(chan struct{})
	var writes atomic.Int32
	e.p.hook = func(point string) {
		if point == hookTempWritten+cloudletFile && writes.Add(1) == 1 {
			close(reached)
			<-release
		}
	}
	first := make(chan error, 1)
	go func() { first <- e.p.InitCloudlet(e.ctx(), e.cloudlet, e.res, nil) }()
	<-reached
	second := make(chan error, 1)
	go func() { second <- other.InitCloudlet(e.ctx(), e.cloudlet, e.res, nil) }()
	// Release the first write once the second init waits for the
	// record's lock (or, were it not locked, once the second init ended).
	l, err := other.cloudletLoc(e.cloudlet.Key)
	if err != nil {
		t.Fatal(err)
	}
	waiting := func() bool {
		other.locks.mu.Lock()
		defer other.locks.mu.Unlock()
		return other.locks.m[l.mark+"#record"] != nil
	}
	var secondErr error
	secondDone := false
	deadline := time.Now().Add(20 * time.Second)
	for !waiting() && !secondDone && time.Now().Before(deadline) {
		select {
		case secondErr = <-second:
			secondDone = true
		case <-time.After(5 * time.Millisecond):
		}
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatalf("first init, whose write was in progress: %v", err)
	}
	if !secondDone {
		secondErr = <-second
	}
	if secondErr != nil {
		t.Errorf("second init: %v", secondErr)
	}
	checkNoTemps(t, e.root)
}
