package store_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/internal/etcd"
	"github.com/edgekit/edgekit/internal/store"
	"github.com/edgekit/edgekit/internal/testenv/etcdtest"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// fillUntilNoSpace writes big values under prefix until etcd refuses one
// for lack of space (its NOSPACE alarm is then on).
func fillUntilNoSpace(t *testing.T, cli *clientv3.Client, prefix string) {
	t.Helper()
	val := strings.Repeat("x", 256<<10)
	for i := range 1000 {
		_, err := cli.Put(ctxT(t), fmt.Sprintf("%s%04d", prefix, i), val)
		if errors.Is(err, rpctypes.ErrNoSpace) {
			return
		}
		if err != nil {
			t.Fatalf("put %d: %v", i, err)
		}
	}
	t.Fatal("etcd still accepts writes after 1000 puts of 256 KiB")
}

// While etcd's NOSPACE alarm is on, every write of the store fails with an
// error matching ErrNoSpace and naming what was written, and reads and
// deletes work.
func TestWritesUnderNoSpaceAlarm(t *testing.T) {
	t.Parallel()
	srv := etcdtest.New(t, etcdtest.WithConfig(func(c *etcd.EmbedConfig) { c.QuotaBackendBytes = 4 << 20 }))
	s, err := store.New(srv.Client(), "test")
	if err != nil {
		t.Fatal(err)
	}
	k := store.NewKind[*edgeproto.ClusterInst](s)
	ctx := ctxT(t)
	for _, name := range []string{"c1", "c2"} {
		if _, err := k.Create(ctx, cluster(name, "acme")); err != nil {
			t.Fatal(err)
		}
	}
	fillUntilNoSpace(t, srv.Client(), "/filler/")

	key := store.KeyOf(cluster("c1", "acme"))
	writes := map[string]func() error{
		"create": func() error { _, err := k.Create(ctx, cluster("c3", "acme")); return err },
		"put":    func() error { _, err := k.Put(ctx, cluster("c1", "acme")); return err },
		"update": func() error {
			src := cluster("c1", "acme")
			src.FlavorName = "large"
			_, _, err := k.Update(ctx, key, src, mustFM(t, edgeproto.ClusterInstFieldFlavorName), nil)
			return err
		},
		"txn": func() error {
			_, err := s.Txn(ctx, func(tx *store.Tx) error {
				tx.Put(k.Path("name=c4,organization=acme"), "{}")
				return nil
			})
			return err
		},
	}
	for what, write := range writes {
		err := write()
		var se *store.Error
		if !errors.Is(err, store.ErrNoSpace) || !errors.As(err, &se) {
			t.Errorf("%s under the NOSPACE alarm: %v (%T), want a *store.Error matching ErrNoSpace", what, err, err)
			continue
		}
		if !strings.Contains(err.Error(), "NOSPACE") {
			t.Errorf("%s under the NOSPACE alarm: %q does not name the alarm", what, err)
		}
	}
	if got, _, err := k.Get(ctx, key); err != nil || got.GetFlavorName() != "small" {
		t.Errorf("get under the NOSPACE alarm: %v, %v", got, err)
	}
	if objs, _, err := k.List(ctx); err != nil || len(objs) != 2 {
		t.Errorf("list under the NOSPACE alarm: %d objects, %v", len(objs), err)
	}
	if _, err := k.Delete(ctx, store.KeyOf(cluster("c2", "acme")), nil); err != nil {
		t.Errorf("delete under the NOSPACE alarm: %v", err)
	}
	if _, err := s.Txn(ctx, func(tx *store.Tx) error { tx.Delete(k.Path(key)); return nil }); err != nil {
		t.Errorf("transaction of a delete under the NOSPACE alarm: %v", err)
	}
}
