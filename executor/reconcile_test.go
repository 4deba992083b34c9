package executor_test

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/platforms/fake"
	"github.com/google/go-cmp/cmp"
)

// Names of objects in reconcile tests: "ClusterInst/<key>", "AppInst/<key>".
func cName(name string) string { return "ClusterInst/" + executor.KeyString(clusterKey(name)) }
func iName(name string) string {
	return "AppInst/" + executor.KeyString(&edgeproto.AppInstKey{Name: name, Organization: "dev"})
}

var errStillUnreachable = errors.New("still unreachable")

const (
	ready    = edgeproto.TrackedState_TRACKED_STATE_READY
	creating = edgeproto.TrackedState_TRACKED_STATE_CREATING
)

// reconcileCase is one row of the reconciliation table: what the host has,
// what the platform has (finished, or created half way as by a crash), and
// what Reconcile must do.
type reconcileCase struct {
	name     string
	host     []protoMsg // the host's ClusterInsts and AppInsts
	platform []protoMsg // created on the platform before the engine starts
	crashed  []protoMsg // created half way on the platform (listed CREATING)
	// configure changes the engine's config (lookups, platform).
	configure func(t *testing.T, cfg *executor.Config, w *world)
	// before runs with the engine started, before Reconcile.
	before func(t *testing.T, eng *executor.Engine, p *fake.Platform) (after func())

	wantErr     error                               // Reconcile's error matches it
	want        map[string]executor.ReconcileAction // per object name
	wantStates  map[string][]string                 // reported states per object name
	wantErrs    map[string][]string                 // final reported errors per cluster name
	wantItemErr map[string]error                    // the item's error matches it
	// wantPlatform is what the platform lists afterwards: name -> state.
	wantPlatform map[string]edgeproto.TrackedState
	check        func(t *testing.T, w *world)
	// opts are Reconcile's options, given the case's world (nil: none).
	opts func(w *world) []executor.ReconcileOption
	// once skips the second pass that checks convergence.
	once bool
}

func TestReconcile(t *testing.T) {
	const (
		create = executor.ReconcileCreate
		update = executor.ReconcileUpdate
		del    = executor.ReconcileDelete
		undo   = executor.ReconcileUndo
		report = executor.ReconcileReport
		none   = executor.ReconcileNone
		busy   = executor.ReconcileBusy
	)
	st := func(s edgeproto.TrackedState) edgeproto.TrackedState { return s }
	c := func(name string, s edgeproto.TrackedState) *edgeproto.ClusterInst { return cluster(name, s) }
	i := func(name, cl string, s edgeproto.TrackedState) *edgeproto.AppInst {
		return appInst(name, appKey1, cl, s)
	}
	failedCreate := func(name string) *edgeproto.ClusterInst {
		ci := c(name, edgeproto.TrackedState_TRACKED_STATE_CREATE_ERROR)
		ci.Errors = []string{"boom", "undo failed: platform unreachable"}
		return ci
	}
	tests := []reconcileCase{{
		name:         "wanted and missing: recreated",
		host:         []protoMsg{c("c1", ready)},
		want:         map[string]executor.ReconcileAction{cName("c1"): create},
		wantStates:   map[string][]string{cName("c1"): {sCreating, sReady}},
		wantPlatform: map[string]edgeproto.TrackedState{cName("c1"): ready},
	}, {
		name:         "present on both sides: reported with its resources",
		host:         []protoMsg{c("c1", ready)},
		platform:     []protoMsg{c("c1", ready)},
		want:         map[string]executor.ReconcileAction{cName("c1"): report},
		wantStates:   map[string][]string{cName("c1"): {sReady}},
		wantPlatform: map[string]edgeproto.TrackedState{cName("c1"): ready},
		check: func(t *testing.T, w *world) {
			info, _ := w.clusterInfos.Get(executor.KeyString(clusterKey("c1")))
			if len(info.GetResources().GetVms()) == 0 {
				t.Errorf("report lacks the cluster's resources: %v", info)
			}
		},
	}, {
		name:         "unknown to the host: removed",
		platform:     []protoMsg{c("c1", ready)},
		want:         map[string]executor.ReconcileAction{cName("c1"): del},
		wantStates:   map[string][]string{cName("c1"): {sDeleting, sDeleteDone}},
		wantPlatform: map[string]edgeproto.TrackedState{},
	}, {
		name:         "deleted at the host (DELETE_DONE) but present: removed",
		host:         []protoMsg{c("c1", st(edgeproto.TrackedState_TRACKED_STATE_DELETE_DONE))},
		platform:     []protoMsg{c("c1", ready)},
		want:         map[string]executor.ReconcileAction{cName("c1"): del},
		wantStates:   map[string][]string{cName("c1"): {sDeleting, sDeleteDone}},
		wantPlatform: map[string]edgeproto.TrackedState{},
	}, {
		name:         "deleted on both sides: nothing",
		host:         []protoMsg{c("c1", st(edgeproto.TrackedState_TRACKED_STATE_DELETE_DONE))},
		want:         map[string]executor.ReconcileAction{},
		wantPlatform: map[string]edgeproto.TrackedState{},
	}, {
		name:         "create interrupted before the platform started: re-run",
		host:         []protoMsg{c("c1", creating)},
		want:         map[string]executor.ReconcileAction{cName("c1"): create},
		wantStates:   map[string][]string{cName("c1"): {sCreating, sReady}},
		wantPlatform: map[string]edgeproto.TrackedState{cName("c1"): ready},
	}, {
		name:         "create interrupted half way: re-run, the platform finishes it",
		host:         []protoMsg{c("c1", creating)},
		crashed:      []protoMsg{c("c1", creating)},
		want:         map[string]executor.ReconcileAction{cName("c1"): create},
		wantStates:   map[string][]string{cName("c1"): {sCreating, sReady}},
		wantPlatform: map[string]edgeproto.TrackedState{cName("c1"): ready},
	}, {
		name:         "create requested and already done: adopted",
		host:         []protoMsg{c("c1", st(edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED))},
		platform:     []protoMsg{c("c1", ready)},
		want:         map[string]executor.ReconcileAction{cName("c1"): create},
		wantStates:   map[string][]string{cName("c1"): {sCreating, sReady}},
		wantPlatform: map[string]edgeproto.TrackedState{cName("c1"): ready},
	}, {
		name:         "update interrupted: re-run",
		host:         []protoMsg{c("c1", st(edgeproto.TrackedState_TRACKED_STATE_UPDATING))},
		platform:     []protoMsg{c("c1", ready)},
		want:         map[string]executor.ReconcileAction{cName("c1"): update},
		wantStates:   map[string][]string{cName("c1"): {sUpdating, sReady}},
		wantPlatform: map[string]edgeproto.TrackedState{cName("c1"): ready},
	}, {
		name:         "update requested of a cluster the platform lost: recreated",
		host:         []protoMsg{c("c1", st(edgeproto.TrackedState_TRACKED_STATE_UPDATE_REQUESTED))},
		want:         map[string]executor.ReconcileAction{cName("c1"): create},
		wantStates:   map[string][]string{cName("c1"): {sCreating, sReady}},
		wantPlatform: map[string]edgeproto.TrackedState{cName("c1"): ready},
	}, {
		name:         "delete interrupted: re-run",
		host:         []protoMsg{c("c1", st(edgeproto.TrackedState_TRACKED_STATE_DELETING))},
		platform:     []protoMsg{c("c1", ready)},
		want:         map[string]executor.ReconcileAction{cName("c1"): del},
		wantStates:   map[string][]string{cName("c1"): {sDeleting, sDeleteDone}},
		wantPlatform: map[string]edgeproto.TrackedState{},
	}, {
		name:         "delete interrupted after the platform finished: re-run, finds nothing",
		host:         []protoMsg{c("c1", st(edgeproto.TrackedState_TRACKED_STATE_DELETING))},
		want:         map[string]executor.ReconcileAction{cName("c1"): del},
		wantStates:   map[string][]string{cName("c1"): {sDeleting, sDeleteDone}},
		wantPlatform: map[string]edgeproto.TrackedState{},
	}, {
		name:         "failed delete: retried",
		host:         []protoMsg{c("c1", st(edgeproto.TrackedState_TRACKED_STATE_DELETE_ERROR))},
		platform:     []protoMsg{c("c1", ready)},
		want:         map[string]executor.ReconcileAction{cName("c1"): del},
		wantStates:   map[string][]string{cName("c1"): {sDeleting, sDeleteDone}},
		wantPlatform: map[string]edgeproto.TrackedState{},
	}, {
		name:         "unfinished create the host does not know: removed",
		crashed:      []protoMsg{c("c1", creating)},
		want:         map[string]executor.ReconcileAction{cName("c1"): del},
		wantStates:   map[string][]string{cName("c1"): {sDeleting, sDeleteDone}},
		wantPlatform: map[string]edgeproto.TrackedState{},
	}, {
		name:         "failed create whose undo failed: undone, stays CREATE_ERROR with its cause",
		host:         []protoMsg{failedCreate("c1")},
		crashed:      []protoMsg{c("c1", creating)},
		want:         map[string]executor.ReconcileAction{cName("c1"): undo},
		wantStates:   map[string][]string{cName("c1"): {sCreateError, sCreateError}},
		wantErrs:     map[string][]string{"c1": {"boom"}},
		wantPlatform: map[string]edgeproto.TrackedState{},
	}, {
		name:     "failed create whose undo fails again: the new undo error replaces the old",
		host:     []protoMsg{failedCreate("c1")},
		platform: []protoMsg{c("c1", ready)},
		before: func(_ *testing.T, _ *executor.Engine, p *fake.Platform) func() {
			p.Inject(fake.Fault{Op: fake.OpDeleteCluster, Times: 1, Err: errStillUnreachable})
			return nil
		},
		want:         map[string]executor.ReconcileAction{cName("c1"): undo},
		wantStates:   map[string][]string{cName("c1"): {sCreateError, sCreateError}},
		wantErrs:     map[string][]string{"c1": {"boom", "undo failed: fake: DeleteCluster " + executor.KeyString(clusterKey("c1")) + ": still unreachable"}},
		wantItemErr:  map[string]error{cName("c1"): errStillUnreachable},
		wantPlatform: map[string]edgeproto.TrackedState{cName("c1"): ready},
	}, {
		name:         "failed create that left nothing: nothing",
		host:         []protoMsg{failedCreate("c1")},
		want:         map[string]executor.ReconcileAction{},
		wantPlatform: map[string]edgeproto.TrackedState{},
	}, {
		name:         "update error, present: reported in its state",
		host:         []protoMsg{c("c1", st(edgeproto.TrackedState_TRACKED_STATE_UPDATE_ERROR))},
		platform:     []protoMsg{c("c1", ready)},
		want:         map[string]executor.ReconcileAction{cName("c1"): report},
		wantStates:   map[string][]string{cName("c1"): {sUpdateError}},
		wantPlatform: map[string]edgeproto.TrackedState{cName("c1"): ready},
	}, {
		name:         "delete being prepared by the host: left alone",
		host:         []protoMsg{c("c1", st(edgeproto.TrackedState_TRACKED_STATE_DELETE_PREPARE))},
		platform:     []protoMsg{c("c1", ready)},
		want:         map[string]executor.ReconcileAction{},
		wantPlatform: map[string]edgeproto.TrackedState{cName("c1"): ready},
	}, {
		name: "cluster and instance both lost: cluster first, then the instance",
		host: []protoMsg{c("c1", ready), i("i1", "c1", ready)},
		want: map[string]executor.ReconcileAction{cName("c1"): create, iName("i1"): create},
		wantStates: map[string][]string{
			cName("c1"): {sCreating, sReady}, iName("i1"): {sCreating, sReady}},
		wantPlatform: map[string]edgeproto.TrackedState{cName("c1"): ready, iName("i1"): ready},
	}, {
		name:     "orphan instance on an orphan cluster: the instance goes first",
		platform: []protoMsg{c("c1", ready), i("i1", "c1", ready)},
		want:     map[string]executor.ReconcileAction{cName("c1"): del, iName("i1"): del},
		wantStates: map[string][]string{
			cName("c1"): {sDeleting, sDeleteDone}, iName("i1"): {sDeleting, sDeleteDone}},
		wantPlatform: map[string]edgeproto.TrackedState{},
		check: func(t *testing.T, w *world) {
			var order []string
			for _, r := range w.rec.reports() {
				if r.State == sDeleteDone {
					order = append(order, r.Kind)
				}
			}
			if !slices.Equal(order, []string{"AppInst", "ClusterInst"}) {
				t.Errorf("deletes done in order %v, want the instance first", order)
			}
		},
	}, {
		name:         "instance present on both sides: reported with its runtime",
		host:         []protoMsg{c("c1", ready), i("i1", "c1", ready)},
		platform:     []protoMsg{c("c1", ready), i("i1", "c1", ready)},
		want:         map[string]executor.ReconcileAction{cName("c1"): report, iName("i1"): report},
		wantStates:   map[string][]string{iName("i1"): {sReady}},
		wantPlatform: map[string]edgeproto.TrackedState{cName("c1"): ready, iName("i1"): ready},
		check: func(t *testing.T, w *world) {
			info, _ := w.appInstInfos.Get(executor.KeyString(&edgeproto.AppInstKey{Name: "i1", Organization: "dev"}))
			if len(info.GetRuntimeInfo().GetPorts()) != 1 || info.GetPowerState() != edgeproto.PowerState_POWER_STATE_POWER_ON {
				t.Errorf("report lacks the runtime: %v", info)
			}
		},
	}, {
		name:         "instance deleted at the host while down: removed, its cluster kept",
		host:         []protoMsg{c("c1", ready), i("i1", "c1", st(edgeproto.TrackedState_TRACKED_STATE_DELETE_REQUESTED))},
		platform:     []protoMsg{c("c1", ready), i("i1", "c1", ready)},
		want:         map[string]executor.ReconcileAction{cName("c1"): report, iName("i1"): del},
		wantStates:   map[string][]string{iName("i1"): {sDeleting, sDeleteDone}},
		wantPlatform: map[string]edgeproto.TrackedState{cName("c1"): ready},
	}, {
		name:         "instance whose create crashed half way: re-run",
		host:         []protoMsg{c("c1", ready), i("i1", "c1", creating)},
		platform:     []protoMsg{c("c1", ready)},
		crashed:      []protoMsg{i("i1", "c1", creating)},
		want:         map[string]executor.ReconcileAction{cName("c1"): report, iName("i1"): create},
		wantStates:   map[string][]string{iName("i1"): {sCreating, sReady}},
		wantPlatform: map[string]edgeproto.TrackedState{cName("c1"): ready, iName("i1"): ready},
	}, {
		name:         "instance whose failed create left a half-made deployment: undone",
		host:         []protoMsg{c("c1", ready), i("i1", "c1", st(edgeproto.TrackedState_TRACKED_STATE_CREATE_ERROR))},
		platform:     []protoMsg{c("c1", ready)},
		crashed:      []protoMsg{i("i1", "c1", creating)},
		want:         map[string]executor.ReconcileAction{cName("c1"): report, iName("i1"): undo},
		wantStates:   map[string][]string{iName("i1"): {sCreateError, sCreateError}},
		wantPlatform: map[string]edgeproto.TrackedState{cName("c1"): ready},
	}, {
		name:     "listing fails: nothing is done",
		host:     []protoMsg{c("c2", ready)},
		platform: []protoMsg{c("c1", ready)},
		before: func(_ *testing.T, _ *executor.Engine, p *fake.Platform) func() {
			p.FailNext(fake.OpListInsts, 1)
			return nil
		},
		wantErr:      fake.ErrInjected,
		wantStates:   map[string][]string{cName("c1"): nil, cName("c2"): nil},
		wantPlatform: map[string]edgeproto.TrackedState{cName("c1"): ready},
	}, {
		name:     "the host cannot list: nothing is done",
		platform: []protoMsg{c("c1", ready)},
		configure: func(_ *testing.T, cfg *executor.Config, _ *world) {
			cfg.Objects.ClusterInstsOn = executor.ListerFunc[*edgeproto.ClusterInst](func(context.Context, *edgeproto.CloudletKey) ([]*edgeproto.ClusterInst, error) {
				return nil, errUnavailable
			})
		},
		wantErr:      errUnavailable,
		wantStates:   map[string][]string{cName("c1"): nil},
		wantPlatform: map[string]edgeproto.TrackedState{cName("c1"): ready},
	}, {
		name:     "the host changed the object after listing it: decided again",
		host:     []protoMsg{c("c1", st(edgeproto.TrackedState_TRACKED_STATE_DELETE_DONE))},
		platform: []protoMsg{},
		configure: func(_ *testing.T, cfg *executor.Config, _ *world) {
			// A stale listing: the object was READY when listed.
			cfg.Objects.ClusterInstsOn = executor.ListerFunc[*edgeproto.ClusterInst](func(context.Context, *edgeproto.CloudletKey) ([]*edgeproto.ClusterInst, error) {
				return []*edgeproto.ClusterInst{c("c1", ready)}, nil
			})
		},
		want:         map[string]executor.ReconcileAction{cName("c1"): none},
		wantStates:   map[string][]string{cName("c1"): nil},
		wantPlatform: map[string]edgeproto.TrackedState{},
	}, {
		name:     "the host cannot say what it wants of an object: that object is left",
		host:     []protoMsg{c("c1", ready)},
		platform: []protoMsg{c("c2", ready)},
		configure: func(_ *testing.T, cfg *executor.Config, _ *world) {
			cfg.Objects.ClusterInsts = unavailable[*edgeproto.ClusterKey, *edgeproto.ClusterInst]()
		},
		want:         map[string]executor.ReconcileAction{cName("c1"): create, cName("c2"): del},
		wantItemErr:  map[string]error{cName("c1"): errUnavailable, cName("c2"): errUnavailable},
		wantStates:   map[string][]string{cName("c1"): nil, cName("c2"): nil},
		wantPlatform: map[string]edgeproto.TrackedState{cName("c2"): ready},
	}, {
		name: "an object with a request in flight is left to it",
		host: []protoMsg{c("c1", st(edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED))},
		before: func(t *testing.T, eng *executor.Engine, p *fake.Platform) func() {
			gate := p.Pause(fake.OpCreateCluster, executor.KeyString(clusterKey("c1")))
			h := mustSubmit(t, eng, c("c1", st(edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED)))
			<-gate.Reached()
			return func() {
				gate.Release()
				if err := wait(t, h); err != nil {
					t.Errorf("the host's own create: %v", err)
				}
			}
		},
		want:         map[string]executor.ReconcileAction{cName("c1"): busy},
		wantStates:   map[string][]string{cName("c1"): {sCreating, sReady}}, // the host's request only
		wantPlatform: map[string]edgeproto.TrackedState{cName("c1"): ready},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			runReconcile(t, tc)
		})
	}
}

// place creates obj on the platform, finished or (crash) half way.
func place(t *testing.T, p *fake.Platform, res executor.Reservations, cl *edgeproto.Cloudlet, obj protoMsg, crash bool) {
	t.Helper()
	ctx := waitCtx(t)
	var err error
	switch o := obj.(type) {
	case *edgeproto.ClusterInst:
		if crash {
			p.Inject(fake.Fault{Op: fake.OpCreateCluster, Key: executor.KeyString(o), Times: 1, Crash: true})
		}
		err = p.CreateCluster(ctx, cl, o.Clone(), res, executor.ProgressFunc(func(string) {}))
	case *edgeproto.AppInst:
		if crash {
			p.Inject(fake.Fault{Op: fake.OpCreateAppInst, Key: executor.KeyString(o), Times: 1, Crash: true})
		}
		_, err = p.CreateAppInst(ctx, cluster(o.ClusterKey.Name, ready), app(appKey1), o.Clone(), res, executor.ProgressFunc(func(string) {}))
	}
	if crash != (err != nil) {
		t.Fatalf("placing %v (crash %v): %v", obj, crash, err)
	}
}

// inventory is what the platform lists: name -> state.
func inventory(t *testing.T, p *fake.Platform, cl *edgeproto.Cloudlet) map[string]edgeproto.TrackedState {
	t.Helper()
	inv, err := p.ListInsts(waitCtx(t), cl)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]edgeproto.TrackedState{}
	for _, c := range inv.Clusters {
		out["ClusterInst/"+executor.KeyString(c)] = c.State
	}
	for _, i := range inv.AppInsts {
		out["AppInst/"+executor.KeyString(i)] = i.State
	}
	return out
}

func runReconcile(t *testing.T, tc reconcileCase) {
	p := fake.New(fake.Options{})
	res := executor.NewMemReservations()
	w := newWorld()
	cl := cloudlet(ready)
	w.cloudlets.Put(cl)
	w.apps.Put(app(appKey1))
	for _, o := range tc.platform {
		place(t, p, res, cl, o, false)
	}
	for _, o := range tc.crashed {
		place(t, p, res, cl, o, true)
	}
	for _, o := range tc.host {
		putHost(w, o)
	}
	cfg := w.config(p)
	cfg.Reservations = res
	cfg.ReportRetry = fastRetry
	if tc.configure != nil {
		tc.configure(t, &cfg, w)
	}
	eng, err := executor.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	start(t, eng)
	var after func()
	if tc.before != nil {
		after = tc.before(t, eng, p)
	}
	var opts []executor.ReconcileOption
	if tc.opts != nil {
		opts = tc.opts(w)
	}
	result, err := eng.Reconcile(waitCtx(t), cl, opts...)
	if after != nil {
		after()
	}
	if tc.wantErr != nil {
		if !errors.Is(err, tc.wantErr) {
			t.Fatalf("Reconcile error %v, want %v", err, tc.wantErr)
		}
	} else if err != nil {
		t.Fatalf("Reconcile: %v", err)
	}
	if tc.want != nil {
		got := map[string]executor.ReconcileAction{}
		for _, it := range result.Items {
			got[it.Kind+"/"+it.Key] = it.Action
			want, ok := tc.wantItemErr[it.Kind+"/"+it.Key]
			switch {
			case ok && !errors.Is(it.Err, want):
				t.Errorf("%s %s: error %v, want %v", it.Kind, it.Key, it.Err, want)
			case !ok && it.Err != nil:
				t.Errorf("%s %s: %v", it.Kind, it.Key, it.Err)
			}
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("actions (-want +got):\n%s", diff)
		}
	}
	if err := eng.Wait(waitCtx(t)); err != nil {
		t.Fatal(err)
	}
	for name, want := range tc.wantStates {
		kind, key, _ := strings.Cut(name, "/")
		if got := w.rec.states(kind, key); !slices.Equal(got, want) {
			t.Errorf("%s: reported states %v, want %v", name, got, want)
		}
	}
	for name, want := range tc.wantErrs {
		info, _ := w.clusterInfos.Get(executor.KeyString(clusterKey(name)))
		if !slices.Equal(info.GetErrors(), want) {
			t.Errorf("%s: reported errors %q, want %q", name, info.GetErrors(), want)
		}
	}
	if got := inventory(t, p, cl); !maps.Equal(got, tc.wantPlatform) {
		t.Errorf("platform has %v, want %v", got, tc.wantPlatform)
	}
	if tc.check != nil {
		tc.check(t, w)
	}
	if err != nil || tc.configure != nil || len(tc.wantItemErr) > 0 || tc.once {
		return
	}
	// Converged: once the host applies what was reported, a second pass
	// has nothing left to change.
	mirror(w)
	result, err = eng.Reconcile(waitCtx(t), cl, opts...)
	if err != nil {
		t.Fatalf("second Reconcile: %v", err)
	}
	for _, it := range result.Items {
		if it.Action != executor.ReconcileReport || it.Err != nil {
			t.Errorf("second Reconcile: %s %s: %s %v, want a report only", it.Kind, it.Key, it.Action, it.Err)
		}
	}
}

func putHost(w *world, obj protoMsg) {
	switch o := obj.(type) {
	case *edgeproto.ClusterInst:
		w.clusters.Put(o)
	case *edgeproto.AppInst:
		w.appInsts.Put(o)
	}
}

// mirror applies the reported states to the host's objects, as a host
// accepting every outcome would, and drops the deleted ones.
func mirror(w *world) {
	for _, ci := range w.clusters.List() {
		info, ok := w.clusterInfos.Get(executor.KeyString(ci))
		switch {
		case !ok:
		case info.State == edgeproto.TrackedState_TRACKED_STATE_DELETE_DONE:
			w.clusters.Delete(executor.KeyString(ci))
		default:
			ci.State = info.State
			w.clusters.Put(ci)
		}
	}
	for _, ai := range w.appInsts.List() {
		info, ok := w.appInstInfos.Get(executor.KeyString(ai))
		switch {
		case !ok:
		case info.State == edgeproto.TrackedState_TRACKED_STATE_DELETE_DONE:
			w.appInsts.Delete(executor.KeyString(ai))
		default:
			ai.State = info.State
			w.appInsts.Put(ai)
		}
	}
}
