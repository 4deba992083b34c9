package local

import (
	"context"
	"errors"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
)

// gate blocks an operation at one progress step until it is opened, and
// tells when the step was reached. Progress steps exist on every platform
// version, so the race below is set up the same way whatever the code.
type gate struct {
	at      string
	reached chan struct{}
	open    chan struct{}
	once    sync.Once
}

func newGate(at string) *gate {
	return &gate{at: at, reached: make(chan struct{}), open: make(chan struct{})}
}

func (g *gate) Step(msg string) {
	if msg != g.at {
		return
	}
	g.once.Do(func() { close(g.reached) })
	<-g.open
}

// TestClusterDeleteWaitsForAppCreate: a cluster delete that arrives while
// an application create on the cluster runs waits for it, then stops what
// it started: the instance never ends up running on a deleted cluster, and
// the delete never fails on a directory that is still being filled.
func TestClusterDeleteWaitsForAppCreate(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createCluster(e.cluster)
	inst := e.newInst("a1")
	var ev steps // the hook points passed, in order
	e.p.hook = ev.Step

	g := newGate("Starting process")
	var createErr, deleteErr error
	var rt *edgeproto.AppInstRuntime
	created, deleted := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(created)
		rt, createErr = e.p.CreateAppInst(e.ctx(), e.cluster, newApp(), inst, e.res, g)
	}()
	<-g.reached
	go func() {
		defer close(deleted)
		deleteErr = e.p.DeleteCluster(e.ctx(), e.cloudlet, e.cluster, e.res, nil)
	}()
	// The delete either waits for the cluster's lock or (as it used to)
	// goes ahead: let the create go on once one of the two is seen.
	cl, _ := e.p.clusterLoc(e.cluster)
	waitFor(t, "the delete to wait or finish", 10*time.Second, func() bool {
		select {
		case <-deleted:
			return true
		default:
		}
		e.p.locks.mu.Lock()
		defer e.p.locks.mu.Unlock()
		l := e.p.locks.m[cl.mark]
		return l != nil && l.waitingWriters > 0
	})
	close(g.open)
	<-created
	<-deleted
	if deleteErr != nil {
		t.Fatalf("cluster delete: %v", deleteErr)
	}
	if createErr == nil && running(int(rt.Pids[0])) {
		t.Fatalf("application %d runs on a cluster whose delete succeeded", rt.Pids[0])
	}
	if seq := ev.list(); createErr == nil && slices.Index(seq, hookClusterDeleting) < slices.Index(seq, hookAppRecorded) {
		t.Errorf("cluster delete started before the create finished: %v", seq)
	}
	checkNoneRunning(t, e.root)
	if _, err := os.Stat(cl.dir); !os.IsNotExist(err) {
		t.Errorf("cluster directory left: %v", err)
	}
}

// TestAppCreateOnClusterBeingDeletedFails: once a cluster delete started,
// an application create on it fails (and starts nothing), even when the
// delete was interrupted before it finished.
func TestAppCreateOnClusterBeingDeletedFails(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createCluster(e.cluster)
	// An interrupted delete: the cluster is marked, nothing else done.
	e.p.hook = func(point string) {
		if point == hookClusterDeleting {
			panic(errInterrupted)
		}
	}
	func() {
		defer func() {
			if r := recover(); r != errInterrupted {
				panic(r)
			}
		}()
		_ = e.p.DeleteCluster(e.ctx(), e.cloudlet, e.cluster, e.res, nil)
	}()
	e.p.hook = nil
	e.restart()
	_, err := e.p.CreateAppInst(e.ctx(), e.cluster, newApp(), e.newInst("a1"), e.res, nil)
	if !errors.Is(err, ErrClusterNotFound) {
		t.Fatalf("create on a cluster being deleted: %v, want ErrClusterNotFound", err)
	}
	checkNoneRunning(t, e.root)
	// The delete, re-run, finishes.
	if err := e.p.DeleteCluster(e.ctx(), e.cloudlet, e.cluster, e.res, nil); err != nil {
		t.Fatal(err)
	}
}

// errInterrupted stands for a crash at a hook point, in process.
var errInterrupted = errors.New("interrupted")

// TestLockWaitEndsWithContext: an operation waiting for a lock gives up
// when its context ends.
func TestLockWaitEndsWithContext(t *testing.T) {
	t.Parallel()
	var lt lockTable
	unlock, err := lt.lockPath(context.Background(), []string{"a"}, "a/b")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := lt.lockPath(ctx, nil, "a"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("lock of a held ancestor: %v, want DeadlineExceeded", err)
	}
	unlock()
	u2, err := lt.lockPath(context.Background(), nil, "a")
	if err != nil {
		t.Fatal(err)
	}
	u2()
	lt.mu.Lock()
	defer lt.mu.Unlock()
	if len(lt.m) != 0 {
		t.Errorf("lock entries left: %v", lt.m)
	}
}
