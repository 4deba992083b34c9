package notify

import (
	"context"
	"log/slog"
	"slices"
	"testing"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/internal/store"
	"github.com/edgekit/edgekit/internal/testenv/etcdtest"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// The hub hands a trust policy exception's change to the sessions of the
// cloudlets of its entries, and of the cloudlets its entries left (so they
// are sent its removal), and never to the session of a cloudlet it has no
// entry on.
func TestExceptionChangesAreHandedOnlyToTheirCloudletsSessions(t *testing.T) {
	t.Parallel()
	st, err := store.New(etcdtest.New(t).Client(), "test")
	if err != nil {
		t.Fatal(err)
	}
	m, err := newMetrics(nil)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	srv := &Server{cfg: Config{Store: st, MaxQueue: 100}, log: log, metrics: m, kinds: newKinds(st)}
	h := newHub(srv)
	close(h.ready) // the test dispatches the events itself
	ctx, cancel := context.WithCancelCause(context.Background())
	t.Cleanup(func() { cancel(nil) })
	sites := []*edgeproto.CloudletKey{{Organization: "op", Name: "site1"}, {Organization: "op", Name: "site2"}, {Organization: "op", Name: "site3"}}
	var sessions []*session
	for _, cl := range sites {
		sess := newSession(srv, ctx, cancel, nil, cl, log)
		if err := h.join(sess); err != nil {
			t.Fatal(err)
		}
		sessions = append(sessions, sess)
	}
	// handed lists the sessions handed a change since the last call.
	handed := func() []string {
		var out []string
		for i, sess := range sessions {
			sess.mu.Lock()
			if len(sess.pending) > 0 {
				out = append(out, sites[i].Name)
			}
			sess.pending = nil
			sess.mu.Unlock()
		}
		return out
	}
	ctx0 := context.Background()
	dispatch := func(path string, del bool) {
		t.Helper()
		resp, err := st.Client().Get(ctx0, path)
		if err != nil {
			t.Fatal(err)
		}
		ev := &clientv3.Event{Type: clientv3.EventTypePut}
		if del {
			if _, err := st.Client().Delete(ctx0, path); err != nil {
				t.Fatal(err)
			}
			ev.Type = clientv3.EventTypeDelete
		}
		ev.Kv = resp.Kvs[0]
		h.dispatch([]*clientv3.Event{ev})
	}
	flavors := store.NewKind[*edgeproto.Flavor](st)
	if _, err := flavors.Put(ctx0, &edgeproto.Flavor{Key: &edgeproto.FlavorKey{Name: "f"}}); err != nil {
		t.Fatal(err)
	}
	dispatch(flavors.Path("name=f"), false)
	if got := handed(); len(got) != 3 {
		t.Fatalf("a flavor was handed to %v, want every session", got)
	}

	tpes := store.NewKind[*edgeproto.TrustPolicyException](st)
	key := &edgeproto.TrustPolicyExceptionKey{AppKey: &edgeproto.AppKey{Organization: "dev", Name: "web", Version: "1"},
		CloudletPoolKey: &edgeproto.CloudletPoolKey{Organization: "op", Name: "p"}, Name: "dns"}
	ks := (&edgeproto.TrustPolicyException{Key: key}).GetKeyString()
	put := func(cls ...*edgeproto.CloudletKey) {
		t.Helper()
		exc := &edgeproto.TrustPolicyException{Key: key, State: edgeproto.TrustPolicyExceptionState_TRUST_POLICY_EXCEPTION_STATE_ACTIVE}
		for i, cl := range cls {
			exc.Instances = append(exc.Instances, &edgeproto.TrustPolicyExceptionInstance{
				AppInstKey: &edgeproto.AppInstKey{Organization: "dev", Name: string(rune('a' + i))}, CloudletKey: cl,
				State: edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED})
		}
		if _, err := tpes.Put(ctx0, exc); err != nil {
			t.Fatal(err)
		}
		dispatch(tpes.Path(ks), false)
	}
	s1, s2, s3 := sites[0], sites[1], sites[2]
	for _, step := range []struct {
		what string
		do   func()
		want []string
	}{
		{"no entry yet", func() { put() }, nil},
		{"an entry on site1", func() { put(s1) }, []string{"site1"}},
		{"entries on site1 and site2 (twice)", func() { put(s1, s2, s2) }, []string{"site1", "site2"}},
		{"site1's entry went", func() { put(s2) }, []string{"site1", "site2"}},
		{"site2's entries only, unchanged", func() { put(s2) }, []string{"site2"}},
		{"no entry left", func() { put() }, []string{"site2"}},
		{"an entry on site3", func() { put(s3) }, []string{"site3"}},
		{"the exception deleted", func() { dispatch(tpes.Path(ks), true) }, []string{"site3"}},
	} {
		step.do()
		if got := handed(); !slices.Equal(got, step.want) {
			t.Errorf("%s: handed to %v, want %v", step.what, got, step.want)
		}
	}
}
