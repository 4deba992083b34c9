package executor_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/executor/mocks"
)

// errUnavailable is what a Getter over a remote store returns when the
// store cannot answer.
var errUnavailable = errors.New("store unavailable")

func unavailable[K, V any]() executor.Getter[K, V] {
	return executor.GetterFunc[K, V](func(context.Context, K) (V, error) {
		var zero V
		return zero, errUnavailable
	})
}

func TestCacheGetterNotFoundNamesKindAndKey(t *testing.T) {
	c := executor.NewCache[*edgeproto.Cloudlet]()
	g := executor.CacheGetter[*edgeproto.CloudletKey](c)
	_, err := g.Get(context.Background(), cloudletKey)
	if !errors.Is(err, executor.ErrNotFound) {
		t.Fatalf("err = %v, want ErrNotFound", err)
	}
	var nf *executor.NotFoundError
	if !errors.As(err, &nf) || nf.Kind != "Cloudlet" || nf.Key != executor.KeyString(cloudletKey) {
		t.Fatalf("err = %#v, want a *NotFoundError naming Cloudlet %s", err, executor.KeyString(cloudletKey))
	}
	if !strings.Contains(err.Error(), "Cloudlet") || !strings.Contains(err.Error(), executor.KeyString(cloudletKey)) {
		t.Errorf("error %q does not name the kind and the key", err)
	}
	c.Put(cloudlet(edgeproto.TrackedState_TRACKED_STATE_READY))
	got, err := g.Get(context.Background(), cloudletKey)
	if err != nil || executor.KeyString(got) != executor.KeyString(cloudletKey) {
		t.Fatalf("Get after Put = %v, %v", got, err)
	}
}

// TestUnavailableLookupNeverActs: a dependency the host cannot read (an
// error other than not found) fails the operation with its error state; the
// platform is never called (the mock has no expectations, so any call
// fails the test), not even for a delete, which would proceed with the key
// alone if the dependency were merely gone.
func TestUnavailableLookupNeverActs(t *testing.T) {
	noCloudlets := func(o *executor.Objects) {
		o.Cloudlets = unavailable[*edgeproto.CloudletKey, *edgeproto.Cloudlet]()
	}
	noClusters := func(o *executor.Objects) {
		o.ClusterInsts = unavailable[*edgeproto.ClusterKey, *edgeproto.ClusterInst]()
	}
	noApps := func(o *executor.Objects) { o.Apps = unavailable[*edgeproto.AppKey, *edgeproto.App]() }
	tests := []struct {
		name  string
		obj   protoMsg
		kind  string
		objs  func(o *executor.Objects)
		state string
	}{
		{"cluster create", cluster("c1", edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED), "ClusterInst", noCloudlets, sCreateError},
		{"cluster update", cluster("c1", edgeproto.TrackedState_TRACKED_STATE_UPDATE_REQUESTED), "ClusterInst", noCloudlets, sUpdateError},
		{"cluster delete", cluster("c1", edgeproto.TrackedState_TRACKED_STATE_DELETE_REQUESTED), "ClusterInst", noCloudlets, sDeleteError},
		{"app instance create, cluster", appInst("i1", appKey1, "c1", edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED), "AppInst", noClusters, sCreateError},
		{"app instance create, app", appInst("i1", appKey1, "c1", edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED), "AppInst", noApps, sCreateError},
		{"app instance update", appInst("i1", appKey1, "c1", edgeproto.TrackedState_TRACKED_STATE_UPDATE_REQUESTED), "AppInst", noClusters, sUpdateError},
		{"app instance delete, cluster", appInst("i1", appKey1, "c1", edgeproto.TrackedState_TRACKED_STATE_DELETE_REQUESTED), "AppInst", noClusters, sDeleteError},
		{"app instance delete, app", appInst("i1", appKey1, "c1", edgeproto.TrackedState_TRACKED_STATE_DELETE_REQUESTED), "AppInst", noApps, sDeleteError},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			runTransition(t, transitionCase{
				objects:   tc.objs,
				wantState: []string{tc.state},
				wantErrs:  nil,
				wantIs:    []error{errUnavailable},
				check: func(t *testing.T, w *world) {
					var errs []string
					switch tc.kind {
					case "ClusterInst":
						info, _ := w.clusterInfos.Get(executor.KeyString(clusterKey("c1")))
						errs = info.GetErrors()
					default:
						info, _ := w.appInstInfos.Get(executor.KeyString(&edgeproto.AppInstKey{Name: "i1", Organization: "dev"}))
						errs = info.GetErrors()
					}
					if len(errs) != 1 || !strings.Contains(errs[0], errUnavailable.Error()) {
						t.Errorf("reported errors %q, want the lookup failure", errs)
					}
				},
			}, tc.obj, tc.kind, nil)
		})
	}
}

// TestTrustPolicyLookups: the cloudlet's trust policy and an exception's
// app instance and cloudlet follow the same rules as other lookups.
func TestTrustPolicyLookups(t *testing.T) {
	excKey := &edgeproto.TrustPolicyExceptionKey{AppKey: appKey1.Clone(), Name: "allow-dns"}
	exc := func(s edgeproto.TrackedState) *edgeproto.TrustPolicyException {
		return &edgeproto.TrustPolicyException{Key: excKey.Clone(),
			State: edgeproto.TrustPolicyExceptionState_TRUST_POLICY_EXCEPTION_STATE_ACTIVE,
			Instances: []*edgeproto.TrustPolicyExceptionInstance{{
				AppInstKey: &edgeproto.AppInstKey{Name: "i1", Organization: "dev"}, CloudletKey: cloudletKey.Clone(), State: s}}}
	}
	tests := []struct {
		name    string
		obj     protoMsg
		objs    func(o *executor.Objects)
		setup   func(m *mocks.MockPlatform)
		wantIs  error // nil: success
		wantTPE string
	}{
		{name: "policy unavailable", obj: func() protoMsg {
			c := cloudlet(edgeproto.TrackedState_TRACKED_STATE_CREATE_ERROR)
			c.TrustPolicy, c.TrustPolicyState = "tp1", edgeproto.TrackedState_TRACKED_STATE_UPDATE_REQUESTED
			return c
		}(), objs: func(o *executor.Objects) {
			o.TrustPolicies = unavailable[*edgeproto.TrustPolicyKey, *edgeproto.TrustPolicy]()
		}, wantIs: errUnavailable},
		{name: "policy not found", obj: func() protoMsg {
			c := cloudlet(edgeproto.TrackedState_TRACKED_STATE_CREATE_ERROR)
			c.TrustPolicy, c.TrustPolicyState = "tp1", edgeproto.TrackedState_TRACKED_STATE_UPDATE_REQUESTED
			return c
		}(), wantIs: executor.ErrNotFound},
		{name: "exception delete, app instance unavailable", obj: exc(edgeproto.TrackedState_TRACKED_STATE_DELETE_REQUESTED),
			objs: func(o *executor.Objects) {
				o.AppInsts = unavailable[*edgeproto.AppInstKey, *edgeproto.AppInst]()
			}, wantIs: errUnavailable, wantTPE: sDeleteError},
		{name: "exception delete, app instance gone", obj: exc(edgeproto.TrackedState_TRACKED_STATE_DELETE_REQUESTED),
			objs: func(o *executor.Objects) { o.AppInsts = nil }, wantTPE: sDeleteDone},
		{name: "exception delete, cloudlet unavailable", obj: exc(edgeproto.TrackedState_TRACKED_STATE_DELETE_REQUESTED),
			objs: func(o *executor.Objects) {
				o.Cloudlets = unavailable[*edgeproto.CloudletKey, *edgeproto.Cloudlet]()
			}, wantIs: errUnavailable, wantTPE: sDeleteError},
		{name: "exception delete, cloudlet gone", obj: exc(edgeproto.TrackedState_TRACKED_STATE_DELETE_REQUESTED),
			objs: func(o *executor.Objects) { o.Cloudlets = nil },
			setup: func(m *mocks.MockPlatform) {
				m.EXPECT().DeleteTrustPolicyException(anyCtx, anyV, anyV, clusterKeyMatcher("c1"), anyV).Return(nil)
			}, wantTPE: sDeleteDone},
		{name: "exception create, app instance gone", obj: exc(edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED),
			objs: func(o *executor.Objects) { o.AppInsts = nil }, wantIs: executor.ErrNotFound, wantTPE: sCreateError},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := newMockPlatform(t)
			if tc.setup != nil {
				tc.setup(m)
			}
			w := newWorld()
			w.cloudlets.Put(cloudlet(edgeproto.TrackedState_TRACKED_STATE_READY))
			w.appInsts.Put(appInst("i1", appKey1, "c1", edgeproto.TrackedState_TRACKED_STATE_READY))
			cfg := w.config(m)
			if tc.objs != nil {
				tc.objs(&cfg.Objects)
			}
			eng, err := executor.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			start(t, eng)
			err = wait(t, mustSubmit(t, eng, tc.obj))
			if tc.wantIs == nil && err != nil || tc.wantIs != nil && !errors.Is(err, tc.wantIs) {
				t.Fatalf("err = %v, want %v", err, tc.wantIs)
			}
			if tc.wantTPE != "" {
				final, _ := w.tpes.Get(executor.KeyString(excKey))
				if got := final.GetInstances()[0].GetState().String(); got != tc.wantTPE {
					t.Errorf("instance state %s, want %s", got, tc.wantTPE)
				}
			} else if got := cloudletInfo(w).GetTrustPolicyState(); got != edgeproto.TrackedState_TRACKED_STATE_UPDATE_ERROR {
				t.Errorf("trust policy state %v, want UPDATE_ERROR", got)
			}
		})
	}
}
