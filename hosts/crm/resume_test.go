package crm_test

import (
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/hosts/controller/controllertest"
	"github.com/edgekit/edgekit/hosts/controller/notify"
	"github.com/edgekit/edgekit/internal/store"
	"github.com/edgekit/edgekit/platforms/fake"
	notifyv1 "github.com/edgekit/edgekit/proto/edgekit/notify/v1"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// readSync reads a stream's initial sync: its SyncStart, SyncEnd and the
// ids ("put Kind/key", "del Kind/key") of what it sent, sorted.
func readSync(t *testing.T, st rawStream) (*notifyv1.SyncStart, *notifyv1.SyncEnd, []string) {
	t.Helper()
	var start *notifyv1.SyncStart
	var end *notifyv1.SyncEnd
	got := readUntil(t, st, func(m *notifyv1.ConnectResponse) bool {
		if m.GetSyncStart() != nil {
			start = m.GetSyncStart()
		}
		end = m.GetSyncEnd()
		return end != nil
	})
	return start, end, ids(got)
}

// A CRM that reconnects naming the last revision it applied is sent what
// changed since, deletes included, not its whole cloudlet; one naming a
// compacted revision gets a full sync.
func TestAReconnectSendsOnlyWhatChanged(t *testing.T) {
	t.Parallel()
	env := controllertest.Start(t, controllertest.Options{Notify: true, Logger: testLogger()})
	e := &edge{env: env, cloudlet: &edgeproto.CloudletKey{Organization: "operator", Name: "site1"}}
	ctx := testCtx(t)
	e.key = env.CreateEdgeCloudlet(ctx, &edgeproto.Cloudlet{Key: e.cloudlet, PlatformType: fake.Name})
	other := &edgeproto.CloudletKey{Organization: "operator", Name: "site2"}
	env.CreateEdgeCloudlet(ctx, &edgeproto.Cloudlet{Key: other, PlatformType: fake.Name})
	kind := store.NewKind[*edgeproto.AppInst](env.Store)
	const n = 300
	insts := make([]*edgeproto.AppInst, n)
	for i := range insts {
		insts[i] = e.appInst("i"+strconv.Itoa(i), "web", "c1")
		insts[i].CloudletKey, insts[i].State = e.cloudlet, edgeproto.TrackedState_TRACKED_STATE_READY
		if _, err := kind.Put(ctx, insts[i]); err != nil {
			t.Fatal(err)
		}
	}
	st := e.rawConnect(t, e.cloudlet, e.key)
	_, end, _ := readSync(t, st)
	if end.GetResumed() || end.GetObjects() < n {
		t.Fatalf("first sync: %v, want a full one of at least %d objects", end, n)
	}
	applied := end.GetRevision()
	_ = st.CloseSend()
	controllertest.WaitFor(t, 20*time.Second, "the stream to end", func() bool { return env.Notify.Sessions() == 0 })

	// While the CRM is away: 90 instances change, 5 are deleted, 5 are
	// created; 50 changes on another cloudlet do not concern it.
	var want []string
	for i, ai := range insts[:100] {
		id := "AppInst/" + ai.GetKeyString()
		switch {
		case i < 90:
			ai.Annotations = map[string]string{"v": "2"}
			if _, err := kind.Put(ctx, ai); err != nil {
				t.Fatal(err)
			}
			want = append(want, "put "+id)
		case i < 95:
			if _, err := env.Store.Client().Delete(ctx, kind.Path(ai.GetKeyString())); err != nil {
				t.Fatal(err)
			}
			want = append(want, "del "+id)
		default:
			added := e.appInst("new"+strconv.Itoa(i), "web", "c1")
			added.CloudletKey, added.State = e.cloudlet, edgeproto.TrackedState_TRACKED_STATE_READY
			if _, err := kind.Put(ctx, added); err != nil {
				t.Fatal(err)
			}
			want = append(want, "put AppInst/"+added.GetKeyString())
		}
	}
	for i := range 50 {
		ai := e.appInst("elsewhere"+strconv.Itoa(i), "web", "c2")
		ai.CloudletKey = other
		if _, err := kind.Put(ctx, ai); err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(want)

	st = e.rawConnectHello(t, &notifyv1.Hello{CloudletKey: e.cloudlet, AccessKey: e.key, Instance: t.Name(), ResumeRevision: applied})
	start, end, got := readSync(t, st)
	slices.Sort(got)
	if !start.GetResumed() || !end.GetResumed() {
		t.Errorf("resumed sync marked %v / %v, want resumed", start, end)
	}
	if !slices.Equal(got, want) || end.GetObjects() != 100 {
		t.Fatalf("resumed sync sent %d objects (SyncEnd says %d):\n%v\nwant the 100 changes:\n%v", len(got), end.GetObjects(), got, want)
	}
	// The stream goes on as usual after a resumed sync.
	insts[200].Annotations = map[string]string{"v": "3"}
	if _, err := kind.Put(ctx, insts[200]); err != nil {
		t.Fatal(err)
	}
	readUntil(t, st, func(m *notifyv1.ConnectResponse) bool {
		return m.GetUpdate().GetAppInst().GetAnnotations()["v"] == "3"
	})
	_ = st.CloseSend()
	controllertest.WaitFor(t, 20*time.Second, "the stream to end", func() bool { return env.Notify.Sessions() == 0 })

	// Once the store compacted that revision, the CRM gets everything.
	resp, err := env.Store.Client().Get(ctx, "compact-marker")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.Store.Client().Compact(ctx, resp.Header.Revision, clientv3.WithCompactPhysical()); err != nil {
		t.Fatal(err)
	}
	st = e.rawConnectHello(t, &notifyv1.Hello{CloudletKey: e.cloudlet, AccessKey: e.key, Instance: t.Name(), ResumeRevision: applied})
	start, end, _ = readSync(t, st)
	if start.GetResumed() || end.GetResumed() || end.GetObjects() < n {
		t.Fatalf("sync after compaction: %v, want a full one of at least %d objects", end, n)
	}
}

// A CRM that reconnects while the controller's watch kept running (another
// CRM stayed connected) is sent the delete of an instance removed while
// it was away, even when nothing had been deleted before: the watch saw
// the delete, so the resumed sync looks for it.
func TestAResumeWhileTheWatchRunsSendsWhatWasDeleted(t *testing.T) {
	t.Parallel()
	env := controllertest.Start(t, controllertest.Options{Notify: true, Logger: testLogger(),
		NotifyConfig: notify.Config{KeepaliveInterval: time.Hour}})
	e := &edge{env: env, cloudlet: &edgeproto.CloudletKey{Organization: "operator", Name: "site1"}}
	ctx := testCtx(t)
	e.key = env.CreateEdgeCloudlet(ctx, &edgeproto.Cloudlet{Key: e.cloudlet, PlatformType: fake.Name})
	other := &edgeproto.CloudletKey{Organization: "operator", Name: "site2"}
	otherKey := env.CreateEdgeCloudlet(ctx, &edgeproto.Cloudlet{Key: other, PlatformType: fake.Name})
	kind := store.NewKind[*edgeproto.AppInst](env.Store)
	insts := make([]*edgeproto.AppInst, 3)
	for i := range insts {
		insts[i] = e.appInst("i"+strconv.Itoa(i), "web", "c1")
		insts[i].CloudletKey, insts[i].State = e.cloudlet, edgeproto.TrackedState_TRACKED_STATE_READY
		if _, err := kind.Put(ctx, insts[i]); err != nil {
			t.Fatal(err)
		}
	}
	stay := e.rawConnect(t, other, otherKey) // keeps the watch running
	readSync(t, stay)
	st := e.rawConnect(t, e.cloudlet, e.key)
	_, end, _ := readSync(t, st)
	applied := end.GetRevision()
	_ = st.CloseSend()
	controllertest.WaitFor(t, 20*time.Second, "the stream to end", func() bool { return env.Notify.Sessions() == 1 })

	// A first resume from that revision finds nothing deleted.
	st = e.rawConnectHello(t, &notifyv1.Hello{CloudletKey: e.cloudlet, AccessKey: e.key, Instance: t.Name(), ResumeRevision: applied})
	if _, end, got := readSync(t, st); !end.GetResumed() || len(got) != 0 {
		t.Fatalf("a resume with nothing changed sent %v (resumed %v), want nothing", got, end.GetResumed())
	}
	_ = st.CloseSend()
	controllertest.WaitFor(t, 20*time.Second, "the stream to end", func() bool { return env.Notify.Sessions() == 1 })

	// While the CRM is away again, one of its instances is deleted.
	if _, err := env.Store.Client().Delete(ctx, kind.Path(insts[1].GetKeyString())); err != nil {
		t.Fatal(err)
	}
	// The other CRM's stream sees something later, so the watch is past the delete.
	ai := e.appInst("elsewhere", "web", "c2")
	ai.CloudletKey = other
	if _, err := kind.Put(ctx, ai); err != nil {
		t.Fatal(err)
	}
	readUntil(t, stay, func(m *notifyv1.ConnectResponse) bool { return m.GetUpdate().GetAppInst() != nil })

	st = e.rawConnectHello(t, &notifyv1.Hello{CloudletKey: e.cloudlet, AccessKey: e.key, Instance: t.Name(), ResumeRevision: applied})
	_, end, got := readSync(t, st)
	if want := []string{"del AppInst/" + insts[1].GetKeyString()}; !end.GetResumed() || !slices.Equal(got, want) {
		t.Fatalf("resumed sync sent %v (resumed %v), want %v", got, end.GetResumed(), want)
	}
}
