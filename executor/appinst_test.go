package executor_test

import (
	"context"
	"slices"
	"testing"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/executor/mocks"
	"go.uber.org/mock/gomock"
)

func TestAppInstTransitions(t *testing.T) {
	runtime := &edgeproto.AppInstRuntime{ContainerIds: []string{"c-1"}, Ports: []uint32{10000}}
	const (
		on, off, rebooting = "POWER_STATE_POWER_ON", "POWER_STATE_POWER_OFF", "POWER_STATE_REBOOTING"
		poweringOff, pErr  = "POWER_STATE_POWERING_OFF", "POWER_STATE_ERROR"
	)
	tests := []struct {
		transitionCase
		state     edgeproto.TrackedState
		power     edgeproto.PowerState
		wantPower []string
	}{
		{transitionCase: transitionCase{name: "create reports runtime", setup: func(m *mocks.MockPlatform, _ *world) {
			m.EXPECT().CreateAppInst(anyCtx, anyV, anyV, anyV, anyV, anyV).Return(runtime, nil)
		}, wantState: []string{sCreating, sReady}}, state: edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED, wantPower: []string{on}},
		{transitionCase: transitionCase{name: "create error undoes", setup: func(m *mocks.MockPlatform, _ *world) {
			gomock.InOrder(
				m.EXPECT().CreateAppInst(anyCtx, anyV, anyV, anyV, anyV, anyV).Return(nil, errBoom),
				m.EXPECT().DeleteAppInst(anyCtx, anyV, anyV, anyV, anyV, anyV).Return(nil),
			)
		}, wantState: []string{sCreating, sCreateError}, wantErrs: []string{"boom"}, wantIs: []error{errBoom}},
			state: edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED},
		{transitionCase: transitionCase{name: "create timeout undoes", settings: shortTimeouts(), setup: func(m *mocks.MockPlatform, _ *world) {
			gomock.InOrder(
				m.EXPECT().CreateAppInst(anyCtx, anyV, anyV, anyV, anyV, anyV).DoAndReturn(
					func(ctx context.Context, _, _, _, _, _ any) (*edgeproto.AppInstRuntime, error) {
						return nil, blockUntilDone(ctx)
					}),
				m.EXPECT().DeleteAppInst(anyCtx, anyV, anyV, anyV, anyV, anyV).Return(nil),
			)
		}, wantState: []string{sCreating, sCreateError}, wantIs: []error{executor.ErrTimeout}},
			state: edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED},
		{transitionCase: transitionCase{name: "create on cluster not ready", setup: func(_ *mocks.MockPlatform, w *world) {
			w.clusters.Put(cluster("c1", edgeproto.TrackedState_TRACKED_STATE_CREATING))
		}, wantState: []string{sCreateError}, wantIs: []error{executor.ErrClusterNotReady}},
			state: edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED},
		{transitionCase: transitionCase{name: "create without cluster", setup: func(_ *mocks.MockPlatform, w *world) {
			w.clusters.Delete(executor.KeyString(clusterKey("c1")))
		}, wantState: []string{sCreateError}, wantIs: []error{executor.ErrNotFound}},
			state: edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED},
		{transitionCase: transitionCase{name: "create without app", setup: func(_ *mocks.MockPlatform, w *world) {
			w.apps.Delete(executor.KeyString(appKey1))
		}, wantState: []string{sCreateError}, wantIs: []error{executor.ErrNotFound}},
			state: edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED},
		{transitionCase: transitionCase{name: "update", setup: func(m *mocks.MockPlatform, _ *world) {
			m.EXPECT().UpdateAppInst(anyCtx, anyV, anyV, anyV, anyV, anyV).Return(runtime, nil)
		}, wantState: []string{sUpdating, sReady}}, state: edgeproto.TrackedState_TRACKED_STATE_UPDATE_REQUESTED},
		{transitionCase: transitionCase{name: "update error", setup: func(m *mocks.MockPlatform, _ *world) {
			m.EXPECT().UpdateAppInst(anyCtx, anyV, anyV, anyV, anyV, anyV).Return(nil, errBoom)
		}, wantState: []string{sUpdating, sUpdateError}, wantErrs: []string{"boom"}, wantIs: []error{errBoom}},
			state: edgeproto.TrackedState_TRACKED_STATE_UPDATE_REQUESTED},
		{transitionCase: transitionCase{name: "power off", setup: func(m *mocks.MockPlatform, _ *world) {
			m.EXPECT().UpdateAppInst(anyCtx, anyV, anyV, anyV, anyV, anyV).Return(runtime, nil)
		}, wantState: []string{sUpdating, sReady}}, state: edgeproto.TrackedState_TRACKED_STATE_UPDATE_REQUESTED,
			power: edgeproto.PowerState_POWER_STATE_POWER_OFF_REQUESTED, wantPower: []string{poweringOff, off}},
		{transitionCase: transitionCase{name: "reboot", setup: func(m *mocks.MockPlatform, _ *world) {
			m.EXPECT().UpdateAppInst(anyCtx, anyV, anyV, anyV, anyV, anyV).Return(runtime, nil)
		}, wantState: []string{sUpdating, sReady}}, state: edgeproto.TrackedState_TRACKED_STATE_UPDATE_REQUESTED,
			power: edgeproto.PowerState_POWER_STATE_REBOOT_REQUESTED, wantPower: []string{rebooting, on}},
		{transitionCase: transitionCase{name: "power off error", setup: func(m *mocks.MockPlatform, _ *world) {
			m.EXPECT().UpdateAppInst(anyCtx, anyV, anyV, anyV, anyV, anyV).Return(nil, errBoom)
		}, wantState: []string{sUpdating, sUpdateError}, wantErrs: []string{"boom"}, wantIs: []error{errBoom}},
			state: edgeproto.TrackedState_TRACKED_STATE_UPDATE_REQUESTED,
			power: edgeproto.PowerState_POWER_STATE_POWER_OFF_REQUESTED, wantPower: []string{poweringOff, pErr}},
		{transitionCase: transitionCase{name: "delete", setup: func(m *mocks.MockPlatform, _ *world) {
			m.EXPECT().DeleteAppInst(anyCtx, anyV, anyV, anyV, anyV, anyV).Return(nil)
		}, wantState: []string{sDeleting, sDeleteDone}}, state: edgeproto.TrackedState_TRACKED_STATE_DELETE_REQUESTED},
		{transitionCase: transitionCase{name: "delete error", setup: func(m *mocks.MockPlatform, _ *world) {
			m.EXPECT().DeleteAppInst(anyCtx, anyV, anyV, anyV, anyV, anyV).Return(errBoom)
		}, wantState: []string{sDeleting, sDeleteError}, wantErrs: []string{"boom"}, wantIs: []error{errBoom}},
			state: edgeproto.TrackedState_TRACKED_STATE_DELETE_REQUESTED},
		{transitionCase: transitionCase{name: "delete without cluster or app", setup: func(m *mocks.MockPlatform, w *world) {
			w.clusters.Delete(executor.KeyString(clusterKey("c1")))
			w.apps.Delete(executor.KeyString(appKey1))
			m.EXPECT().DeleteAppInst(anyCtx, anyV, anyV, anyV, anyV, anyV).Return(nil)
		}, wantState: []string{sDeleting, sDeleteDone}}, state: edgeproto.TrackedState_TRACKED_STATE_DELETE_REQUESTED},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			inst := appInst("i1", appKey1, "c1", tc.state)
			inst.PowerState = tc.power
			w := runTransition(t, tc.transitionCase, inst, "AppInst", func(ww *world) []string {
				info, _ := ww.appInstInfos.Get(executor.KeyString(inst))
				return info.GetErrors()
			})
			var power []string
			for _, r := range w.rec.reports() {
				if r.Kind == "AppInst" && r.Power != "" {
					power = append(power, r.Power)
				}
			}
			if !slices.Equal(power, tc.wantPower) {
				t.Errorf("power states = %v, want %v", power, tc.wantPower)
			}
			info, _ := w.appInstInfos.Get(executor.KeyString(inst))
			if tc.wantIs == nil && tc.state != edgeproto.TrackedState_TRACKED_STATE_DELETE_REQUESTED &&
				!slices.Equal(info.GetRuntimeInfo().GetPorts(), runtime.Ports) {
				t.Errorf("runtime info = %v, want %v", info.GetRuntimeInfo(), runtime)
			}
		})
	}
}
