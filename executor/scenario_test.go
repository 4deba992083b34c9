package executor_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/fieldmap"
	"github.com/edgekit/edgekit/platforms/fake"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
)

// receiver is the host side that receives reports: Info caches as the
// controller would hold them, and the states they went through, per object,
// as observed on the receiving side.
type receiver struct {
	cloudletInfos *executor.Cache[*edgeproto.CloudletInfo]
	clusterInfos  *executor.Cache[*edgeproto.ClusterInstInfo]
	appInstInfos  *executor.Cache[*edgeproto.AppInstInfo]

	mu     sync.Mutex
	states map[string][]string
}

func newReceiver() *receiver {
	r := &receiver{
		cloudletInfos: executor.NewCache[*edgeproto.CloudletInfo](),
		clusterInfos:  executor.NewCache[*edgeproto.ClusterInstInfo](),
		appInstInfos:  executor.NewCache[*edgeproto.AppInstInfo](),
		states:        map[string][]string{},
	}
	r.cloudletInfos.OnChange(func(k string, i *edgeproto.CloudletInfo, fm *fieldmap.FieldMap) {
		r.note("Cloudlet/"+k, fm.Has(edgeproto.CloudletInfoFieldState), i.State.String())
	})
	r.clusterInfos.OnChange(func(k string, i *edgeproto.ClusterInstInfo, fm *fieldmap.FieldMap) {
		r.note("ClusterInst/"+k, fm.Has(edgeproto.ClusterInstInfoFieldState), i.State.String())
	})
	r.appInstInfos.OnChange(func(k string, i *edgeproto.AppInstInfo, fm *fieldmap.FieldMap) {
		r.note("AppInst/"+k, fm.Has(edgeproto.AppInstInfoFieldState), i.State.String()+"/"+i.PowerState.String())
	})
	return r
}

func (r *receiver) note(obj string, hasState bool, state string) {
	if !hasState {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.states[obj] = append(r.states[obj], state)
}

// transport wires an engine's senders to a receiver and tells when every
// report sent so far has been applied.
type transport interface {
	senders(r *receiver) (executor.Sender[*edgeproto.CloudletInfo], executor.Sender[*edgeproto.ClusterInstInfo], executor.Sender[*edgeproto.AppInstInfo])
	sync(t *testing.T)
}

// cacheTransport reports straight into the receiving caches (the CRM).
type cacheTransport struct{}

func (cacheTransport) senders(r *receiver) (executor.Sender[*edgeproto.CloudletInfo], executor.Sender[*edgeproto.ClusterInstInfo], executor.Sender[*edgeproto.AppInstInfo]) {
	return r.cloudletInfos, r.clusterInfos, r.appInstInfos
}

func (cacheTransport) sync(*testing.T) {}

// streamTransport sends reports in wire form over channels, decoded and
// applied by receiving goroutines (the CCRM).
type streamTransport struct {
	sent, applied atomic.Int64
	ctx           context.Context
}

func streamTo[T executor.Object[T]](s *streamTransport, dst *executor.Cache[T]) executor.Sender[T] {
	st := executor.NewStream[T](16)
	go func() {
		for msg := range st.Messages() {
			info, fm, err := st.Decode(msg)
			if err != nil {
				panic(err) // a decoding failure is a bug the test must not hide
			}
			dst.Apply(info, fm)
			s.applied.Add(1)
		}
	}()
	context.AfterFunc(s.ctx, st.Close)
	return executor.SenderFunc[T](func(ctx context.Context, info T, fm *fieldmap.FieldMap) error {
		s.sent.Add(1)
		return st.Send(ctx, info, fm)
	})
}

func (s *streamTransport) senders(r *receiver) (executor.Sender[*edgeproto.CloudletInfo], executor.Sender[*edgeproto.ClusterInstInfo], executor.Sender[*edgeproto.AppInstInfo]) {
	return streamTo(s, r.cloudletInfos), streamTo(s, r.clusterInfos), streamTo(s, r.appInstInfos)
}

func (s *streamTransport) sync(t *testing.T) {
	eventually(t, "the stream to drain", func() bool { return s.applied.Load() == s.sent.Load() })
}

// runScenario runs a cloudlet, a cluster, two apps, an update, a failure
// and deletes through an engine reporting over tr, acting as the
// controller in between (applying reported states to the objects).
func runScenario(t *testing.T, tr transport) *receiver {
	rcv := newReceiver()
	w := newWorld()
	p := fake.New(fake.Options{})
	cfg := executor.Config{Platform: p, Objects: w.objects(), Workers: 4}
	cfg.CloudletInfos, cfg.ClusterInstInfos, cfg.AppInstInfos = tr.senders(rcv)
	eng, err := executor.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	start(t, eng)

	// do submits objs at once, waits for them and applies the reported
	// states to the objects, as the controller would.
	do := func(objs ...protoMsg) []error {
		t.Helper()
		var hs []*executor.Handle
		for _, o := range objs {
			switch o := o.(type) {
			case *edgeproto.Cloudlet:
				w.cloudlets.Put(o)
			case *edgeproto.ClusterInst:
				w.clusters.Put(o)
			case *edgeproto.AppInst:
				w.appInsts.Put(o)
			}
			hs = append(hs, mustSubmit(t, eng, o))
		}
		errs := make([]error, len(hs))
		for i, h := range hs {
			errs[i] = wait(t, h)
		}
		// The resources refreshes the operations asked for end too.
		if err := eng.Wait(waitCtx(t)); err != nil {
			t.Fatal(err)
		}
		tr.sync(t)
		for _, o := range objs {
			switch o := o.(type) {
			case *edgeproto.ClusterInst:
				info, _ := rcv.clusterInfos.Get(executor.KeyString(o))
				if edgeproto.AcceptsInfoState(o.State, info.State) {
					o.State = info.State
					w.clusters.Put(o)
				}
			case *edgeproto.AppInst:
				info, _ := rcv.appInstInfos.Get(executor.KeyString(o))
				if edgeproto.AcceptsInfoState(o.State, info.State) {
					o.State = info.State
					w.appInsts.Put(o)
				}
			}
		}
		return errs
	}
	must := func(errs []error) {
		t.Helper()
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	const (
		create = edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED
		update = edgeproto.TrackedState_TRACKED_STATE_UPDATE_REQUESTED
		del    = edgeproto.TrackedState_TRACKED_STATE_DELETE_REQUESTED
	)
	w.apps.Put(app(appKey1))
	w.apps.Put(app(appKey2))

	must(do(cloudlet(create)))
	must(do(cluster("c1", create)))
	// One after the other: the platform hands out ports in arrival order,
	// and the final objects must not depend on scheduling.
	must(do(appInst("i1", appKey1, "c1", create)))
	must(do(appInst("i2", appKey2, "c1", create)))
	off := appInst("i1", appKey1, "c1", update)
	off.PowerState = edgeproto.PowerState_POWER_STATE_POWER_OFF_REQUESTED
	must(do(off))
	big := cluster("c2", create)
	big.FlavorName = "fake.large" // 16384 MB against a quota of 8192 MB
	if errs := do(big); !errors.Is(errs[0], executor.ErrInsufficientResources) {
		t.Fatalf("oversized cluster: %v, want ErrInsufficientResources", errs[0])
	}
	must(do(appInst("i1", appKey1, "c1", del), appInst("i2", appKey2, "c1", del)))
	must(do(cluster("c1", del), cluster("c2", del)))
	must(do(cloudlet(del)))
	if nc, na := p.Counts(); nc != 0 || na != 0 {
		t.Errorf("platform left %d clusters, %d app instances", nc, na)
	}
	return rcv
}

// TestHostIndependence runs one scenario through a cache-backed and a
// stream-backed transport: both must see the same states and end with the
// same objects.
func TestHostIndependence(t *testing.T) {
	viaCache := runScenario(t, cacheTransport{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	viaStream := runScenario(t, &streamTransport{ctx: ctx})

	if diff := cmp.Diff(viaCache.states, viaStream.states); diff != "" {
		t.Errorf("reported states differ (-cache +stream):\n%s", diff)
	}
	for name, pair := range map[string][2]any{
		"CloudletInfo":    {viaCache.cloudletInfos.List(), viaStream.cloudletInfos.List()},
		"ClusterInstInfo": {viaCache.clusterInfos.List(), viaStream.clusterInfos.List()},
		"AppInstInfo":     {viaCache.appInstInfos.List(), viaStream.appInstInfos.List()},
	} {
		if diff := cmp.Diff(pair[0], pair[1], protocmp.Transform()); diff != "" {
			t.Errorf("final %s differ (-cache +stream):\n%s", name, diff)
		}
	}

	want := map[string][]string{
		"Cloudlet/" + executor.KeyString(cloudletKey): {
			"CLOUDLET_STATE_INIT", "CLOUDLET_STATE_READY", "CLOUDLET_STATE_NOT_PRESENT"},
		"ClusterInst/" + executor.KeyString(clusterKey("c1")): {sCreating, sReady, sDeleting, sDeleteDone},
		"ClusterInst/" + executor.KeyString(clusterKey("c2")): {sCreating, sCreateError, sDeleting, sDeleteDone},
		"AppInst/" + executor.KeyString(&edgeproto.AppInstKey{Name: "i1", Organization: "dev"}): {
			sCreating + "/POWER_STATE_UNSPECIFIED", sReady + "/POWER_STATE_POWER_ON",
			sUpdating + "/POWER_STATE_POWERING_OFF", sReady + "/POWER_STATE_POWER_OFF",
			sDeleting + "/POWER_STATE_POWER_OFF", sDeleteDone + "/POWER_STATE_POWER_OFF"},
		"AppInst/" + executor.KeyString(&edgeproto.AppInstKey{Name: "i2", Organization: "dev"}): {
			sCreating + "/POWER_STATE_UNSPECIFIED", sReady + "/POWER_STATE_POWER_ON",
			sDeleting + "/POWER_STATE_POWER_ON", sDeleteDone + "/POWER_STATE_POWER_ON"},
	}
	if diff := cmp.Diff(want, viaCache.states); diff != "" {
		t.Errorf("states (-want +got):\n%s", diff)
	}
	c2, _ := viaCache.clusterInfos.Get(executor.KeyString(clusterKey("c2")))
	if len(c2.GetStatus().GetMsgs()) == 0 {
		t.Errorf("no progress messages reported for c2")
	}
}
