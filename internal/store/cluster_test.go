package store_test

import (
	"fmt"
	"testing"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/internal/store"
	"github.com/edgekit/edgekit/internal/testenv/etcdtest"
)

// On a 3-member cluster the store keeps working while one member is
// stopped, and a cache whose only member was the stopped one catches up
// with everything it missed once the member is back.
func TestClusterWithAMemberStopped(t *testing.T) {
	t.Parallel()
	cl := etcdtest.NewCluster(t, 3)
	ctx := ctxT(t)
	s, err := store.New(cl.Client(), "test")
	if err != nil {
		t.Fatal(err)
	}
	k := store.NewKind[*edgeproto.ClusterInst](s)
	s0, err := store.New(cl.Member(0).Client(), "test")
	if err != nil {
		t.Fatal(err)
	}
	var rec recorder
	cache := store.NewCache(store.NewKind[*edgeproto.ClusterInst](s0), store.OnEvent(rec.handle))
	if _, err := k.Create(ctx, cluster("c0", "acme")); err != nil {
		t.Fatal(err)
	}
	startCache(t, cache)
	wantEvents(t, rec.take(t, 1), "put name=c0 small")

	cl.StopMember(0)
	var want []string
	for i := range 3 {
		c := cluster(fmt.Sprintf("c%d", i+1), "acme")
		if _, err := k.Create(ctx, c); err != nil {
			t.Fatalf("create with a member stopped: %v", err)
		}
		want = append(want, fmt.Sprintf("put name=c%d small", i+1))
	}
	_, rev, err := k.Update(ctx, "name=c1,organization=acme", &edgeproto.ClusterInst{FlavorName: "large"},
		mustFM(t, edgeproto.ClusterInstFieldFlavorName), nil)
	if err != nil {
		t.Fatalf("update with a member stopped: %v", err)
	}
	want = append(want, "put name=c1 large")
	if _, err := s.Txn(ctx, func(tx *store.Tx) error {
		list, err := k.TxList(tx)
		if err != nil {
			return err
		}
		if len(list) != 4 {
			return fmt.Errorf("txn sees %d clusters", len(list))
		}
		return nil
	}); err != nil {
		t.Fatalf("txn with a member stopped: %v", err)
	}
	list, _, err := k.List(ctx)
	if err != nil || len(list) != 4 {
		t.Fatalf("list with a member stopped: %d, %v", len(list), err)
	}

	cl.RestartMember(0)
	if err := cache.WaitRev(ctx, rev); err != nil {
		t.Fatal(err)
	}
	wantEvents(t, rec.take(t, len(want)), want...)
	if cache.Len() != 4 {
		t.Fatalf("cache holds %d objects", cache.Len())
	}
}
