package controller_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/hosts/controller/ui"
	"github.com/edgekit/edgekit/platforms/fake"
)

// rowRecorder is a ui.Emitter that keeps the rows it is given.
type rowRecorder struct {
	mu      sync.Mutex
	rows    map[string]ui.Row
	changed chan struct{} // closed and replaced on every change
}

func newRowRecorder() *rowRecorder {
	return &rowRecorder{rows: map[string]ui.Row{}, changed: make(chan struct{})}
}

func (r *rowRecorder) Put(row ui.Row) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rows[row.Kind+"/"+row.Key] = row
	close(r.changed)
	r.changed = make(chan struct{})
}

func (r *rowRecorder) Delete(kind, key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.rows, kind+"/"+key)
	close(r.changed)
	r.changed = make(chan struct{})
}

// wait waits until the row of kind and key satisfies ok, and returns it.
func (r *rowRecorder) wait(t *testing.T, kind, key string, timeout time.Duration, what string, ok func(ui.Row, bool) bool) ui.Row {
	t.Helper()
	deadline := time.After(timeout)
	for {
		r.mu.Lock()
		row, found := r.rows[kind+"/"+key]
		changed := r.changed
		var ids []string
		for id := range r.rows {
			ids = append(ids, id)
		}
		r.mu.Unlock()
		if ok(row, found) {
			return row
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("%s %s: no row %s within %v; the last: %+v (present: %v; rows: %q)", kind, key, what, timeout, row, found, ids)
		}
	}
}

// runSources runs srcs into out until the test ends.
func runSources(t *testing.T, out ui.Emitter, srcs ...ui.Source) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, src := range srcs {
		wg.Go(func() { _ = src.Run(ctx, out) })
	}
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
}

// The status page's message of an object goes with its state: the
// progress of the running change while it runs, and once the object rests,
// what its state means, never the last step of a change that is over.
func TestStatusPageMessageGoesWithTheState(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := testCtx(t)
	rec := newRowRecorder()
	runSources(t, rec, w.env.Controller.UISources()...)

	inState := func(state, message string) func(ui.Row, bool) bool {
		return func(r ui.Row, found bool) bool {
			return found && r.State == state && (message == "" || r.Message == message)
		}
	}
	const cluster = "name=c1,organization=developer"
	if row := rec.wait(t, "ClusterInst", cluster, 10*time.Second, "READY", inState("READY", "")); row.Message != "ready" {
		t.Errorf("the READY cluster's message is %q, want %q", row.Message, "ready")
	}
	if row := rec.wait(t, "Cloudlet", "organization=operator,name=site1", 10*time.Second, "READY", inState("READY", "")); row.Message != "ready" {
		t.Errorf("the READY cloudlet's message is %q, want %q", row.Message, "ready")
	}

	// While a create runs, its progress; once READY, "ready".
	const inst = "name=i1,organization=developer"
	gate := w.env.Platform.Pause(fake.OpCreateAppInst, inst)
	if _, err := drain(w.dev.appInsts.CreateAppInst(ctx, &edgeproto.CreateAppInstRequest{AppInst: w.appInst("i1"), NoWait: true})); err != nil {
		t.Fatal(err)
	}
	select {
	case <-gate.Reached():
	case <-ctx.Done():
		t.Fatal("the platform never started creating the instance")
	}
	rec.wait(t, "AppInst", inst, 10*time.Second, `CREATING with the create's progress ("Creating AppInst...")`, func(r ui.Row, found bool) bool {
		return found && r.State == "CREATING" && strings.HasPrefix(r.Message, "Creating AppInst")
	})
	gate.Release()
	rec.wait(t, "AppInst", inst, 10*time.Second, `READY with the message "ready"`, inState("READY", "ready"))

	// A failed create: its state's message, beside the errors.
	w.env.Platform.Inject(fake.Fault{Op: fake.OpCreateAppInst, Key: "name=i2,organization=developer", Times: 1, Err: errors.New("planted failure")})
	if _, err := drain(w.dev.appInsts.CreateAppInst(ctx, &edgeproto.CreateAppInstRequest{AppInst: w.appInst("i2"), NoWait: true})); err != nil {
		t.Fatal(err)
	}
	row := rec.wait(t, "AppInst", "name=i2,organization=developer", 10*time.Second, `CREATE_ERROR with the message "create failed"`,
		inState("CREATE_ERROR", "create failed"))
	if !strings.Contains(strings.Join(row.Errors, "; "), "planted failure") {
		t.Errorf("the failed instance's errors %q do not say why", row.Errors)
	}
}
