package store_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/internal/store"
)

func TestNewErrors(t *testing.T) {
	t.Parallel()
	if _, err := store.New(nil, "r"); err == nil {
		t.Error("nil client accepted")
	}
	_, srv := newStore(t)
	for _, region := range []string{"", "a/b", "a b", "x\x00"} {
		if _, err := store.New(srv.Client(), region); err == nil {
			t.Errorf("region %q accepted", region)
		}
	}
}

func TestKindNames(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ci := store.NewKind[*edgeproto.ClusterInst](s)
	info := store.NewKind[*edgeproto.ClusterInstInfo](s)
	if ci.Name() != "ClusterInst" || info.Name() != "ClusterInstInfo" {
		t.Fatalf("names %q %q", ci.Name(), info.Name())
	}
	if got, want := ci.Path("name=a,organization=b"), "/edgekit/test/ClusterInst/name=a,organization=b"; got != want {
		t.Fatalf("path %q, want %q", got, want)
	}
	// The same type twice is fine; another type under a taken name is not.
	_ = store.NewKind[*edgeproto.ClusterInst](s)
	defer func() {
		r := recover()
		if r == nil || !strings.Contains(fmt.Sprint(r), "taken by edgeproto.v1.ClusterInst") {
			t.Fatalf("recovered %v", r)
		}
	}()
	store.NewKind[*edgeproto.App](s, store.KindName("ClusterInst"))
}

func TestCRUD(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ctx := ctxT(t)
	k := store.NewKind[*edgeproto.ClusterInst](s)
	c := cluster("c1", "acme")
	key := c.GetKeyString()

	if _, _, err := k.Get(ctx, key); !errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), key) {
		t.Fatalf("get of a missing object: %v", err)
	}
	rev, err := k.Create(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	_, err = k.Create(ctx, c)
	var se *store.Error
	if !errors.Is(err, store.ErrAlreadyExists) || !errors.As(err, &se) || se.Kind != "ClusterInst" || se.Key != key {
		t.Fatalf("second create: %v", err)
	}
	got, modRev, err := k.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if modRev != rev {
		t.Errorf("ModRevision %d, create revision %d", modRev, rev)
	}
	if diff := cmp.Diff(c, got, protocmp.Transform()); diff != "" {
		t.Fatalf("get (-want +got):\n%s", diff)
	}

	c.FlavorName = "large"
	prev := rev
	if rev, err = k.Put(ctx, c); err != nil || rev <= prev {
		t.Fatalf("put: rev %d after %d, %v", rev, prev, err)
	}
	if got, _, _ = k.Get(ctx, key); got.GetFlavorName() != "large" {
		t.Fatalf("after put: %v", got)
	}

	if _, err := k.Delete(ctx, key, func(cur *edgeproto.ClusterInst) error {
		return errors.New("refused: " + cur.GetFlavorName())
	}); err == nil || err.Error() != "refused: large" {
		t.Fatalf("refusing check: %v", err)
	}
	if _, err := k.Delete(ctx, key, func(*edgeproto.ClusterInst) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := k.Delete(ctx, key, nil); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("delete of a missing object: %v", err)
	}
	if _, err := k.Delete(ctx, key, func(*edgeproto.ClusterInst) error { return nil }); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("checked delete of a missing object: %v", err)
	}
	if _, _, err := k.Update(ctx, key, c, mustFM(t, edgeproto.ClusterInstFieldFlavorName), nil); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("update of a missing object: %v", err)
	}
}

func TestKindsDoNotMix(t *testing.T) {
	t.Parallel()
	s, srv := newStore(t)
	ctx := ctxT(t)
	ci := store.NewKind[*edgeproto.ClusterInst](s)
	info := store.NewKind[*edgeproto.ClusterInstInfo](s)
	if _, err := ci.Create(ctx, cluster("c1", "acme")); err != nil {
		t.Fatal(err)
	}
	if _, err := info.Create(ctx, &edgeproto.ClusterInstInfo{Key: &edgeproto.ClusterKey{Name: "c1", Organization: "acme"}}); err != nil {
		t.Fatal(err)
	}
	// Another region of the same etcd is another namespace.
	other, err := store.New(srv.Client(), "other")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.NewKind[*edgeproto.ClusterInst](other).Create(ctx, cluster("c2", "acme")); err != nil {
		t.Fatal(err)
	}
	list, _, err := ci.List(ctx)
	if err != nil || len(list) != 1 || list[0].GetKey().GetName() != "c1" {
		t.Fatalf("list %v %v", list, err)
	}
}

func TestList(t *testing.T) {
	t.Parallel()
	// A small page size makes List read several pages.
	s, _ := newStore(t, store.WithPageSize(7))
	ctx := ctxT(t)
	k := store.NewKind[*edgeproto.ClusterInst](s)
	var want []string
	for i := range 50 {
		c := cluster(fmt.Sprintf("c%03d", 49-i), "acme")
		if _, err := k.Create(ctx, c); err != nil {
			t.Fatal(err)
		}
		want = append(want, c.GetKeyString())
	}
	list, rev, err := k.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range list {
		got = append(got, c.GetKeyString())
	}
	slices.Sort(want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("keys (-want +got):\n%s", diff)
	}
	// The list revision is the store's revision: the last create's.
	_, last, _ := k.Get(ctx, cluster("c000", "acme").GetKeyString())
	if rev < last {
		t.Fatalf("list revision %d before the last write %d", rev, last)
	}
}

// The value in etcd is protojson that people can read with etcdctl.
func TestValueIsReadableJSON(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := f.ctx
	resp, err := f.srv.Client().Get(ctx, "/edgekit/test/ClusterInst/name=c1,organization=acme")
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("raw get: %v %v", resp, err)
	}
	var m map[string]any
	if err := json.Unmarshal(resp.Kvs[0].Value, &m); err != nil {
		t.Fatalf("value is not JSON: %v\n%s", err, resp.Kvs[0].Value)
	}
	if m["flavorName"] != "small" || m["state"] != "TRACKED_STATE_CREATE_REQUESTED" {
		t.Fatalf("value lacks readable fields: %s", resp.Kvs[0].Value)
	}
	key, _ := m["key"].(map[string]any)
	if key["name"] != "c1" || key["organization"] != "acme" {
		t.Fatalf("value lacks its key: %s", resp.Kvs[0].Value)
	}
}

// Fields a newer writer added are dropped by an older reader, not refused.
func TestUnknownFieldsDiscarded(t *testing.T) {
	t.Parallel()
	s, srv := newStore(t)
	ctx := ctxT(t)
	k := store.NewKind[*edgeproto.ClusterInst](s)
	key := "name=c1,organization=acme"
	val := `{"key":{"name":"c1","organization":"acme"},"flavorName":"x","fieldOfTheFuture":{"a":1}}`
	if _, err := srv.Client().Put(ctx, k.Path(key), val); err != nil {
		t.Fatal(err)
	}
	got, _, err := k.Get(ctx, key)
	if err != nil || got.GetFlavorName() != "x" {
		t.Fatalf("get: %v %v", got, err)
	}
}

func TestBadValues(t *testing.T) {
	t.Parallel()
	s, srv := newStore(t)
	ctx := ctxT(t)
	k := store.NewKind[*edgeproto.ClusterInst](s)
	for i, val := range []string{
		"not json",
		`{"flavorName": 7}`,
		`{"key":{"name":"other","organization":"acme"}}`, // another object's key
		"\xff\xfe",
	} {
		key := fmt.Sprintf("name=bad%d,organization=acme", i)
		if _, err := srv.Client().Put(ctx, k.Path(key), val); err != nil {
			t.Fatal(err)
		}
		_, _, err := k.Get(ctx, key)
		var se *store.Error
		if !errors.Is(err, store.ErrBadValue) || !errors.As(err, &se) || se.Key != key {
			t.Errorf("get of %q: %v", val, err)
		}
		if _, _, err := k.Update(ctx, key, cluster("x", "y"), mustFM(t, edgeproto.ClusterInstFieldFlavorName), nil); !errors.Is(err, store.ErrBadValue) {
			t.Errorf("update of %q: %v", val, err)
		}
	}
	if _, _, err := k.List(ctx); !errors.Is(err, store.ErrBadValue) || !strings.Contains(err.Error(), "bad0") {
		t.Errorf("list: %v", err)
	}
	// Delete without a check does not decode: garbage can be removed.
	if _, err := k.Delete(ctx, "name=bad0,organization=acme", nil); err != nil {
		t.Errorf("delete of a bad value: %v", err)
	}
	// A string that is not UTF-8 cannot be written as protojson.
	c := cluster("c1", "acme")
	c.FlavorName = "\xff"
	if _, err := k.Create(ctx, c); !errors.Is(err, store.ErrBadValue) {
		t.Errorf("create with invalid UTF-8: %v", err)
	}
}

func TestObserver(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var seen []store.Observation
	s, _ := newStore(t, store.WithObserver(store.ObserverFunc(func(o store.Observation) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, o)
	})))
	ctx := ctxT(t)
	k := store.NewKind[*edgeproto.ClusterInst](s)
	c := cluster("c1", "acme")
	_, _ = k.Create(ctx, c)
	_, _ = k.Create(ctx, c)
	_, _, _ = k.Update(ctx, c.GetKeyString(), cluster("c1", "acme"), mustFM(t, edgeproto.ClusterInstFieldDeployment), nil)
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 3 {
		t.Fatalf("observations %+v", seen)
	}
	if seen[0].Op != "create" || seen[0].Kind != "ClusterInst" || seen[0].Err != nil || seen[0].Duration <= 0 {
		t.Errorf("first %+v", seen[0])
	}
	if !errors.Is(seen[1].Err, store.ErrAlreadyExists) {
		t.Errorf("second %+v", seen[1])
	}
	if seen[2].Op != "update" || seen[2].Attempts != 1 {
		t.Errorf("third %+v", seen[2])
	}
}

// A message without a key is a singleton of key string "".
func TestSingleton(t *testing.T) {
	t.Parallel()
	s, srv := newStore(t)
	ctx := ctxT(t)
	k := store.NewKind[*edgeproto.Settings](s)
	if _, _, err := k.Get(ctx, ""); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("get before create: %v", err)
	}
	if _, err := k.Create(ctx, &edgeproto.Settings{CreateClusterInstTimeout: durationpb.New(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	src := &edgeproto.Settings{CreateAppInstTimeout: durationpb.New(2 * time.Minute)}
	fm, err := src.FieldSchema().New(edgeproto.SettingsFieldCreateAppInstTimeout)
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := k.Update(ctx, "", src, fm, nil)
	if err != nil || got.GetCreateClusterInstTimeout().AsDuration() != time.Minute || got.GetCreateAppInstTimeout().AsDuration() != 2*time.Minute {
		t.Fatalf("update: %v %v", got, err)
	}
	resp, err := srv.Client().Get(ctx, "/edgekit/test/Settings/")
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("raw key: %v %v", resp, err)
	}
}
