package executor_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/fieldmap"
	"google.golang.org/protobuf/proto"
)

// testTimeout bounds every wait of a test; it is a deadline, not a
// synchronisation delay.
const testTimeout = 10 * time.Second

func waitCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

// eventually polls cond until it holds or the test deadline passes.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond) // polling interval, not synchronisation
	}
}

// report is one report a sender received, reduced to what tests compare.
type report struct {
	Kind   string
	Key    string
	State  string
	Fields string
	Errors []string
	Power  string
	Step   string
}

// recorder keeps the reports of every kind, in order per object and
// overall.
type recorder struct {
	mu  sync.Mutex
	all []report
}

func (r *recorder) add(rep report) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.all = append(r.all, rep)
}

func (r *recorder) reports() []report {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]report(nil), r.all...)
}

// states returns the states reported for one object, in order, leaving out
// reports that did not carry a state.
func (r *recorder) states(kind, key string) []string {
	var out []string
	for _, rep := range r.reports() {
		if rep.Kind == kind && rep.Key == key && rep.State != "" {
			out = append(out, rep.State)
		}
	}
	return out
}

// byObject groups the states reported per object.
func (r *recorder) byObject() map[string][]string {
	out := map[string][]string{}
	for _, rep := range r.reports() {
		if rep.State != "" {
			out[rep.Kind+"/"+rep.Key] = append(out[rep.Kind+"/"+rep.Key], rep.State)
		}
	}
	return out
}

func recordCluster(r *recorder, next executor.Sender[*edgeproto.ClusterInstInfo]) executor.Sender[*edgeproto.ClusterInstInfo] {
	return executor.SenderFunc[*edgeproto.ClusterInstInfo](func(ctx context.Context, info *edgeproto.ClusterInstInfo, fm *fieldmap.FieldMap) error {
		rep := report{Kind: "ClusterInst", Key: executor.KeyString(info), Fields: fm.String(), Errors: info.Errors, Step: info.GetStatus().GetStepName()}
		if fm.Has(edgeproto.ClusterInstInfoFieldState) {
			rep.State = info.State.String()
		}
		r.add(rep)
		if next == nil {
			return nil
		}
		return next.Send(ctx, info, fm)
	})
}

func recordAppInst(r *recorder, next executor.Sender[*edgeproto.AppInstInfo]) executor.Sender[*edgeproto.AppInstInfo] {
	return executor.SenderFunc[*edgeproto.AppInstInfo](func(ctx context.Context, info *edgeproto.AppInstInfo, fm *fieldmap.FieldMap) error {
		rep := report{Kind: "AppInst", Key: executor.KeyString(info), Fields: fm.String(), Errors: info.Errors, Step: info.GetStatus().GetStepName()}
		if fm.Has(edgeproto.AppInstInfoFieldState) {
			rep.State = info.State.String()
		}
		if fm.Has(edgeproto.AppInstInfoFieldPowerState) {
			rep.Power = info.PowerState.String()
		}
		r.add(rep)
		if next == nil {
			return nil
		}
		return next.Send(ctx, info, fm)
	})
}

func recordCloudlet(r *recorder, next executor.Sender[*edgeproto.CloudletInfo]) executor.Sender[*edgeproto.CloudletInfo] {
	return executor.SenderFunc[*edgeproto.CloudletInfo](func(ctx context.Context, info *edgeproto.CloudletInfo, fm *fieldmap.FieldMap) error {
		rep := report{Kind: "Cloudlet", Key: executor.KeyString(info), Fields: fm.String(), Errors: info.Errors, Step: info.GetStatus().GetStepName()}
		if fm.Has(edgeproto.CloudletInfoFieldState) {
			rep.State = info.State.String()
		}
		r.add(rep)
		if next == nil {
			return nil
		}
		return next.Send(ctx, info, fm)
	})
}

func recordTPE(r *recorder, next executor.Sender[*edgeproto.TrustPolicyException]) executor.Sender[*edgeproto.TrustPolicyException] {
	return executor.SenderFunc[*edgeproto.TrustPolicyException](func(ctx context.Context, info *edgeproto.TrustPolicyException, fm *fieldmap.FieldMap) error {
		for _, in := range info.Instances {
			r.add(report{Kind: "TrustPolicyException", Key: executor.KeyString(info) + "@" + executor.KeyString(in.AppInstKey),
				State: in.State.String(), Fields: fm.String(), Errors: in.Errors})
		}
		if next == nil {
			return nil
		}
		return next.Send(ctx, info, fm)
	})
}

// world is the host side of a test: the objects the engine looks up (as a
// controller holds them) and the Info caches reports land in.
type world struct {
	cloudlets *executor.Cache[*edgeproto.Cloudlet]
	clusters  *executor.Cache[*edgeproto.ClusterInst]
	apps      *executor.Cache[*edgeproto.App]
	appInsts  *executor.Cache[*edgeproto.AppInst]
	policies  *executor.Cache[*edgeproto.TrustPolicy]

	cloudletInfos *executor.Cache[*edgeproto.CloudletInfo]
	clusterInfos  *executor.Cache[*edgeproto.ClusterInstInfo]
	appInstInfos  *executor.Cache[*edgeproto.AppInstInfo]
	tpes          *executor.Cache[*edgeproto.TrustPolicyException]
	rec           *recorder
}

func newWorld() *world {
	return &world{
		cloudlets:     executor.NewCache[*edgeproto.Cloudlet](),
		clusters:      executor.NewCache[*edgeproto.ClusterInst](),
		apps:          executor.NewCache[*edgeproto.App](),
		appInsts:      executor.NewCache[*edgeproto.AppInst](),
		policies:      executor.NewCache[*edgeproto.TrustPolicy](),
		cloudletInfos: executor.NewCache[*edgeproto.CloudletInfo](),
		clusterInfos:  executor.NewCache[*edgeproto.ClusterInstInfo](),
		appInstInfos:  executor.NewCache[*edgeproto.AppInstInfo](),
		tpes:          executor.NewCache[*edgeproto.TrustPolicyException](),
		rec:           &recorder{},
	}
}

func (w *world) objects() executor.Objects {
	return executor.Objects{
		Cloudlets:     executor.CacheGetter[*edgeproto.CloudletKey](w.cloudlets),
		ClusterInsts:  executor.CacheGetter[*edgeproto.ClusterKey](w.clusters),
		Apps:          executor.CacheGetter[*edgeproto.AppKey](w.apps),
		AppInsts:      executor.CacheGetter[*edgeproto.AppInstKey](w.appInsts),
		TrustPolicies: executor.CacheGetter[*edgeproto.TrustPolicyKey](w.policies),

		ClusterInstsOn: executor.CacheLister(w.clusters),
		AppInstsOn:     executor.CacheLister(w.appInsts),
	}
}

// config wires a world's caches, behind recorders, into an engine config.
func (w *world) config(p executor.Platform) executor.Config {
	return executor.Config{
		Platform:              p,
		Objects:               w.objects(),
		CloudletInfos:         recordCloudlet(w.rec, w.cloudletInfos),
		ClusterInstInfos:      recordCluster(w.rec, w.clusterInfos),
		AppInstInfos:          recordAppInst(w.rec, w.appInstInfos),
		TrustPolicyExceptions: recordTPE(w.rec, w.tpes),
	}
}

// start runs eng until the test ends. The returned stop cancels Start's
// context and waits until Start returned; it may be called more than once.
func start(t testing.TB, eng *executor.Engine) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- eng.Start(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Start: %v", err)
				}
			case <-time.After(testTimeout):
				t.Errorf("Start did not return after cancel")
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

func mustSubmit(t testing.TB, eng *executor.Engine, obj proto.Message) *executor.Handle {
	t.Helper()
	h, err := eng.Submit(obj)
	if err != nil {
		t.Fatalf("Submit: %v", err)
	}
	return h
}

func wait(t testing.TB, h *executor.Handle) error {
	t.Helper()
	ctx := waitCtx(t)
	err := h.Wait(ctx)
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
		t.Fatalf("timed out waiting for %s %s", h.Kind(), h.Key())
	}
	return err
}

// Test objects.

var (
	cloudletKey = &edgeproto.CloudletKey{Organization: "op", Name: "site1"}
	appKey1     = &edgeproto.AppKey{Organization: "dev", Name: "web", Version: "1"}
	appKey2     = &edgeproto.AppKey{Organization: "dev", Name: "api", Version: "2"}
)

func cloudlet(state edgeproto.TrackedState) *edgeproto.Cloudlet {
	return &edgeproto.Cloudlet{
		Key: cloudletKey.Clone(), State: state, PlatformType: "fake",
		ResourceQuotas: []*edgeproto.ResourceQuota{{Name: "RAM", Value: 8192}},
		AccessVars:     map[string]string{"password": "s3cret-access"},
	}
}

func clusterKey(name string) *edgeproto.ClusterKey {
	return &edgeproto.ClusterKey{Name: name, Organization: "dev"}
}

func cluster(name string, state edgeproto.TrackedState) *edgeproto.ClusterInst {
	return &edgeproto.ClusterInst{Key: clusterKey(name), CloudletKey: cloudletKey.Clone(), State: state, FlavorName: "fake.medium"}
}

func app(key *edgeproto.AppKey) *edgeproto.App {
	return &edgeproto.App{Key: key.Clone(), ImageType: edgeproto.ImageType_IMAGE_TYPE_DOCKER,
		Ports:   []*edgeproto.Port{{Proto: edgeproto.PortProtocol_PORT_PROTOCOL_TCP, InternalPort: 80}},
		EnvVars: []*edgeproto.EnvVar{{Name: "TOKEN", Secret: true, SecretValue: "s3cret-env"}}}
}

func appInst(name string, ak *edgeproto.AppKey, cluster string, state edgeproto.TrackedState) *edgeproto.AppInst {
	return &edgeproto.AppInst{Key: &edgeproto.AppInstKey{Name: name, Organization: "dev"}, AppKey: ak.Clone(),
		ClusterKey: clusterKey(cluster), CloudletKey: cloudletKey.Clone(), State: state}
}

type protoMsg = proto.Message

// clusterKeyMatcher matches a *ClusterKey by name.
type clusterKeyMatcher string

func (m clusterKeyMatcher) Matches(x any) bool {
	k, ok := x.(*edgeproto.ClusterKey)
	return ok && k.GetName() == string(m)
}

func (m clusterKeyMatcher) String() string { return "cluster key named " + string(m) }

// appInstKeyMatcher matches an *AppInstKey by name.
type appInstKeyMatcher string

func (m appInstKeyMatcher) Matches(x any) bool {
	k, ok := x.(*edgeproto.AppInstKey)
	return ok && k.GetName() == string(m)
}

func (m appInstKeyMatcher) String() string { return "app instance key named " + string(m) }
