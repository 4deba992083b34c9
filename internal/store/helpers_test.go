package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/fieldmap"
	"github.com/edgekit/edgekit/internal/store"
	"github.com/edgekit/edgekit/internal/testenv/etcdtest"
)

// testTimeout bounds every test's etcd calls.
const testTimeout = 30 * time.Second

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

// newStore starts etcd for t and returns a store of region "test" on it.
func newStore(t testing.TB, opts ...store.Option) (*store.Store, *etcdtest.Server) {
	t.Helper()
	srv := etcdtest.New(t)
	s, err := store.New(srv.Client(), "test", opts...)
	if err != nil {
		t.Fatal(err)
	}
	return s, srv
}

func cluster(name, org string) *edgeproto.ClusterInst {
	return &edgeproto.ClusterInst{
		Key:         &edgeproto.ClusterKey{Name: name, Organization: org},
		CloudletKey: &edgeproto.CloudletKey{Organization: "op", Name: "cl1"},
		State:       edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED,
		FlavorName:  "small",
		Deployment:  "kubernetes",
	}
}

func mustFM(t testing.TB, flags ...string) *fieldmap.FieldMap {
	t.Helper()
	fm, err := (&edgeproto.ClusterInst{}).FieldSchema().New(flags...)
	if err != nil {
		t.Fatal(err)
	}
	return fm
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// fixture is a store with one ClusterInst created in it.
type fixture struct {
	ctx context.Context
	s   *store.Store
	srv *etcdtest.Server
	k   *store.Kind[*edgeproto.ClusterInst]
	c   *edgeproto.ClusterInst // as created
	key string
	rev int64 // of the create
}

func newFixture(t testing.TB, opts ...store.Option) *fixture {
	t.Helper()
	s, srv := newStore(t, opts...)
	f := &fixture{ctx: ctxT(t), s: s, srv: srv, k: store.NewKind[*edgeproto.ClusterInst](s), c: cluster("c1", "acme")}
	f.key = f.c.GetKeyString()
	var err error
	if f.rev, err = f.k.Create(f.ctx, f.c); err != nil {
		t.Fatal(err)
	}
	return f
}
