package executor_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/executor/mocks"
	"go.uber.org/mock/gomock"
)

func TestTrustPolicyExceptionTransitions(t *testing.T) {
	excKey := &edgeproto.TrustPolicyExceptionKey{AppKey: appKey1.Clone(), Name: "allow-dns"}
	instance := func(name string, s edgeproto.TrackedState) *edgeproto.TrustPolicyExceptionInstance {
		return &edgeproto.TrustPolicyExceptionInstance{AppInstKey: &edgeproto.AppInstKey{Name: name, Organization: "dev"},
			CloudletKey: cloudletKey.Clone(), State: s}
	}
	tests := []struct {
		name      string
		state     edgeproto.TrustPolicyExceptionState
		instances []*edgeproto.TrustPolicyExceptionInstance
		setup     func(m *mocks.MockPlatform)
		want      map[string][]string // per instance name
		wantErr   bool
	}{
		{name: "apply and remove", state: edgeproto.TrustPolicyExceptionState_TRUST_POLICY_EXCEPTION_STATE_ACTIVE,
			instances: []*edgeproto.TrustPolicyExceptionInstance{
				instance("i1", edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED),
				instance("i2", edgeproto.TrackedState_TRACKED_STATE_DELETE_REQUESTED),
				instance("i3", edgeproto.TrackedState_TRACKED_STATE_READY),
			},
			setup: func(m *mocks.MockPlatform) {
				m.EXPECT().UpdateTrustPolicyException(anyCtx, anyV, anyV, clusterKeyMatcher("c1"), appInstKeyMatcher("i1")).Return(nil)
				m.EXPECT().DeleteTrustPolicyException(anyCtx, anyV, anyV, clusterKeyMatcher("c1"), appInstKeyMatcher("i2")).Return(nil)
			},
			want: map[string][]string{
				"i1": {sCreating, sReady},
				"i2": {sDeleting, sDeleteDone},
			}},
		{name: "update error", state: edgeproto.TrustPolicyExceptionState_TRUST_POLICY_EXCEPTION_STATE_ACTIVE,
			instances: []*edgeproto.TrustPolicyExceptionInstance{instance("i1", edgeproto.TrackedState_TRACKED_STATE_UPDATE_REQUESTED)},
			setup: func(m *mocks.MockPlatform) {
				m.EXPECT().UpdateTrustPolicyException(anyCtx, anyV, anyV, anyV, anyV).Return(errBoom)
			},
			want: map[string][]string{"i1": {sUpdating, sUpdateError}}, wantErr: true},
		{name: "removal from the cluster of a gone instance", state: edgeproto.TrustPolicyExceptionState_TRUST_POLICY_EXCEPTION_STATE_REJECTED,
			instances: []*edgeproto.TrustPolicyExceptionInstance{
				{AppInstKey: &edgeproto.AppInstKey{Name: "gone", Organization: "dev"}, CloudletKey: cloudletKey.Clone(),
					ClusterKey: &edgeproto.ClusterKey{Name: "c9", Organization: "dev"}, State: edgeproto.TrackedState_TRACKED_STATE_DELETE_REQUESTED},
				{AppInstKey: &edgeproto.AppInstKey{Name: "gone2", Organization: "dev"}, CloudletKey: cloudletKey.Clone(),
					State: edgeproto.TrackedState_TRACKED_STATE_DELETE_REQUESTED},
			},
			setup: func(m *mocks.MockPlatform) {
				// Only the entry naming its cluster calls the platform.
				m.EXPECT().DeleteTrustPolicyException(anyCtx, anyV, anyV, clusterKeyMatcher("c9"), anyV).Return(nil)
			},
			want: map[string][]string{
				executor.KeyString(&edgeproto.AppInstKey{Name: "gone", Organization: "dev"}):  {sDeleting, sDeleteDone},
				executor.KeyString(&edgeproto.AppInstKey{Name: "gone2", Organization: "dev"}): {sDeleting, sDeleteDone},
			}},
		{name: "not approved", state: edgeproto.TrustPolicyExceptionState_TRUST_POLICY_EXCEPTION_STATE_APPROVAL_REQUESTED,
			instances: []*edgeproto.TrustPolicyExceptionInstance{instance("i1", edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED)},
			want:      map[string][]string{"i1": {sCreating, sCreateError}}, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newMockPlatform(t)
			if tc.setup != nil {
				tc.setup(m)
			}
			w := newWorld()
			w.cloudlets.Put(cloudlet(edgeproto.TrackedState_TRACKED_STATE_READY))
			for _, n := range []string{"i1", "i2", "i3"} {
				w.appInsts.Put(appInst(n, appKey1, "c1", edgeproto.TrackedState_TRACKED_STATE_READY))
			}
			eng, err := executor.New(w.config(m))
			if err != nil {
				t.Fatal(err)
			}
			start(t, eng)
			exc := &edgeproto.TrustPolicyException{Key: excKey.Clone(), State: tc.state, Instances: tc.instances}
			err = wait(t, mustSubmit(t, eng, exc))
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			got := map[string][]string{}
			for _, r := range w.rec.reports() {
				if r.Kind != "TrustPolicyException" {
					continue
				}
				name := r.Key[len(executor.KeyString(excKey))+1:]
				name = instanceName(name)
				if s := got[name]; len(s) == 0 || s[len(s)-1] != r.State {
					got[name] = append(got[name], r.State)
				}
			}
			for n, want := range tc.want {
				// The first report of an instance is the state it was
				// submitted in (the whole list travels in every report).
				states := got[n]
				if len(states) > 0 && edgeproto.IsRequestedState(edgeproto.TrackedState(edgeproto.TrackedState_value[states[0]])) {
					states = states[1:]
				}
				if !slices.Equal(states, want) {
					t.Errorf("instance %s: states %v, want %v", n, states, want)
				}
			}
			final, _ := w.tpes.Get(executor.KeyString(excKey))
			if len(final.GetInstances()) != len(tc.instances) {
				t.Errorf("final instances = %v", final.GetInstances())
			}
		})
	}
}

// instanceName extracts the name from an AppInstKey string.
func instanceName(keyString string) string {
	for _, n := range []string{"i1", "i2", "i3"} {
		if keyString == executor.KeyString(&edgeproto.AppInstKey{Name: n, Organization: "dev"}) {
			return n
		}
	}
	return keyString
}

// On a platform without trust policies the entry fails with the
// platform's own refusal when it gives one, else with the engine's; the
// entry's instance is the one the platform is asked about.
func TestTrustPolicyExceptionOnUnsupportedPlatform(t *testing.T) {
	for _, tc := range []struct {
		name    string
		answer  error
		wantMsg string
	}{
		{"the platform says why", fmt.Errorf("mock cannot enforce network rules: %w", executor.ErrUnsupported), "mock cannot enforce network rules"},
		{"the platform says nothing", nil, `trust policy exception on platform "mock"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := mocks.NewMockPlatform(gomock.NewController(t))
			m.EXPECT().Features().Return(executor.Features{PlatformType: "mock"}).AnyTimes()
			m.EXPECT().GatherCloudletInfo(anyCtx, anyV, anyV).AnyTimes()
			m.EXPECT().UpdateTrustPolicyException(anyCtx, anyV, anyV, clusterKeyMatcher("c1"), appInstKeyMatcher("i1")).Return(tc.answer)
			w := newWorld()
			w.cloudlets.Put(cloudlet(edgeproto.TrackedState_TRACKED_STATE_READY))
			w.appInsts.Put(appInst("i1", appKey1, "c1", edgeproto.TrackedState_TRACKED_STATE_READY))
			eng, err := executor.New(w.config(m))
			if err != nil {
				t.Fatal(err)
			}
			start(t, eng)
			excKey := &edgeproto.TrustPolicyExceptionKey{AppKey: appKey1.Clone(), Name: "allow-dns"}
			exc := &edgeproto.TrustPolicyException{Key: excKey, State: edgeproto.TrustPolicyExceptionState_TRUST_POLICY_EXCEPTION_STATE_ACTIVE,
				Instances: []*edgeproto.TrustPolicyExceptionInstance{{AppInstKey: &edgeproto.AppInstKey{Name: "i1", Organization: "dev"},
					CloudletKey: cloudletKey.Clone(), State: edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED}}}
			if err := wait(t, mustSubmit(t, eng, exc)); !errors.Is(err, executor.ErrUnsupported) {
				t.Fatalf("err = %v, want ErrUnsupported", err)
			}
			final, _ := w.tpes.Get(executor.KeyString(excKey))
			in := final.GetInstances()[0]
			if in.GetState() != edgeproto.TrackedState_TRACKED_STATE_CREATE_ERROR || len(in.GetErrors()) != 1 || !strings.Contains(in.GetErrors()[0], tc.wantMsg) {
				t.Errorf("entry %v %q, want CREATE_ERROR saying %q", in.GetState(), in.GetErrors(), tc.wantMsg)
			}
		})
	}
}
