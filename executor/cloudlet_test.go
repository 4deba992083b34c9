package executor_test

import (
	"context"
	"errors"
	"testing"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/executor/mocks"
	"go.uber.org/mock/gomock"
	"google.golang.org/protobuf/types/known/durationpb"
	"time"
)

const (
	cInit       = "CLOUDLET_STATE_INIT"
	cReady      = "CLOUDLET_STATE_READY"
	cErrors     = "CLOUDLET_STATE_ERRORS"
	cNotPresent = "CLOUDLET_STATE_NOT_PRESENT"
)

func gatherFlavors(_ context.Context, _ *edgeproto.Cloudlet, info *edgeproto.CloudletInfo) error {
	info.Flavors = []*edgeproto.FlavorInfo{{Name: "f1", Vcpus: 2}}
	info.Properties = map[string]string{"k": "v"}
	return nil
}

func cloudletInfo(w *world) *edgeproto.CloudletInfo {
	info, _ := w.cloudletInfos.Get(executor.KeyString(cloudletKey))
	return info
}

func TestCloudletTransitions(t *testing.T) {
	hasFlavors := func(t *testing.T, w *world) {
		if got := cloudletInfo(w).GetFlavors(); len(got) != 1 || got[0].Name != "f1" {
			t.Errorf("flavors = %v", got)
		}
	}
	tests := []struct {
		transitionCase
		mutate func(c *edgeproto.Cloudlet)
	}{
		{transitionCase: transitionCase{name: "create", setup: func(m *mocks.MockPlatform, _ *world) {
			gomock.InOrder(
				m.EXPECT().InitCloudlet(anyCtx, anyV, anyV, anyV).Return(nil),
				m.EXPECT().GatherCloudletInfo(anyCtx, anyV, anyV).DoAndReturn(gatherFlavors),
			)
		}, wantState: []string{cInit, cReady}, check: hasFlavors},
			mutate: func(c *edgeproto.Cloudlet) { c.State = edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED }},
		{transitionCase: transitionCase{name: "create init error undoes", setup: func(m *mocks.MockPlatform, _ *world) {
			gomock.InOrder(
				m.EXPECT().InitCloudlet(anyCtx, anyV, anyV, anyV).Return(errBoom),
				m.EXPECT().CleanupCloudlet(anyCtx, anyV, anyV).Return(nil),
			)
		}, wantState: []string{cInit, cErrors}, wantErrs: []string{"boom"}, wantIs: []error{errBoom}},
			mutate: func(c *edgeproto.Cloudlet) { c.State = edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED }},
		{transitionCase: transitionCase{name: "create gather error undoes", setup: func(m *mocks.MockPlatform, _ *world) {
			gomock.InOrder(
				m.EXPECT().InitCloudlet(anyCtx, anyV, anyV, anyV).Return(nil),
				m.EXPECT().GatherCloudletInfo(anyCtx, anyV, anyV).Return(errBoom),
				m.EXPECT().CleanupCloudlet(anyCtx, anyV, anyV).Return(nil),
			)
		}, wantState: []string{cInit, cErrors}, wantErrs: []string{"boom"}, wantIs: []error{errBoom}},
			mutate: func(c *edgeproto.Cloudlet) { c.State = edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED }},
		{transitionCase: transitionCase{name: "create timeout undoes",
			settings: &edgeproto.Settings{CreateCloudletTimeout: durationpb.New(time.Millisecond)},
			setup: func(m *mocks.MockPlatform, _ *world) {
				gomock.InOrder(
					m.EXPECT().InitCloudlet(anyCtx, anyV, anyV, anyV).DoAndReturn(
						func(ctx context.Context, _, _, _ any) error { return blockUntilDone(ctx) }),
					m.EXPECT().CleanupCloudlet(anyCtx, anyV, anyV).Return(nil),
				)
			}, wantState: []string{cInit, cErrors}, wantIs: []error{executor.ErrTimeout}},
			mutate: func(c *edgeproto.Cloudlet) { c.State = edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED }},
		{transitionCase: transitionCase{name: "update", setup: func(m *mocks.MockPlatform, _ *world) {
			gomock.InOrder(
				m.EXPECT().InitCloudlet(anyCtx, anyV, anyV, anyV).Return(nil),
				m.EXPECT().GatherCloudletInfo(anyCtx, anyV, anyV).DoAndReturn(gatherFlavors),
			)
		}, wantState: []string{cReady}, check: hasFlavors},
			mutate: func(c *edgeproto.Cloudlet) { c.State = edgeproto.TrackedState_TRACKED_STATE_UPDATE_REQUESTED }},
		{transitionCase: transitionCase{name: "update error", setup: func(m *mocks.MockPlatform, _ *world) {
			m.EXPECT().InitCloudlet(anyCtx, anyV, anyV, anyV).Return(errBoom)
		}, wantState: []string{cErrors}, wantErrs: []string{"boom"}, wantIs: []error{errBoom}},
			mutate: func(c *edgeproto.Cloudlet) { c.State = edgeproto.TrackedState_TRACKED_STATE_UPDATE_REQUESTED }},
		{transitionCase: transitionCase{name: "ready gathers info", setup: func(m *mocks.MockPlatform, _ *world) {
			m.EXPECT().GatherCloudletInfo(anyCtx, anyV, anyV).DoAndReturn(gatherFlavors)
		}, wantState: []string{cReady}, check: hasFlavors}},
		{transitionCase: transitionCase{name: "delete", setup: func(m *mocks.MockPlatform, _ *world) {
			m.EXPECT().CleanupCloudlet(anyCtx, anyV, anyV).Return(nil)
		}, wantState: []string{cNotPresent}},
			mutate: func(c *edgeproto.Cloudlet) { c.State = edgeproto.TrackedState_TRACKED_STATE_DELETE_REQUESTED }},
		{transitionCase: transitionCase{name: "delete error", setup: func(m *mocks.MockPlatform, _ *world) {
			m.EXPECT().CleanupCloudlet(anyCtx, anyV, anyV).Return(errBoom)
		}, wantState: []string{cErrors}, wantErrs: []string{"boom"}, wantIs: []error{errBoom}},
			mutate: func(c *edgeproto.Cloudlet) { c.State = edgeproto.TrackedState_TRACKED_STATE_DELETE_REQUESTED }},
		{transitionCase: transitionCase{name: "trust policy", setup: func(m *mocks.MockPlatform, w *world) {
			w.policies.Put(&edgeproto.TrustPolicy{Key: &edgeproto.TrustPolicyKey{Organization: "op", Name: "tp1"}})
			m.EXPECT().UpdateTrustPolicy(anyCtx, anyV, anyV).DoAndReturn(
				func(_ context.Context, _ *edgeproto.Cloudlet, tp *edgeproto.TrustPolicy) error {
					if tp.GetKey().GetName() != "tp1" {
						t.Errorf("policy %v", tp)
					}
					return nil
				})
		}, check: func(t *testing.T, w *world) {
			if got := cloudletInfo(w).GetTrustPolicyState(); got != edgeproto.TrackedState_TRACKED_STATE_READY {
				t.Errorf("trust policy state %v", got)
			}
		}}, mutate: func(c *edgeproto.Cloudlet) {
			c.State = edgeproto.TrackedState_TRACKED_STATE_CREATE_ERROR // no lifecycle work
			c.TrustPolicy = "tp1"
			c.TrustPolicyState = edgeproto.TrackedState_TRACKED_STATE_UPDATE_REQUESTED
		}},
		{transitionCase: transitionCase{name: "trust policy missing", check: func(t *testing.T, w *world) {
			if got := cloudletInfo(w).GetTrustPolicyState(); got != edgeproto.TrackedState_TRACKED_STATE_UPDATE_ERROR {
				t.Errorf("trust policy state %v", got)
			}
		}, wantIs: []error{executor.ErrNotFound}}, mutate: func(c *edgeproto.Cloudlet) {
			c.State = edgeproto.TrackedState_TRACKED_STATE_CREATE_ERROR
			c.TrustPolicy = "nope"
			c.TrustPolicyState = edgeproto.TrackedState_TRACKED_STATE_UPDATE_REQUESTED
		}},
		{transitionCase: transitionCase{name: "maintenance", check: func(t *testing.T, w *world) {
			if got := cloudletInfo(w).GetMaintenanceState(); got != edgeproto.MaintenanceState_MAINTENANCE_STATE_CRM_UNDER_MAINTENANCE {
				t.Errorf("maintenance state %v", got)
			}
		}}, mutate: func(c *edgeproto.Cloudlet) {
			c.State = edgeproto.TrackedState_TRACKED_STATE_CREATE_ERROR
			c.MaintenanceState = edgeproto.MaintenanceState_MAINTENANCE_STATE_CRM_REQUESTED
		}},
		{transitionCase: transitionCase{name: "maintenance end", check: func(t *testing.T, w *world) {
			if got := cloudletInfo(w).GetMaintenanceState(); got != edgeproto.MaintenanceState_MAINTENANCE_STATE_NORMAL_OPERATION {
				t.Errorf("maintenance state %v", got)
			}
		}}, mutate: func(c *edgeproto.Cloudlet) {
			c.State = edgeproto.TrackedState_TRACKED_STATE_CREATE_ERROR
			c.MaintenanceState = edgeproto.MaintenanceState_MAINTENANCE_STATE_NORMAL_OPERATION
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := cloudlet(edgeproto.TrackedState_TRACKED_STATE_READY)
			if tc.mutate != nil {
				tc.mutate(c)
			}
			runTransition(t, tc.transitionCase, c, "Cloudlet", func(w *world) []string { return cloudletInfo(w).GetErrors() })
		})
	}
}

func TestCloudletTrustPolicyUnsupported(t *testing.T) {
	ctrl := gomock.NewController(t)
	m := mocks.NewMockPlatform(ctrl)
	m.EXPECT().Features().Return(executor.Features{PlatformType: "mock"}).AnyTimes()
	w := newWorld()
	eng, err := executor.New(w.config(m))
	if err != nil {
		t.Fatal(err)
	}
	start(t, eng)
	c := cloudlet(edgeproto.TrackedState_TRACKED_STATE_CREATE_ERROR)
	c.TrustPolicyState = edgeproto.TrackedState_TRACKED_STATE_UPDATE_REQUESTED
	if err := wait(t, mustSubmit(t, eng, c)); !errors.Is(err, executor.ErrUnsupported) {
		t.Fatalf("err = %v, want ErrUnsupported", err)
	}
	if got := cloudletInfo(w).GetTrustPolicyState(); got != edgeproto.TrackedState_TRACKED_STATE_UPDATE_ERROR {
		t.Errorf("trust policy state %v", got)
	}
}

func TestNothingRequested(t *testing.T) {
	eng, err := executor.New(newWorld().config(newMockPlatform(t)))
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range []protoMsg{
		cluster("c1", edgeproto.TrackedState_TRACKED_STATE_READY),
		appInst("i1", appKey1, "c1", edgeproto.TrackedState_TRACKED_STATE_CREATE_ERROR),
		cloudlet(edgeproto.TrackedState_TRACKED_STATE_DELETE_DONE),
		&edgeproto.TrustPolicyException{Key: &edgeproto.TrustPolicyExceptionKey{Name: "x"}},
	} {
		if _, err := eng.Submit(obj); !errors.Is(err, executor.ErrNoChange) {
			t.Errorf("Submit(%T) = %v, want ErrNoChange", obj, err)
		}
	}
	if _, err := eng.Submit(&edgeproto.App{}); !errors.Is(err, executor.ErrBadObject) {
		t.Errorf("Submit(App) = %v, want ErrBadObject", err)
	}
	if _, err := eng.Submit(&edgeproto.ClusterInst{State: edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED}); !errors.Is(err, executor.ErrBadObject) {
		t.Errorf("Submit(keyless) = %v, want ErrBadObject", err)
	}
}
