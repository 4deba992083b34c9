package executor_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/executor/mocks"
	"go.uber.org/mock/gomock"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
)

var (
	errBoom     = errors.New("boom")
	errUndoBoom = errors.New("undo boom")
)

const (
	sCreating    = "TRACKED_STATE_CREATING"
	sReady       = "TRACKED_STATE_READY"
	sCreateError = "TRACKED_STATE_CREATE_ERROR"
	sUpdating    = "TRACKED_STATE_UPDATING"
	sUpdateError = "TRACKED_STATE_UPDATE_ERROR"
	sDeleting    = "TRACKED_STATE_DELETING"
	sDeleteDone  = "TRACKED_STATE_DELETE_DONE"
	sDeleteError = "TRACKED_STATE_DELETE_ERROR"
)

var (
	anyCtx = gomock.Any()
	anyV   = gomock.Any()
)

// blockUntilDone is a platform call that works until its context ends.
func blockUntilDone(ctx context.Context) error {
	<-ctx.Done()
	return ctx.Err()
}

// newMockPlatform returns a mock platform that answers Features and, any
// number of times, the GatherCloudletInfo of the resources refresh that
// follows every ClusterInst and AppInst operation.
func newMockPlatform(t *testing.T) *mocks.MockPlatform {
	m := newStrictMockPlatform(t)
	m.EXPECT().GatherCloudletInfo(anyCtx, anyV, anyV).AnyTimes()
	return m
}

// newStrictMockPlatform returns a mock platform that answers Features
// only: for tests that set their own GatherCloudletInfo expectations.
func newStrictMockPlatform(t *testing.T) *mocks.MockPlatform {
	ctrl := gomock.NewController(t)
	m := mocks.NewMockPlatform(ctrl)
	m.EXPECT().Features().Return(executor.Features{PlatformType: "mock", SupportsTrustPolicy: true}).AnyTimes()
	return m
}

// transitionCase is one row of the transition tables.
type transitionCase struct {
	name      string
	settings  *edgeproto.Settings
	setup     func(m *mocks.MockPlatform, w *world)
	wantState []string
	wantErrs  []string // reported in the final Info errors
	wantIs    []error  // the Handle's error matches each
	check     func(t *testing.T, w *world)
	objects   func(o *executor.Objects) // replaces lookups (nil: the world's)
}

func shortTimeouts() *edgeproto.Settings {
	d := durationpb.New(time.Millisecond)
	return &edgeproto.Settings{
		CreateClusterInstTimeout: d, UpdateClusterInstTimeout: d,
		CreateAppInstTimeout: d, UpdateAppInstTimeout: d,
		// Undo (a delete) gets the normal default, so it can complete.
	}
}

func TestClusterInstTransitions(t *testing.T) {
	setResources := func(_ context.Context, _ *edgeproto.Cloudlet, ci *edgeproto.ClusterInst, _ executor.Reservations, p executor.Progress) error {
		p.Step("Creating nodes")
		ci.Resources = &edgeproto.InfraResources{Vms: []*edgeproto.VmInfo{{Name: "n1"}}}
		return nil
	}
	tests := []struct {
		transitionCase
		state edgeproto.TrackedState
	}{
		{transitionCase: transitionCase{name: "create", setup: func(m *mocks.MockPlatform, _ *world) {
			m.EXPECT().CreateCluster(anyCtx, anyV, anyV, anyV, anyV).DoAndReturn(setResources)
		}, wantState: []string{sCreating, sReady}}, state: edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED},
		{transitionCase: transitionCase{name: "create error undoes", setup: func(m *mocks.MockPlatform, _ *world) {
			gomock.InOrder(
				m.EXPECT().CreateCluster(anyCtx, anyV, anyV, anyV, anyV).Return(errBoom),
				m.EXPECT().DeleteCluster(anyCtx, anyV, anyV, anyV, anyV).Return(nil),
			)
		}, wantState: []string{sCreating, sCreateError}, wantErrs: []string{"boom"}, wantIs: []error{errBoom}},
			state: edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED},
		{transitionCase: transitionCase{name: "create error undo error", setup: func(m *mocks.MockPlatform, _ *world) {
			gomock.InOrder(
				m.EXPECT().CreateCluster(anyCtx, anyV, anyV, anyV, anyV).Return(errBoom),
				m.EXPECT().DeleteCluster(anyCtx, anyV, anyV, anyV, anyV).Return(errUndoBoom),
			)
		}, wantState: []string{sCreating, sCreateError}, wantErrs: []string{"boom", "undo failed: undo boom"},
			wantIs: []error{errBoom, errUndoBoom}}, state: edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED},
		{transitionCase: transitionCase{name: "create timeout undoes", settings: shortTimeouts(), setup: func(m *mocks.MockPlatform, _ *world) {
			gomock.InOrder(
				m.EXPECT().CreateCluster(anyCtx, anyV, anyV, anyV, anyV).DoAndReturn(
					func(ctx context.Context, _, _, _, _ any) error { return blockUntilDone(ctx) }),
				m.EXPECT().DeleteCluster(anyCtx, anyV, anyV, anyV, anyV).DoAndReturn(
					func(ctx context.Context, _, _, _, _ any) error { return ctx.Err() }), // undo has a live context
			)
		}, wantState: []string{sCreating, sCreateError},
			wantIs: []error{executor.ErrTimeout, context.DeadlineExceeded}}, state: edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED},
		{transitionCase: transitionCase{name: "create without cloudlet", setup: func(_ *mocks.MockPlatform, w *world) {
			w.cloudlets.Delete(executor.KeyString(cloudletKey))
		}, wantState: []string{sCreateError}, wantIs: []error{executor.ErrNotFound}},
			state: edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED},
		{transitionCase: transitionCase{name: "update", setup: func(m *mocks.MockPlatform, _ *world) {
			m.EXPECT().UpdateCluster(anyCtx, anyV, anyV, anyV, anyV).DoAndReturn(setResources)
		}, wantState: []string{sUpdating, sReady}}, state: edgeproto.TrackedState_TRACKED_STATE_UPDATE_REQUESTED},
		{transitionCase: transitionCase{name: "update error", setup: func(m *mocks.MockPlatform, _ *world) {
			m.EXPECT().UpdateCluster(anyCtx, anyV, anyV, anyV, anyV).Return(errBoom)
		}, wantState: []string{sUpdating, sUpdateError}, wantErrs: []string{"boom"}, wantIs: []error{errBoom}},
			state: edgeproto.TrackedState_TRACKED_STATE_UPDATE_REQUESTED},
		{transitionCase: transitionCase{name: "update timeout", settings: shortTimeouts(), setup: func(m *mocks.MockPlatform, _ *world) {
			m.EXPECT().UpdateCluster(anyCtx, anyV, anyV, anyV, anyV).DoAndReturn(
				func(ctx context.Context, _, _, _, _ any) error { return blockUntilDone(ctx) })
		}, wantState: []string{sUpdating, sUpdateError}, wantIs: []error{executor.ErrTimeout}},
			state: edgeproto.TrackedState_TRACKED_STATE_UPDATE_REQUESTED},
		{transitionCase: transitionCase{name: "delete", setup: func(m *mocks.MockPlatform, _ *world) {
			m.EXPECT().DeleteCluster(anyCtx, anyV, anyV, anyV, anyV).Return(nil)
		}, wantState: []string{sDeleting, sDeleteDone}}, state: edgeproto.TrackedState_TRACKED_STATE_DELETE_REQUESTED},
		{transitionCase: transitionCase{name: "delete error", setup: func(m *mocks.MockPlatform, _ *world) {
			m.EXPECT().DeleteCluster(anyCtx, anyV, anyV, anyV, anyV).Return(errBoom)
		}, wantState: []string{sDeleting, sDeleteError}, wantErrs: []string{"boom"}, wantIs: []error{errBoom}},
			state: edgeproto.TrackedState_TRACKED_STATE_DELETE_REQUESTED},
		{transitionCase: transitionCase{name: "delete without cloudlet", setup: func(m *mocks.MockPlatform, w *world) {
			w.cloudlets.Delete(executor.KeyString(cloudletKey))
			m.EXPECT().DeleteCluster(anyCtx, anyV, anyV, anyV, anyV).DoAndReturn(
				func(_ context.Context, c *edgeproto.Cloudlet, _ *edgeproto.ClusterInst, _ executor.Reservations, _ executor.Progress) error {
					if executor.KeyString(c) != executor.KeyString(cloudletKey) {
						t.Errorf("stub cloudlet key %q", executor.KeyString(c))
					}
					return nil
				})
		}, wantState: []string{sDeleting, sDeleteDone}}, state: edgeproto.TrackedState_TRACKED_STATE_DELETE_REQUESTED},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ci := cluster("c1", tc.state)
			runTransition(t, tc.transitionCase, ci, "ClusterInst", func(w *world) []string {
				info, _ := w.clusterInfos.Get(executor.KeyString(ci))
				return info.GetErrors()
			})
		})
	}
}

// runTransition submits obj to an engine over a mock platform set up by tc
// and checks the reported states, errors and the Handle's error.
func runTransition(t *testing.T, tc transitionCase, obj proto.Message, kind string, finalErrs func(*world) []string) *world {
	t.Helper()
	m := newMockPlatform(t)
	if kind == "Cloudlet" {
		m = newStrictMockPlatform(t)
	}
	w := newWorld()
	w.cloudlets.Put(cloudlet(edgeproto.TrackedState_TRACKED_STATE_READY))
	w.clusters.Put(cluster("c1", edgeproto.TrackedState_TRACKED_STATE_READY))
	w.apps.Put(app(appKey1))
	if tc.setup != nil {
		tc.setup(m, w)
	}
	cfg := w.config(m)
	cfg.Settings = tc.settings
	if tc.objects != nil {
		tc.objects(&cfg.Objects)
	}
	eng, err := executor.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	start(t, eng)
	h := mustSubmit(t, eng, obj)
	err = wait(t, h)
	if len(tc.wantIs) == 0 && err != nil {
		t.Fatalf("Handle error: %v", err)
	}
	for _, target := range tc.wantIs {
		if !errors.Is(err, target) {
			t.Errorf("Handle error %v does not match %v", err, target)
		}
	}
	var opErr *executor.OpError
	if err != nil && !errors.As(err, &opErr) {
		t.Errorf("Handle error %T is not an *OpError", err)
	}
	if got := w.rec.states(kind, h.Key()); !slices.Equal(got, tc.wantState) {
		t.Errorf("states = %v, want %v", got, tc.wantState)
	}
	if tc.wantErrs != nil {
		if got := finalErrs(w); !slices.Equal(got, tc.wantErrs) {
			t.Errorf("reported errors = %q, want %q", got, tc.wantErrs)
		}
	} else if len(tc.wantIs) == 0 {
		if got := finalErrs(w); len(got) != 0 {
			t.Errorf("reported errors = %q, want none", got)
		}
	}
	if tc.check != nil {
		tc.check(t, w)
	}
	return w
}
