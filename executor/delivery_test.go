package executor_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/fieldmap"
	"github.com/edgekit/edgekit/platforms/fake"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
)

var errLinkDown = errors.New("link down")

// fastRetry keeps report retries short in tests.
var fastRetry = executor.RetryPolicy{Attempts: 3, Backoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond}

// link is a Sender in front of a receiving cache that a test can break:
// fail decides the outcome of each try (nil: deliver). It counts tries.
type link[T executor.Object[T]] struct {
	mu    sync.Mutex
	to    *executor.Cache[T]
	fail  func(try int, info T, fm *fieldmap.FieldMap) error
	tries int
	sent  []*fieldmap.FieldMap // the fields of every delivered report
}

func newLink[T executor.Object[T]]() *link[T] { return &link[T]{to: executor.NewCache[T]()} }

func (l *link[T]) Send(ctx context.Context, info T, fm *fieldmap.FieldMap) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.tries++
	if l.fail != nil {
		if err := l.fail(l.tries, info, fm); err != nil {
			return err
		}
	}
	l.sent = append(l.sent, fm.Clone())
	l.to.Apply(info, fm)
	return nil
}

func (l *link[T]) set(fail func(try int, info T, fm *fieldmap.FieldMap) error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.fail = fail
}

// reconnect replaces the receiving cache by an empty one, as a receiver
// that lost everything, and heals the link.
func (l *link[T]) reconnect() *executor.Cache[T] {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.to, l.fail, l.sent = executor.NewCache[T](), nil, nil
	return l.to
}

func (l *link[T]) counts() (tries int, delivered []*fieldmap.FieldMap) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.tries, append([]*fieldmap.FieldMap(nil), l.sent...)
}

func (l *link[T]) cache() *executor.Cache[T] {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.to
}

func failState(state edgeproto.TrackedState) func(int, *edgeproto.ClusterInstInfo, *fieldmap.FieldMap) error {
	return func(_ int, i *edgeproto.ClusterInstInfo, fm *fieldmap.FieldMap) error {
		if fm.Has(edgeproto.ClusterInstInfoFieldState) && i.State == state {
			return errLinkDown
		}
		return nil
	}
}

// deliveryEngine runs an engine over the fake platform whose cluster
// reports go through l.
func deliveryEngine(t *testing.T, l *link[*edgeproto.ClusterInstInfo], retry executor.RetryPolicy) (*executor.Engine, *fake.Platform, *world, func()) {
	t.Helper()
	p := fake.New(fake.Options{})
	w := newWorld()
	w.cloudlets.Put(cloudlet(edgeproto.TrackedState_TRACKED_STATE_READY))
	cfg := w.config(p)
	cfg.ClusterInstInfos = l
	cfg.ReportRetry = retry
	eng, err := executor.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return eng, p, w, start(t, eng)
}

func TestReportDelivery(t *testing.T) {
	tests := []struct {
		name   string
		fail   func(try int, i *edgeproto.ClusterInstInfo, fm *fieldmap.FieldMap) error
		inject bool // the platform's create fails
		// wantIs: the Handle's error matches each (none: success).
		wantIs []error
		// wantTries: how often the Sender was called.
		wantTries int
		// wantState: the state the receiver holds at the end ("" none).
		wantState edgeproto.TrackedState
		check     func(t *testing.T, delivered []*fieldmap.FieldMap, rcv *executor.Cache[*edgeproto.ClusterInstInfo])
	}{{
		name: "transient failures are retried",
		fail: func(try int, _ *edgeproto.ClusterInstInfo, _ *fieldmap.FieldMap) error {
			if try <= 2 { // the first report fails twice, then gets through
				return errLinkDown
			}
			return nil
		},
		// CREATING (3 tries), steps Reserving subnet, Creating nodes,
		// Cluster ready, then READY.
		wantTries: 3 + 3 + 1, wantState: edgeproto.TrackedState_TRACKED_STATE_READY,
	}, {
		name: "a lost intermediate report travels with the next one",
		fail: failState(edgeproto.TrackedState_TRACKED_STATE_CREATING),
		// CREATING fails its 3 tries; the next report (a step) carries its
		// flags and, as it carries state CREATING, fails 3 tries too; and
		// so on until READY, which carries them all.
		wantTries: 3 + 3*3 + 1, wantState: edgeproto.TrackedState_TRACKED_STATE_READY,
		check: func(t *testing.T, delivered []*fieldmap.FieldMap, rcv *executor.Cache[*edgeproto.ClusterInstInfo]) {
			if len(delivered) != 1 {
				t.Fatalf("delivered %d reports, want the final one only", len(delivered))
			}
			if fm := delivered[0]; !fm.Has(edgeproto.ClusterInstInfoFieldStatus) && !fm.Has(edgeproto.ClusterInstInfoFieldStatusTaskName) {
				t.Errorf("final report %v lacks the status of the lost first report", fm)
			}
			info, _ := rcv.Get(executor.KeyString(clusterKey("c1")))
			if got := info.GetStatus().GetTaskName(); got != "Creating ClusterInst" {
				t.Errorf("receiver's task name %q, want the one of the lost report", got)
			}
			if got := info.GetStatus().GetStepName(); got != "Cluster ready" {
				t.Errorf("receiver's step %q, want the last one", got)
			}
		},
	}, {
		name:      "a final report that cannot be delivered fails the request",
		fail:      failState(edgeproto.TrackedState_TRACKED_STATE_READY),
		wantIs:    []error{executor.ErrReportFailed, errLinkDown},
		wantTries: 1 + 3 + 3, wantState: edgeproto.TrackedState_TRACKED_STATE_CREATING,
	}, {
		name:      "a failed operation whose final report is lost says both",
		fail:      failState(edgeproto.TrackedState_TRACKED_STATE_CREATE_ERROR),
		inject:    true,
		wantIs:    []error{executor.ErrReportFailed, errLinkDown, fake.ErrInjected},
		wantTries: -1, wantState: edgeproto.TrackedState_TRACKED_STATE_CREATING,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			l := newLink[*edgeproto.ClusterInstInfo]()
			l.set(tc.fail)
			eng, p, _, _ := deliveryEngine(t, l, fastRetry)
			if tc.inject {
				p.Inject(fake.Fault{Op: fake.OpCreateCluster, Times: 1, AfterWork: true})
			}
			err := wait(t, mustSubmit(t, eng, cluster("c1", edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED)))
			if len(tc.wantIs) == 0 && err != nil {
				t.Fatalf("Handle error %v", err)
			}
			for _, target := range tc.wantIs {
				if !errors.Is(err, target) {
					t.Errorf("Handle error %v does not match %v", err, target)
				}
			}
			tries, delivered := l.counts()
			if tc.wantTries >= 0 && tries != tc.wantTries {
				t.Errorf("Sender called %d times, want %d", tries, tc.wantTries)
			}
			info, _ := l.cache().Get(executor.KeyString(clusterKey("c1")))
			if info.GetState() != tc.wantState {
				t.Errorf("receiver holds %v, want %v", info.GetState(), tc.wantState)
			}
			if tc.check != nil {
				tc.check(t, delivered, l.cache())
			}
		})
	}
}

// TestRejectedReport: a report the receiver refuses for good is not
// retried, fails the request, and the engine forgets the object, so a
// Resend does not send it again.
func TestRejectedReport(t *testing.T) {
	errStale := fmt.Errorf("claim no longer current: %w", executor.ErrReportRejected)
	l := newLink[*edgeproto.ClusterInstInfo]()
	l.set(func(_ int, i *edgeproto.ClusterInstInfo, fm *fieldmap.FieldMap) error {
		if fm.Has(edgeproto.ClusterInstInfoFieldState) && i.State == edgeproto.TrackedState_TRACKED_STATE_READY {
			return errStale
		}
		return nil
	})
	eng, _, _, _ := deliveryEngine(t, l, fastRetry)
	err := wait(t, mustSubmit(t, eng, cluster("c1", edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED)))
	if !errors.Is(err, executor.ErrReportFailed) || !errors.Is(err, executor.ErrReportRejected) {
		t.Fatalf("err = %v, want ErrReportFailed and ErrReportRejected", err)
	}
	if tries, delivered := l.counts(); tries != len(delivered)+1 {
		t.Errorf("%d tries for %d delivered reports: the rejected one was retried", tries, len(delivered))
	}
	l.reconnect()
	if err := eng.Resend(waitCtx(t)); err != nil {
		t.Fatal(err)
	}
	if _, delivered := l.counts(); len(delivered) != 0 {
		t.Errorf("Resend sent %d reports of a rejected object", len(delivered))
	}
}

// TestUndeliveredFinalReportIsRecoverable: after a lost READY, the host can
// have it sent again (Resend) and re-submitting the request adopts what the
// platform made; nothing is created twice.
func TestUndeliveredFinalReportIsRecoverable(t *testing.T) {
	l := newLink[*edgeproto.ClusterInstInfo]()
	l.set(failState(edgeproto.TrackedState_TRACKED_STATE_READY))
	eng, p, _, _ := deliveryEngine(t, l, fastRetry)
	req := cluster("c1", edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED)
	if err := wait(t, mustSubmit(t, eng, req)); !errors.Is(err, executor.ErrReportFailed) {
		t.Fatalf("err = %v, want ErrReportFailed", err)
	}
	if err := eng.Resend(waitCtx(t)); !errors.Is(err, executor.ErrReportFailed) || !errors.Is(err, errLinkDown) {
		t.Fatalf("Resend over a broken link = %v, want ErrReportFailed wrapping the link's error", err)
	}
	rcv := l.reconnect()
	if err := eng.Resend(waitCtx(t)); err != nil {
		t.Fatalf("Resend: %v", err)
	}
	ck := executor.KeyString(clusterKey("c1"))
	info, _ := rcv.Get(ck)
	if info.GetState() != edgeproto.TrackedState_TRACKED_STATE_READY || info.GetResources() == nil {
		t.Fatalf("after Resend the receiver holds %v", info)
	}
	if err := wait(t, mustSubmit(t, eng, req)); err != nil {
		t.Fatalf("re-submitted create: %v", err)
	}
	if s := p.Stats(ck); s.Created != 1 || s.Adopted != 1 {
		t.Errorf("platform stats %+v, want 1 created and 1 adopted", s)
	}
}

// TestReportRetryHonoursContext: a report waiting to be retried gives up
// when the operation's context ends, and what it carried is not lost.
func TestReportRetryHonoursContext(t *testing.T) {
	l := newLink[*edgeproto.ClusterInstInfo]()
	l.set(func(try int, _ *edgeproto.ClusterInstInfo, _ *fieldmap.FieldMap) error {
		if try == 1 {
			return errLinkDown
		}
		return nil
	})
	// A back-off far longer than the test's deadline.
	eng, _, _, _ := deliveryEngine(t, l, executor.RetryPolicy{Attempts: 5, Backoff: time.Hour, MaxBackoff: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	h, err := eng.SubmitContext(ctx, cluster("c1", edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED))
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the first report to fail", func() bool { n, _ := l.counts(); return n == 1 })
	cancel()
	if err := wait(t, h); !errors.Is(err, executor.ErrCanceled) {
		t.Fatalf("err = %v, want ErrCanceled", err)
	}
	info, _ := l.cache().Get(executor.KeyString(clusterKey("c1")))
	if info.GetState() != edgeproto.TrackedState_TRACKED_STATE_CREATE_ERROR || info.GetStatus().GetTaskNumber() == 0 {
		t.Errorf("receiver holds %v, want CREATE_ERROR with the status of the lost report", info)
	}
}

// TestResend runs a lifecycle, then gives the engine a receiver that lost
// everything: Resend rebuilds every object the engine still knows exactly
// as the first receiver holds it, and nothing the engine forgot.
func TestResend(t *testing.T) {
	p := fake.New(fake.Options{})
	w := newWorld()
	cloudlets, clusters, apps := newLink[*edgeproto.CloudletInfo](), newLink[*edgeproto.ClusterInstInfo](), newLink[*edgeproto.AppInstInfo]()
	cfg := w.config(p)
	cfg.CloudletInfos, cfg.ClusterInstInfos, cfg.AppInstInfos = cloudlets, clusters, apps
	cfg.ReportRetry = fastRetry
	eng, err := executor.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	start(t, eng)
	c := cloudlet(edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED)
	w.cloudlets.Put(c)
	w.apps.Put(app(appKey1))
	run := func(obj protoMsg) {
		t.Helper()
		if err := wait(t, mustSubmit(t, eng, obj)); err != nil {
			t.Fatal(err)
		}
	}
	run(c)
	run(cluster("c1", edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED))
	run(cluster("c2", edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED))
	w.clusters.Put(cluster("c1", edgeproto.TrackedState_TRACKED_STATE_READY))
	run(appInst("i1", appKey1, "c1", edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED))
	run(cluster("c2", edgeproto.TrackedState_TRACKED_STATE_DELETE_REQUESTED))
	if err := eng.Wait(waitCtx(t)); err != nil { // the resources refreshes too
		t.Fatal(err)
	}

	before := [3]any{cloudlets.cache().List(), clusters.cache().List(), apps.cache().List()}
	clusters.cache().Delete(executor.KeyString(clusterKey("c2"))) // forgotten: DELETE_DONE was delivered
	want := [3]any{cloudlets.cache().List(), clusters.cache().List(), apps.cache().List()}
	if cmp.Equal(before, want, protocmp.Transform()) {
		t.Fatal("c2 was never reported")
	}
	cloudlets.reconnect()
	clusters.reconnect()
	apps.reconnect()
	if err := eng.Resend(waitCtx(t)); err != nil {
		t.Fatal(err)
	}
	got := [3]any{cloudlets.cache().List(), clusters.cache().List(), apps.cache().List()}
	if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
		t.Errorf("after Resend (-want +got):\n%s", diff)
	}
	for _, n := range []int{len(cloudlets.sent), len(clusters.sent), len(apps.sent)} {
		if n != 1 {
			t.Errorf("Resend sent %d reports for one object", n)
		}
	}

	// A delete whose DELETE_DONE is lost stays known until Resend
	// delivers it; then it is forgotten.
	clusters.set(failState(edgeproto.TrackedState_TRACKED_STATE_DELETE_DONE))
	w.apps.Delete(executor.KeyString(appKey1))
	if err := wait(t, mustSubmit(t, eng, cluster("c1", edgeproto.TrackedState_TRACKED_STATE_DELETE_REQUESTED))); !errors.Is(err, executor.ErrReportFailed) {
		t.Fatalf("delete: %v, want ErrReportFailed", err)
	}
	rcv := clusters.reconnect()
	for i, want := range []int{1, 0} {
		if err := eng.Resend(waitCtx(t)); err != nil {
			t.Fatal(err)
		}
		if _, sent := clusters.counts(); len(sent) != want {
			t.Errorf("Resend #%d sent %d cluster reports, want %d", i+1, len(sent), want)
		}
		clusters.reconnect()
	}
	if info, _ := rcv.Get(executor.KeyString(clusterKey("c1"))); info.GetState() != edgeproto.TrackedState_TRACKED_STATE_DELETE_DONE {
		t.Errorf("receiver holds %v after Resend, want DELETE_DONE", info.GetState())
	}
}

// TestResendDuringOperation: a Resend while an operation runs sends the
// state of that moment, and the operation's later reports follow it.
func TestResendDuringOperation(t *testing.T) {
	l := newLink[*edgeproto.ClusterInstInfo]()
	eng, p, _, _ := deliveryEngine(t, l, fastRetry)
	ck := executor.KeyString(clusterKey("c1"))
	gate := p.Pause(fake.OpCreateCluster, ck)
	h := mustSubmit(t, eng, cluster("c1", edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED))
	<-gate.Reached()
	rcv := l.reconnect()
	if err := eng.Resend(waitCtx(t)); err != nil {
		t.Fatal(err)
	}
	if info, _ := rcv.Get(ck); info.GetState() != edgeproto.TrackedState_TRACKED_STATE_CREATING {
		t.Fatalf("Resend mid-create sent %v, want CREATING", info.GetState())
	}
	gate.Release()
	if err := wait(t, h); err != nil {
		t.Fatal(err)
	}
	if info, _ := rcv.Get(ck); info.GetState() != edgeproto.TrackedState_TRACKED_STATE_READY {
		t.Fatalf("receiver holds %v, want READY", info.GetState())
	}
}

// TestSubmitContext: the operation sees the request's context values and
// is cancelled with it; a request whose context ended before it started
// reports nothing.
func TestSubmitContext(t *testing.T) {
	type tokenKey struct{}
	p := fake.New(fake.Options{})
	w := newWorld()
	// The cloudlet Getter receives the operation's context: it records the
	// token it carries (the resources refresh that follows the operation
	// looks the cloudlet up too, under the engine's context, without one).
	var seen sync.Map // cloudlet key -> token
	cfg := w.config(p)
	cfg.Workers = 1
	cfg.Objects.Cloudlets = executor.GetterFunc[*edgeproto.CloudletKey, *edgeproto.Cloudlet](
		func(ctx context.Context, k *edgeproto.CloudletKey) (*edgeproto.Cloudlet, error) {
			if v := ctx.Value(tokenKey{}); v != nil {
				seen.Store(executor.KeyString(k), v)
			}
			return cloudlet(edgeproto.TrackedState_TRACKED_STATE_READY), nil
		})
	eng, err := executor.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	start(t, eng)
	tokenCtx := context.WithValue(context.Background(), tokenKey{}, "claim-7")
	h, err := eng.SubmitContext(tokenCtx, cluster("c1", edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED))
	if err != nil {
		t.Fatal(err)
	}
	if err := wait(t, h); err != nil {
		t.Fatal(err)
	}
	if v, _ := seen.Load(executor.KeyString(cloudletKey)); v != "claim-7" {
		t.Errorf("lookup saw token %v, want claim-7", v)
	}

	// Cancelled mid-operation: the error state is reported, the create undone.
	gate := p.Pause(fake.OpCreateCluster, executor.KeyString(clusterKey("c2")))
	defer gate.Release()
	ctx, cancel := context.WithCancel(tokenCtx)
	h, err = eng.SubmitContext(ctx, cluster("c2", edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED))
	if err != nil {
		t.Fatal(err)
	}
	<-gate.Reached()
	// Queued behind it on the single worker, with a context that ends
	// before it starts.
	ctx3, cancel3 := context.WithCancel(tokenCtx)
	h3, err := eng.SubmitContext(ctx3, cluster("c3", edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED))
	if err != nil {
		t.Fatal(err)
	}
	cancel3()
	cancel()
	if err := wait(t, h); !errors.Is(err, executor.ErrCanceled) || !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled request: %v, want ErrCanceled", err)
	}
	if got := w.rec.states("ClusterInst", executor.KeyString(clusterKey("c2"))); !equalStrings(got, []string{sCreating, sCreateError}) {
		t.Errorf("cancelled request reported %v", got)
	}
	if _, ok := p.Cluster(executor.KeyString(clusterKey("c2"))); ok {
		t.Error("cancelled create was not undone")
	}
	if err := wait(t, h3); !errors.Is(err, executor.ErrCanceled) {
		t.Fatalf("request cancelled before it started: %v, want ErrCanceled", err)
	}
	if got := w.rec.states("ClusterInst", executor.KeyString(clusterKey("c3"))); len(got) != 0 {
		t.Errorf("request cancelled before it started reported %v", got)
	}
	if _, err := eng.SubmitContext(nil, cluster("c4", edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED)); !errors.Is(err, executor.ErrBadObject) { //nolint:staticcheck // nil on purpose
		t.Errorf("SubmitContext(nil) = %v, want ErrBadObject", err)
	}
}
