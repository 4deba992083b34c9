package executor_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/executor/mocks"
	"github.com/edgekit/edgekit/fieldmap"
	"github.com/edgekit/edgekit/platforms/fake"
	"go.uber.org/mock/gomock"
)

// fieldsAre matches a *fieldmap.FieldMap holding exactly flags.
type fieldsAre []string

func (f fieldsAre) Matches(x any) bool {
	fm, ok := x.(*fieldmap.FieldMap)
	if !ok || fm.Count() != len(f) {
		return false
	}
	for _, flag := range f {
		if _, ok := fm.Schema().Lookup(flag); !ok {
			return false
		}
		if !fm.Has(flag) {
			return false
		}
	}
	return true
}

func (f fieldsAre) String() string { return "fields " + strings.Join(f, " ") }

// TestReportsCarryExactlyTheirFlags checks every report of a create, in
// order, with a mock Sender.
func TestReportsCarryExactlyTheirFlags(t *testing.T) {
	ctrl := gomock.NewController(t)
	m := newMockPlatform(t)
	m.EXPECT().CreateCluster(anyCtx, anyV, anyV, anyV, anyV).DoAndReturn(
		func(_ context.Context, _ *edgeproto.Cloudlet, ci *edgeproto.ClusterInst, _ executor.Reservations, p executor.Progress) error {
			p.Step("Creating nodes")
			ci.Resources = &edgeproto.InfraResources{Vms: []*edgeproto.VmInfo{{Name: "n1"}}}
			return nil
		})
	sender := mocks.NewMockSender[*edgeproto.ClusterInstInfo](ctrl)
	state := func(want edgeproto.TrackedState) gomock.Matcher {
		return gomock.Cond(func(i *edgeproto.ClusterInstInfo) bool {
			return i.State == want && i.GetKey().GetName() == "c1"
		})
	}
	gomock.InOrder(
		sender.EXPECT().Send(anyCtx, state(edgeproto.TrackedState_TRACKED_STATE_CREATING), fieldsAre{
			edgeproto.ClusterInstInfoFieldKey, edgeproto.ClusterInstInfoFieldState,
			edgeproto.ClusterInstInfoFieldErrors, edgeproto.ClusterInstInfoFieldStatus,
		}).DoAndReturn(func(_ context.Context, i *edgeproto.ClusterInstInfo, _ *fieldmap.FieldMap) error {
			if i.GetStatus().GetTaskName() != "Creating ClusterInst" || i.GetStatus().GetTaskNumber() != 1 {
				t.Errorf("status %v", i.GetStatus())
			}
			return nil
		}),
		sender.EXPECT().Send(anyCtx, gomock.Cond(func(i *edgeproto.ClusterInstInfo) bool {
			return i.GetStatus().GetStepName() == "Creating nodes" && i.State == edgeproto.TrackedState_TRACKED_STATE_UNSPECIFIED
		}), fieldsAre{
			edgeproto.ClusterInstInfoFieldKey, edgeproto.ClusterInstInfoFieldStatusStepName,
			edgeproto.ClusterInstInfoFieldStatusMsgCount, edgeproto.ClusterInstInfoFieldStatusMsgs,
		}).Return(nil),
		sender.EXPECT().Send(anyCtx, state(edgeproto.TrackedState_TRACKED_STATE_READY), fieldsAre{
			edgeproto.ClusterInstInfoFieldKey, edgeproto.ClusterInstInfoFieldState,
			edgeproto.ClusterInstInfoFieldErrors, edgeproto.ClusterInstInfoFieldResources,
		}).Return(nil),
	)
	w := newWorld()
	w.cloudlets.Put(cloudlet(edgeproto.TrackedState_TRACKED_STATE_READY))
	cfg := w.config(m)
	cfg.ClusterInstInfos = sender
	eng, err := executor.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	start(t, eng)
	if err := wait(t, mustSubmit(t, eng, cluster("c1", edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED))); err != nil {
		t.Fatal(err)
	}
}

// TestCancellationReportsError stops the engine while the platform works:
// the platform sees its context end, the create is undone and reported as
// CREATE_ERROR, never READY.
func TestCancellationReportsError(t *testing.T) {
	m := newMockPlatform(t)
	entered := make(chan struct{})
	undoCtxErr := make(chan error, 1)
	gomock.InOrder(
		m.EXPECT().CreateCluster(anyCtx, anyV, anyV, anyV, anyV).DoAndReturn(
			func(ctx context.Context, _, _, _, _ any) error {
				close(entered)
				return blockUntilDone(ctx)
			}),
		m.EXPECT().DeleteCluster(anyCtx, anyV, anyV, anyV, anyV).DoAndReturn(
			func(ctx context.Context, _, _, _, _ any) error {
				undoCtxErr <- ctx.Err()
				return nil
			}),
	)
	w := newWorld()
	w.cloudlets.Put(cloudlet(edgeproto.TrackedState_TRACKED_STATE_READY))
	eng, _ := executor.New(w.config(m))
	stop := start(t, eng)
	h := mustSubmit(t, eng, cluster("c1", edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED))
	<-entered
	stop()
	err := h.Err() // resolved: stop waited for Start to return
	if !errors.Is(err, executor.ErrCanceled) || !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want ErrCanceled wrapping context.Canceled", err)
	}
	if got := w.rec.states("ClusterInst", h.Key()); !equalStrings(got, []string{sCreating, sCreateError}) {
		t.Errorf("states = %v", got)
	}
	if e := <-undoCtxErr; e != nil {
		t.Errorf("undo ran with an ended context: %v", e)
	}
	if _, err := eng.Submit(cluster("c2", edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED)); !errors.Is(err, executor.ErrStopped) {
		t.Errorf("Submit after stop = %v, want ErrStopped", err)
	}
}

func equalStrings(a, b []string) bool { return strings.Join(a, ",") == strings.Join(b, ",") }

// TestSupersede queues two requests behind a running one for the same
// key: the older queued one is superseded and never reaches the platform.
func TestSupersede(t *testing.T) {
	p := fake.New(fake.Options{})
	w := newWorld()
	w.cloudlets.Put(cloudlet(edgeproto.TrackedState_TRACKED_STATE_READY))
	eng, _ := executor.New(w.config(p))
	start(t, eng)
	ck := executor.KeyString(clusterKey("c1"))
	gate := p.Pause(fake.OpCreateCluster, ck)
	create := mustSubmit(t, eng, cluster("c1", edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED))
	<-gate.Reached()
	update := mustSubmit(t, eng, cluster("c1", edgeproto.TrackedState_TRACKED_STATE_UPDATE_REQUESTED))
	del := mustSubmit(t, eng, cluster("c1", edgeproto.TrackedState_TRACKED_STATE_DELETE_REQUESTED))
	if err := wait(t, update); !errors.Is(err, executor.ErrSuperseded) {
		t.Fatalf("update: %v, want ErrSuperseded", err)
	}
	gate.Release()
	if err := wait(t, create); err != nil {
		t.Fatal(err)
	}
	if err := wait(t, del); err != nil {
		t.Fatal(err)
	}
	if n := p.Calls(fake.OpUpdateCluster, ""); n != 0 {
		t.Errorf("superseded update reached the platform %d times", n)
	}
	want := []string{sCreating, sReady, sDeleting, sDeleteDone}
	if got := w.rec.states("ClusterInst", ck); !equalStrings(got, want) {
		t.Errorf("states = %v, want %v", got, want)
	}
}

// TestIdempotentRerun re-runs a create (as after a crash) and a delete: the
// platform adopts and finds nothing, and no work is duplicated.
func TestIdempotentRerun(t *testing.T) {
	p := fake.New(fake.Options{})
	w := newWorld()
	w.cloudlets.Put(cloudlet(edgeproto.TrackedState_TRACKED_STATE_READY))
	eng, _ := executor.New(w.config(p))
	start(t, eng)
	ck := executor.KeyString(clusterKey("c1"))
	for range 2 {
		if err := wait(t, mustSubmit(t, eng, cluster("c1", edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED))); err != nil {
			t.Fatal(err)
		}
	}
	if s := p.Stats(ck); s.Created != 1 || s.Adopted != 1 {
		t.Errorf("stats after two creates = %+v, want 1 created, 1 adopted", s)
	}
	for range 2 {
		if err := wait(t, mustSubmit(t, eng, cluster("c1", edgeproto.TrackedState_TRACKED_STATE_DELETE_REQUESTED))); err != nil {
			t.Fatal(err)
		}
	}
	if s := p.Stats(ck); s.Deleted != 1 || s.DeletedAbsent != 1 {
		t.Errorf("stats after two deletes = %+v", s)
	}
	want := []string{sCreating, sReady, sCreating, sReady, sDeleting, sDeleteDone, sDeleting, sDeleteDone}
	if got := w.rec.states("ClusterInst", ck); !equalStrings(got, want) {
		t.Errorf("states = %v, want %v", got, want)
	}
}

// TestPoolBoundAndKeySerialisation runs many keys on a small pool and
// checks that no more operations run at once than the pool has workers,
// and never two for one key.
func TestPoolBoundAndKeySerialisation(t *testing.T) {
	const workers, keys, perKey = 3, 8, 3
	m := newMockPlatform(t)
	var (
		mu       sync.Mutex
		inFlight int
		maxSeen  int
		perKeyIn = map[string]int{}
		release  = make(chan struct{})
	)
	m.EXPECT().UpdateCluster(anyCtx, anyV, anyV, anyV, anyV).DoAndReturn(
		func(ctx context.Context, _ *edgeproto.Cloudlet, ci *edgeproto.ClusterInst, _ executor.Reservations, _ executor.Progress) error {
			k := ci.Key.Name
			mu.Lock()
			inFlight++
			maxSeen = max(maxSeen, inFlight)
			perKeyIn[k]++
			if perKeyIn[k] > 1 {
				t.Errorf("two operations at once for %s", k)
			}
			mu.Unlock()
			<-release
			mu.Lock()
			inFlight--
			perKeyIn[k]--
			mu.Unlock()
			return nil
		}).MinTimes(keys).MaxTimes(keys * perKey)
	w := newWorld()
	w.cloudlets.Put(cloudlet(edgeproto.TrackedState_TRACKED_STATE_READY))
	cfg := w.config(m)
	cfg.Workers = workers
	eng, _ := executor.New(cfg)
	start(t, eng)
	for i := range keys {
		for range perKey {
			if _, err := eng.Submit(cluster(string(rune('a'+i)), edgeproto.TrackedState_TRACKED_STATE_UPDATE_REQUESTED)); err != nil {
				t.Fatal(err)
			}
		}
	}
	eventually(t, "the pool to fill", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return inFlight == workers
	})
	close(release)
	if err := eng.Wait(waitCtx(t)); err != nil {
		t.Fatal(err)
	}
	if maxSeen != workers {
		t.Errorf("max operations at once = %d, want %d", maxSeen, workers)
	}
}

// TestSecretsNeverLogged runs a lifecycle with secrets in every object and
// checks the debug log.
func TestSecretsNeverLogged(t *testing.T) {
	var buf bytes.Buffer
	var mu sync.Mutex
	log := slog.New(slog.NewJSONHandler(lockedWriter{&buf, &mu}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	p := fake.New(fake.Options{Logger: log})
	w := newWorld()
	c := cloudlet(edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED)
	c.Config = &edgeproto.PlatformConfig{CrmAccessPrivateKey: "s3cret-key"}
	w.cloudlets.Put(c)
	w.apps.Put(app(appKey1))
	cfg := w.config(p)
	cfg.Logger = log
	eng, _ := executor.New(cfg)
	start(t, eng)
	mustWait := func(obj protoMsg) {
		t.Helper()
		if err := wait(t, mustSubmit(t, eng, obj)); err != nil {
			t.Fatal(err)
		}
	}
	mustWait(c)
	mustWait(cluster("c1", edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED))
	w.clusters.Put(cluster("c1", edgeproto.TrackedState_TRACKED_STATE_READY))
	mustWait(appInst("i1", appKey1, "c1", edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED))
	p.FailNext(fake.OpDeleteAppInst, 1)
	_ = wait(t, mustSubmit(t, eng, appInst("i1", appKey1, "c1", edgeproto.TrackedState_TRACKED_STATE_DELETE_REQUESTED)))
	mu.Lock()
	out := buf.String()
	mu.Unlock()
	if !strings.Contains(out, "operation done") || !strings.Contains(out, "operation failed") {
		t.Fatalf("log lacks the operations:\n%s", out)
	}
	for _, secret := range []string{"s3cret-access", "s3cret-env", "s3cret-key"} {
		if strings.Contains(out, secret) {
			t.Errorf("log contains secret %q", secret)
		}
	}
}

type lockedWriter struct {
	b  *bytes.Buffer
	mu *sync.Mutex
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func TestStartTwice(t *testing.T) {
	m := newMockPlatform(t)
	m.EXPECT().DeleteCluster(anyCtx, anyV, anyV, anyV, anyV).Return(nil)
	eng, _ := executor.New(newWorld().config(m))
	start(t, eng)
	// A finished operation proves the first Start is running.
	if err := wait(t, mustSubmit(t, eng, cluster("c1", edgeproto.TrackedState_TRACKED_STATE_DELETE_REQUESTED))); err != nil {
		t.Fatal(err)
	}
	if err := eng.Start(context.Background()); !errors.Is(err, executor.ErrStarted) {
		t.Fatalf("second Start = %v, want ErrStarted", err)
	}
}

func TestNewNeedsPlatform(t *testing.T) {
	if _, err := executor.New(executor.Config{}); err == nil {
		t.Fatal("New without platform succeeded")
	}
}

// TestStopResolvesQueued stops an engine whose only worker is busy: the
// queued request resolves with ErrStopped and reports nothing.
func TestStopResolvesQueued(t *testing.T) {
	p := fake.New(fake.Options{})
	w := newWorld()
	w.cloudlets.Put(cloudlet(edgeproto.TrackedState_TRACKED_STATE_READY))
	cfg := w.config(p)
	cfg.Workers = 1
	eng, _ := executor.New(cfg)
	stop := start(t, eng)
	gate := p.Pause(fake.OpCreateCluster, "")
	defer gate.Release()
	busy := mustSubmit(t, eng, cluster("c1", edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED))
	<-gate.Reached()
	queued := mustSubmit(t, eng, cluster("c2", edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED))
	stop()
	if err := queued.Err(); !errors.Is(err, executor.ErrStopped) {
		t.Errorf("queued: %v, want ErrStopped", err)
	}
	if err := busy.Err(); !errors.Is(err, executor.ErrCanceled) {
		t.Errorf("busy: %v, want ErrCanceled", err)
	}
	if got := w.rec.states("ClusterInst", queued.Key()); len(got) != 0 {
		t.Errorf("queued request reported %v", got)
	}
	if n, _ := p.Counts(); n != 0 {
		t.Errorf("cancelled create left %d clusters", n)
	}
}
