package store_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	bolt "go.etcd.io/bbolt"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/edgekit/edgekit/atrest"
	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/internal/store"
	"github.com/edgekit/edgekit/internal/testenv/etcdtest"
)

// planted marks every secret these tests plant, so that one search finds
// any of them.
const planted = "Planted-Secret-"

func newKeyring(t testing.TB) *atrest.FileKeyring {
	t.Helper()
	k, _, err := atrest.EnsureKeyFile(filepath.Join(t.TempDir(), atrest.DefaultKeyFileName))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func sealedStore(t testing.TB, srv *etcdtest.Server, kp atrest.KeyProvider, opts ...store.Option) *store.Store {
	t.Helper()
	s, err := store.New(srv.Client(), "test", append([]store.Option{store.WithEncryption(atrest.NewEnvelope(kp))}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func plainStore(t testing.TB, srv *etcdtest.Server) *store.Store {
	t.Helper()
	s, err := store.New(srv.Client(), "test")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func secretApp(name, secret string) *edgeproto.App {
	return &edgeproto.App{
		Key:        &edgeproto.AppKey{Organization: "dev", Name: name, Version: "1"},
		ImagePath:  "registry/" + name,
		Deployment: "kubernetes",
		EnvVars: []*edgeproto.EnvVar{
			{Name: "MODE", Value: "prod"},
			{Name: "DB_PASSWORD", Secret: true, SecretValue: secret},
		},
	}
}

func secretCloudlet(name, secret string) *edgeproto.Cloudlet {
	return &edgeproto.Cloudlet{
		Key:        &edgeproto.CloudletKey{Organization: "op", Name: name},
		AccessVars: map[string]string{"KUBECONFIG": "apiVersion: v1\nusers:\n- user: {token: " + secret + "}\n"},
	}
}

// rawValues returns every value etcd holds under prefix.
func rawValues(t testing.TB, cli *clientv3.Client, prefix string) map[string][]byte {
	t.Helper()
	resp, err := cli.Get(ctxT(t), prefix, clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, kv := range resp.Kvs {
		out[string(kv.Key)] = kv.Value
	}
	return out
}

// filesHolding returns the files under dir whose bytes contain s.
func filesHolding(t testing.TB, dir, s string) []string {
	t.Helper()
	var found []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if bytes.Contains(b, []byte(s)) {
			found = append(found, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

func TestSealedKindsHoldNoSecretInEtcd(t *testing.T) {
	ctx := ctxT(t)
	srv := etcdtest.New(t)
	s := sealedStore(t, srv, newKeyring(t))
	apps := store.NewKind[*edgeproto.App](s)
	cloudlets := store.NewKind[*edgeproto.Cloudlet](s)
	flavors := store.NewKind[*edgeproto.Flavor](s)
	if !apps.Sealed() || !cloudlets.Sealed() || flavors.Sealed() {
		t.Fatalf("sealed: App %v, Cloudlet %v, Flavor %v; want true, true, false", apps.Sealed(), cloudlets.Sealed(), flavors.Sealed())
	}
	cache := store.NewCache(apps)
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- cache.Start(cctx) }()
	t.Cleanup(func() { cancel(); <-done })

	app := secretApp("a1", planted+"App-1")
	if _, err := apps.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	if _, err := cloudlets.Create(ctx, secretCloudlet("cl1", planted+"Kubeconfig-2")); err != nil {
		t.Fatal(err)
	}
	if _, err := flavors.Create(ctx, &edgeproto.Flavor{Key: &edgeproto.FlavorKey{Name: "readable-flavor"}}); err != nil {
		t.Fatal(err)
	}
	upd := secretApp("a1", planted+"App-Updated-3")
	fm, err := (&edgeproto.App{}).FieldSchema().New(edgeproto.AppFieldEnvVars)
	if err != nil {
		t.Fatal(err)
	}
	_, rev, err := apps.Update(ctx, app.GetKeyString(), upd, fm, nil)
	if err != nil {
		t.Fatal(err)
	}

	raw := rawValues(t, srv.Client(), s.Prefix())
	for key, val := range raw {
		if bytes.Contains(val, []byte(planted)) {
			t.Errorf("etcd's value of %s holds a planted secret: %q", key, val)
		}
	}
	if v := raw[flavors.Path("name=readable-flavor")]; !bytes.Contains(v, []byte("readable-flavor")) {
		t.Errorf("a kind without secrets is not stored as readable protojson: %q", v)
	}

	got, _, err := apps.Get(ctx, app.GetKeyString())
	if err != nil || got.EnvVars[1].SecretValue != planted+"App-Updated-3" {
		t.Fatalf("Get of the sealed App: %v, %v", got, err)
	}
	cls, _, err := cloudlets.List(ctx)
	if err != nil || len(cls) != 1 || !strings.Contains(cls[0].AccessVars["KUBECONFIG"], planted+"Kubeconfig-2") {
		t.Fatalf("List of the sealed Cloudlets: %v, %v", cls, err)
	}
	if err := cache.WaitRev(ctx, rev); err != nil {
		t.Fatal(err)
	}
	if c, ok := cache.Get(app.GetKeyString()); !ok || c.EnvVars[1].SecretValue != planted+"App-Updated-3" {
		t.Fatalf("the cache holds %v, %v", c, ok)
	}
	ev := <-apps.Watch(ctx, 1)
	if ev.Type != store.EventPut || ev.Object.EnvVars[1].SecretValue != planted+"App-1" {
		t.Fatalf("watch from the first revision: %+v", ev)
	}

	// Neither etcd's WAL nor its database file holds them.
	dir := srv.Embedded().DataDir()
	srv.Stop()
	if files := filesHolding(t, dir, planted); len(files) > 0 {
		t.Errorf("files of etcd's data directory hold a planted secret: %v", files)
	}
	if files := filesHolding(t, dir, "readable-flavor"); len(files) == 0 {
		t.Error("the search of etcd's files finds nothing, not even a value stored in clear: the search is broken")
	}
	srv.Restart()
}

func TestSealedValueCannotMoveOrChange(t *testing.T) {
	ctx := ctxT(t)
	srv := etcdtest.New(t)
	s := sealedStore(t, srv, newKeyring(t))
	apps := store.NewKind[*edgeproto.App](s)
	a, b := secretApp("a", planted+"A"), secretApp("b", planted+"B")
	for _, app := range []*edgeproto.App{a, b} {
		if _, err := apps.Create(ctx, app); err != nil {
			t.Fatal(err)
		}
	}
	raw := rawValues(t, srv.Client(), apps.Prefix())
	// b's value replaced by a's (which would otherwise decode as a, a key
	// mismatch: the associated data catches it first).
	if _, err := srv.Client().Put(ctx, apps.Path(b.GetKeyString()), string(raw[apps.Path(a.GetKeyString())])); err != nil {
		t.Fatal(err)
	}
	checkUndecryptable(t, apps, b.GetKeyString())
	flipped := bytes.Clone(raw[apps.Path(a.GetKeyString())])
	flipped[len(flipped)-20] ^= 0x40
	if _, err := srv.Client().Put(ctx, apps.Path(a.GetKeyString()), string(flipped)); err != nil {
		t.Fatal(err)
	}
	checkUndecryptable(t, apps, a.GetKeyString())
	if _, _, err := apps.List(ctx); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%q", a.GetKeyString())) {
		t.Fatalf("List over a changed value: err %v, want one naming %q", err, a.GetKeyString())
	}

	// Another key, or none, does not read what was sealed.
	c := secretApp("c", planted+"C")
	if _, err := apps.Create(ctx, c); err != nil {
		t.Fatal(err)
	}
	checkUndecryptable(t, store.NewKind[*edgeproto.App](sealedStore(t, srv, newKeyring(t))), c.GetKeyString())
	checkUndecryptable(t, store.NewKind[*edgeproto.App](plainStore(t, srv)), c.GetKeyString())
}

func checkUndecryptable(t *testing.T, apps *store.Kind[*edgeproto.App], key string) {
	t.Helper()
	_, _, err := apps.Get(ctxT(t), key)
	if !errors.Is(err, store.ErrBadValue) || !errors.Is(err, atrest.ErrUndecryptable) || !strings.Contains(err.Error(), fmt.Sprintf("%q", key)) {
		t.Fatalf("Get %s: err %v, want ErrBadValue and ErrUndecryptable naming the key", key, err)
	}
}

func TestPlaintextStoreMigrates(t *testing.T) {
	ctx := ctxT(t)
	srv := etcdtest.New(t)
	// Written as the store wrote before encryption: protojson in clear.
	old := store.NewKind[*edgeproto.App](plainStore(t, srv))
	for i := range 3 {
		if _, err := old.Create(ctx, secretApp(fmt.Sprint("legacy", i), fmt.Sprint(planted, "Legacy-", i))); err != nil {
			t.Fatal(err)
		}
	}
	s := sealedStore(t, srv, newKeyring(t))
	apps := store.NewKind[*edgeproto.App](s)
	store.NewKind[*edgeproto.Flavor](s)
	if _, err := store.NewKind[*edgeproto.Flavor](plainStore(t, srv)).Create(ctx, &edgeproto.Flavor{Key: &edgeproto.FlavorKey{Name: "f"}}); err != nil {
		t.Fatal(err)
	}
	got, _, err := apps.Get(ctx, secretApp("legacy0", "").GetKeyString())
	if err != nil || got.EnvVars[1].SecretValue != planted+"Legacy-0" {
		t.Fatalf("reading a legacy plaintext value: %v, %v", got, err)
	}
	usage, err := s.KeyUsage(ctx)
	if err != nil || usage[""] != 3 || len(usage) != 1 {
		t.Fatalf("KeyUsage before: %v, %v; want 3 plaintext values", usage, err)
	}
	// The next write seals it.
	if _, _, err := apps.Modify(ctx, got.GetKeyString(), func(cur *edgeproto.App) (bool, error) {
		cur.ImagePath = "registry/new"
		return true, nil
	}); err != nil {
		t.Fatal(err)
	}
	if v := rawValues(t, srv.Client(), apps.Path(got.GetKeyString()))[apps.Path(got.GetKeyString())]; !atrest.IsSealed(v) {
		t.Fatalf("a legacy value written again is not sealed: %q", v)
	}
	// Rewrap seals the rest, and only the sensitive kinds.
	st, err := s.Rewrap(ctx, store.RewrapOptions{})
	if err != nil || st.Rewrapped != 2 {
		t.Fatalf("Rewrap: %+v, %v; want 2 values rewrapped", st, err)
	}
	for key, val := range rawValues(t, srv.Client(), s.Prefix()) {
		if bytes.Contains(val, []byte(planted)) {
			t.Errorf("after the migration etcd's value of %s holds a planted secret", key)
		}
		if strings.Contains(key, "/Flavor/") && atrest.IsSealed(val) {
			t.Errorf("the migration sealed %s, of a kind without secrets", key)
		}
	}
	objs, _, err := apps.List(ctx)
	if err != nil || len(objs) != 3 || objs[2].EnvVars[1].SecretValue != planted+"Legacy-2" {
		t.Fatalf("List after the migration: %v, %v", objs, err)
	}
}

func TestRewrapRotatesUnderConcurrentWrites(t *testing.T) {
	ctx := ctxT(t)
	srv := etcdtest.New(t)
	k := newKeyring(t)
	first := k.KeyIDs()[0]
	old := store.NewKind[*edgeproto.App](sealedStore(t, srv, k))
	const n = 60
	for i := range n {
		if _, err := old.Create(ctx, secretApp(fmt.Sprint("app", i), fmt.Sprint(planted, i))); err != nil {
			t.Fatal(err)
		}
	}
	second, err := atrest.AddKey(k.Path())
	if err != nil {
		t.Fatal(err)
	}
	k2, err := atrest.OpenKeyFile(k.Path())
	if err != nil {
		t.Fatal(err)
	}
	// The restarted process: it seals with the new key, and rewraps.
	s := sealedStore(t, srv, k2, store.WithPageSize(7), store.WithMaxAttempts(1000))
	apps := store.NewKind[*edgeproto.App](s)

	// Writers change every app while the rewrap runs; each remembers its
	// last write.
	const writers, rounds = 3, 20
	last := make([]string, n)
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			for r := range rounds {
				for i := w; i < n; i += writers {
					v := fmt.Sprintf("registry/w%d-r%d", w, r)
					if _, _, err := apps.Modify(ctx, secretApp(fmt.Sprint("app", i), "").GetKeyString(), func(cur *edgeproto.App) (bool, error) {
						cur.ImagePath = v
						return true, nil
					}); err != nil {
						errs <- err
						return
					}
					last[i] = v
				}
			}
		})
	}
	// The first rewrap stops after its first page (as if interrupted) and
	// resumes where it stopped.
	rctx, stop := context.WithCancel(ctx)
	st, err := s.Rewrap(rctx, store.RewrapOptions{Progress: func(store.RewrapStats) { stop() }})
	if err == nil || st.LastKey == "" {
		t.Fatalf("interrupted rewrap: %+v, %v; want an error after one page", st, err)
	}
	progress := 0
	st, err = s.Rewrap(ctx, store.RewrapOptions{After: st.LastKey, Progress: func(store.RewrapStats) { progress++ }})
	if err != nil {
		t.Fatal(err)
	}
	if progress < 2 {
		t.Errorf("resumed rewrap reported progress %d times, want one per page", progress)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	usage, err := s.KeyUsage(ctx)
	if err != nil || usage[second] != n || len(usage) != 1 {
		t.Fatalf("KeyUsage after rotation: %v, %v; want all %d values under %s", usage, err, n, second)
	}
	if err := atrest.RemoveKey(k.Path(), first); err != nil {
		t.Fatal(err)
	}
	k3, err := atrest.OpenKeyFile(k.Path())
	if err != nil {
		t.Fatal(err)
	}
	fresh := store.NewKind[*edgeproto.App](sealedStore(t, srv, k3))
	objs, _, err := fresh.List(ctx)
	if err != nil || len(objs) != n {
		t.Fatalf("List with only the new key: %d objects, %v", len(objs), err)
	}
	for _, o := range objs {
		var idx int
		fmt.Sscanf(o.Key.Name, "app%d", &idx)
		if o.ImagePath != last[idx] || o.EnvVars[1].SecretValue != fmt.Sprint(planted, idx) {
			t.Errorf("%s: image %q secret %q; want %q and the planted secret (a write was lost)", o.Key.Name, o.ImagePath, o.EnvVars[1].SecretValue, last[idx])
		}
	}
}

func TestSnapshotOpensOnlyWithTheKey(t *testing.T) {
	ctx := ctxT(t)
	srv := etcdtest.New(t)
	k := newKeyring(t)
	s := sealedStore(t, srv, k)
	apps := store.NewKind[*edgeproto.App](s)
	app := secretApp("snap", planted+"Snapshot")
	if _, err := apps.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	rc, err := srv.Client().Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	path := filepath.Join(t.TempDir(), "backup.db")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(f, rc); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if files := filesHolding(t, filepath.Dir(path), planted); len(files) > 0 {
		t.Fatalf("the snapshot holds a planted secret")
	}
	val := snapshotValue(t, path, apps.Path(app.GetKeyString()))
	got, err := apps.Decode(app.GetKeyString(), val)
	if err != nil || got.EnvVars[1].SecretValue != planted+"Snapshot" {
		t.Fatalf("the snapshot's value with the key: %v, %v", got, err)
	}
	if _, err := store.NewKind[*edgeproto.App](sealedStore(t, srv, newKeyring(t))).Decode(app.GetKeyString(), val); !errors.Is(err, atrest.ErrUndecryptable) {
		t.Fatalf("the snapshot's value with another key: err %v, want ErrUndecryptable", err)
	}
}

// snapshotValue reads the newest value of key from an etcd snapshot (a
// bbolt database whose bucket "key" holds every revision).
func snapshotValue(t *testing.T, path, key string) []byte {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var val []byte
	err = db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("key"))
		if b == nil {
			return errors.New("no bucket \"key\" in the snapshot")
		}
		return b.ForEach(func(_, v []byte) error {
			var kv mvccpb.KeyValue
			if err := proto.Unmarshal(v, &kv); err != nil {
				return err
			}
			if string(kv.Key) == key {
				val = bytes.Clone(kv.Value)
			}
			return nil
		})
	})
	if err != nil || val == nil {
		t.Fatalf("reading %s from the snapshot: %v (found %v)", key, err, val != nil)
	}
	return val
}

// TxPutSized returns the size of the object's protojson encoding, before
// sealing: what the value's plaintext takes, sealed or not.
func TestTxPutSized(t *testing.T) {
	t.Parallel()
	srv := etcdtest.New(t)
	app := secretApp("sized", planted+"sized")
	want, err := protojson.Marshal(app)
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]*store.Store{"plain": plainStore(t, srv), "sealed": sealedStore(t, srv, newKeyring(t))} {
		apps := store.NewKind[*edgeproto.App](s)
		var size int
		if _, err := s.Txn(ctxT(t), func(tx *store.Tx) error {
			var err error
			size, err = apps.TxPutSized(tx, app)
			return err
		}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if size != len(want) {
			t.Errorf("%s: TxPutSized = %d, want the protojson size %d", name, size, len(want))
		}
		got, _, err := apps.Get(ctxT(t), app.GetKeyString())
		if err != nil || got.GetEnvVars()[1].GetSecretValue() != planted+"sized" {
			t.Errorf("%s: stored %v, %v", name, got, err)
		}
	}
}
