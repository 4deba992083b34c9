package store_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/edgekit/edgekit/atrest"
	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/internal/etcd"
	"github.com/edgekit/edgekit/internal/store"
	"github.com/edgekit/edgekit/internal/testenv/etcdtest"
)

// benchStore starts etcd, with fsync as production runs it or without it
// as the tests run it, and returns a store on it.
func benchStore(b *testing.B, fsync bool) (*store.Store, *etcdtest.Server) {
	b.Helper()
	srv := etcdtest.New(b, etcdtest.WithConfig(func(c *etcd.EmbedConfig) { c.UnsafeNoFsync = !fsync }))
	s, err := store.New(srv.Client(), "bench")
	if err != nil {
		b.Fatal(err)
	}
	return s, srv
}

// BenchmarkUpdate compares the store's Update (CopyInFields of one flag
// into the object, compare-and-swap write) with the least a compare-and-swap write
// costs in etcd: one Txn comparing the ModRevision the writer knows from
// its last write, with a value encoded in advance. The store starts from
// the object it remembers (impl=store) or reads it first (impl=store-cold,
// a store remembering nothing). All run on the same
// embedded etcd, one after the other, from one goroutine (par=1) or from 8
// goroutines on 8 objects (par=8).
func BenchmarkUpdate(b *testing.B) {
	for _, fsync := range []bool{false, true} {
		s, srv := benchStore(b, fsync)
		k := store.NewKind[*edgeproto.ClusterInst](s)
		// A store that remembers no object reads before every update, as
		// when another process wrote the object since.
		cold, err := store.New(srv.Client(), "bench", store.WithRecentSize(0))
		if err != nil {
			b.Fatal(err)
		}
		kcold := store.NewKind[*edgeproto.ClusterInst](cold)
		ctx := context.Background()
		fm := mustFM(b, edgeproto.ClusterInstFieldFlavorName)
		for _, par := range []int{1, 8} {
			keys := make([]string, par)
			for i := range keys {
				c := cluster(fmt.Sprintf("c%d-%v", i, fsync), "acme")
				if _, err := k.Put(ctx, c); err != nil {
					b.Fatal(err)
				}
				keys[i] = c.GetKeyString()
			}
			name := func(impl string) string { return fmt.Sprintf("fsync=%v/par=%d/impl=%s", fsync, par, impl) }
			b.Run(name("store"), func(b *testing.B) {
				runPar(b, par, func(g, i int) error {
					src := &edgeproto.ClusterInst{FlavorName: fmt.Sprintf("f%d", i)}
					_, _, err := k.Update(ctx, keys[g], src, fm, nil)
					return err
				})
				reportRate(b)
			})
			b.Run(name("store-cold"), func(b *testing.B) {
				runPar(b, par, func(g, i int) error {
					src := &edgeproto.ClusterInst{FlavorName: fmt.Sprintf("g%d", i)}
					_, _, err := kcold.Update(ctx, keys[g], src, fm, nil)
					return err
				})
				reportRate(b)
			})
			b.Run(name("raw"), func(b *testing.B) {
				cli := s.Client()
				revs := make([]int64, par)
				vals := make([]string, par)
				for g := range par {
					obj, rev, err := k.Get(ctx, keys[g])
					if err != nil {
						b.Fatal(err)
					}
					revs[g] = rev
					v, err := protojson.Marshal(obj)
					if err != nil {
						b.Fatal(err)
					}
					vals[g] = string(v)
				}
				runPar(b, par, func(g, _ int) (err error) {
					revs[g], err = rawCAS(ctx, cli, k.Path(keys[g]), revs[g], vals[g])
					return err
				})
				reportRate(b)
			})
		}
	}
}

// rawCAS is the baseline write: one Txn that puts val under key when the
// key's ModRevision is rev, the revision of the writer's last write.
func rawCAS(ctx context.Context, cli *clientv3.Client, key string, rev int64, val string) (int64, error) {
	resp, err := cli.Txn(ctx).
		If(clientv3.Compare(clientv3.ModRevision(key), "=", rev)).
		Then(clientv3.OpPut(key, val)).
		Commit()
	if err != nil {
		return 0, err
	}
	if !resp.Succeeded {
		return 0, fmt.Errorf("compare of %s failed", key)
	}
	return resp.Header.Revision, nil
}

// runPar runs b.N calls of op spread over par goroutines; op gets its
// goroutine's number and a call count.
func runPar(b *testing.B, par int, op func(g, i int) error) {
	b.ReportAllocs()
	errs := make(chan error, par)
	b.ResetTimer()
	for g := range par {
		n := b.N / par
		if g < b.N%par {
			n++
		}
		go func() {
			for i := range n {
				if err := op(g, i); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range par {
		if err := <-errs; err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
}

// reportRate reports b.N operations over the benchmark's time as ops/s.
func reportRate(b *testing.B) { b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s") }

// BenchmarkList10000 lists 10,000 ClusterInsts: the store's List (paged,
// decoded) against a raw paged range read of the same keys (no decoding),
// and a synced Cache's List (copies).
func BenchmarkList10000(b *testing.B) {
	const n = 10000
	s, _ := benchStore(b, false)
	k := store.NewKind[*edgeproto.ClusterInst](s)
	ctx := context.Background()
	ops := make([]clientv3.Op, 0, 100)
	for i := range n {
		c := cluster(fmt.Sprintf("c%05d", i), "acme")
		c.NodePools = []*edgeproto.NodePool{{Name: "pool", NumNodes: 3}}
		c.InfraAnnotations = map[string]string{"zone": "a", "rack": fmt.Sprint(i % 40)}
		v, err := protojson.Marshal(c)
		if err != nil {
			b.Fatal(err)
		}
		ops = append(ops, clientv3.OpPut(k.Path(c.GetKeyString()), string(v)))
		if len(ops) == cap(ops) {
			if _, err := s.Client().Txn(ctx).Then(ops...).Commit(); err != nil {
				b.Fatal(err)
			}
			ops = ops[:0]
		}
	}
	b.Run("impl=store", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			objs, _, err := k.List(ctx)
			if err != nil || len(objs) != n {
				b.Fatalf("%d objects, %v", len(objs), err)
			}
		}
	})
	b.Run("impl=raw", func(b *testing.B) {
		b.ReportAllocs()
		end := clientv3.GetPrefixRangeEnd(k.Prefix())
		for b.Loop() {
			count, key, rev := 0, k.Prefix(), int64(0)
			for {
				opts := []clientv3.OpOption{clientv3.WithRange(end), clientv3.WithLimit(store.DefaultPageSize)}
				if rev != 0 {
					opts = append(opts, clientv3.WithRev(rev))
				}
				resp, err := s.Client().Get(ctx, key, opts...)
				if err != nil {
					b.Fatal(err)
				}
				rev = resp.Header.Revision
				count += len(resp.Kvs)
				if !resp.More {
					break
				}
				key = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
			}
			if count != n {
				b.Fatalf("%d keys", count)
			}
		}
	})
	b.Run("impl=cache", func(b *testing.B) {
		c := store.NewCache(k)
		cctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- c.Start(cctx) }()
		<-c.Synced()
		b.ReportAllocs()
		for b.Loop() {
			if objs := c.List(); len(objs) != n {
				b.Fatalf("%d objects", len(objs))
			}
		}
		b.StopTimer()
		cancel()
		<-done
	})
}

// BenchmarkUpdateInterleaved measures the same two operations as
// BenchmarkUpdate (impl=store and impl=raw), but alternately in one loop,
// each timed on its own, so that both see the same load on a shared
// machine. It reports each one's rate and their ratio (store/raw).
func BenchmarkUpdateInterleaved(b *testing.B) {
	for _, fsync := range []bool{false, true} {
		s, _ := benchStore(b, fsync)
		k := store.NewKind[*edgeproto.ClusterInst](s)
		ctx := context.Background()
		fm := mustFM(b, edgeproto.ClusterInstFieldFlavorName)
		for _, par := range []int{1, 8} {
			b.Run(fmt.Sprintf("fsync=%v/par=%d", fsync, par), func(b *testing.B) {
				var mu sync.Mutex
				var storeTime, rawTime time.Duration
				keys := make([]string, par)
				revs := make([]int64, par)
				vals := make([]string, par)
				for g := range par {
					c := cluster(fmt.Sprintf("i%d-%v-%d", g, fsync, b.N), "acme")
					if _, err := k.Put(ctx, c); err != nil {
						b.Fatal(err)
					}
					keys[g] = c.GetKeyString()
					v, err := protojson.Marshal(c)
					if err != nil {
						b.Fatal(err)
					}
					vals[g] = string(v)
					// The raw writer has its own key of the same size.
					resp, err := s.Client().Put(ctx, k.Path(keys[g])+"-raw", vals[g])
					if err != nil {
						b.Fatal(err)
					}
					revs[g] = resp.Header.Revision
				}
				runPar(b, par, func(g, i int) error {
					t0 := time.Now()
					src := &edgeproto.ClusterInst{FlavorName: fmt.Sprintf("f%d", i)}
					if _, _, err := k.Update(ctx, keys[g], src, fm, nil); err != nil {
						return err
					}
					t1 := time.Now()
					rev, err := rawCAS(ctx, s.Client(), k.Path(keys[g])+"-raw", revs[g], vals[g])
					if err != nil {
						return err
					}
					revs[g] = rev
					t2 := time.Now()
					mu.Lock()
					storeTime += t1.Sub(t0)
					rawTime += t2.Sub(t1)
					mu.Unlock()
					return nil
				})
				// Per goroutine: the rate each would reach alone, times par.
				storeRate := float64(b.N) / storeTime.Seconds() * float64(par)
				rawRate := float64(b.N) / rawTime.Seconds() * float64(par)
				b.ReportMetric(storeRate, "store-ops/s")
				b.ReportMetric(rawRate, "raw-ops/s")
				b.ReportMetric(storeRate/rawRate, "store/raw")
			})
		}
	}
}

// BenchmarkDecodeSealed measures decoding one stored App with secrets
// (Kind.Decode, what Get, List, a watch and a cache pay per value) in
// clear and sealed, without etcd: the cost of opening a sealed value.
func BenchmarkDecodeSealed(b *testing.B) {
	kr, _, err := atrest.EnsureKeyFile(filepath.Join(b.TempDir(), atrest.DefaultKeyFileName))
	if err != nil {
		b.Fatal(err)
	}
	srv := etcdtest.New(b)
	app := &edgeproto.App{Key: &edgeproto.AppKey{Organization: "dev", Name: "app", Version: "1"},
		Deployment: "docker", ImagePath: "registry.example/app:1", AccessPorts: "tcp:80", Annotations: map[string]string{"team": "blue"},
		EnvVars: []*edgeproto.EnvVar{{Name: "MODE", Value: "prod"}, {Name: "DB_PASSWORD", Secret: true, SecretValue: "s3cr3t"}}}
	for _, bc := range []struct {
		name string
		opts []store.Option
	}{{"plain", nil}, {"sealed", []store.Option{store.WithEncryption(atrest.NewEnvelope(kr))}}} {
		s, err := store.New(srv.Client(), bc.name, bc.opts...)
		if err != nil {
			b.Fatal(err)
		}
		k := store.NewKind[*edgeproto.App](s)
		if _, err := k.Create(context.Background(), app); err != nil {
			b.Fatal(err)
		}
		resp, err := srv.Client().Get(context.Background(), k.Path(app.GetKeyString()))
		if err != nil {
			b.Fatal(err)
		}
		val := resp.Kvs[0].Value
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := k.Decode(app.GetKeyString(), val); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkListSealed10k alternates Kind.List of 10,000 Apps with secrets
// stored in clear (region "plain") and sealed (region "sealed") on one
// etcd member, and reports the cost of opening the sealed values.
func BenchmarkListSealed10k(b *testing.B) {
	kr, _, err := atrest.EnsureKeyFile(filepath.Join(b.TempDir(), atrest.DefaultKeyFileName))
	if err != nil {
		b.Fatal(err)
	}
	srv := etcdtest.New(b)
	ctx := context.Background()
	const n = 10000
	var kinds [2]*store.Kind[*edgeproto.App]
	for i, opts := range [][]store.Option{nil, {store.WithEncryption(atrest.NewEnvelope(kr))}} {
		s, err := store.New(srv.Client(), []string{"plain", "sealed"}[i], opts...)
		if err != nil {
			b.Fatal(err)
		}
		kinds[i] = store.NewKind[*edgeproto.App](s)
		var wg sync.WaitGroup
		sem := make(chan struct{}, 32)
		for j := range n {
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				a := &edgeproto.App{Key: &edgeproto.AppKey{Organization: "dev", Name: fmt.Sprintf("app%05d", j), Version: "1"},
					Deployment: "docker", ImagePath: "registry.example/app:1", AccessPorts: "tcp:80", Annotations: map[string]string{"team": "blue"},
					EnvVars: []*edgeproto.EnvVar{{Name: "MODE", Value: "prod"}, {Name: "DB_PASSWORD", Secret: true, SecretValue: "s3cr3t"}}}
				if _, err := kinds[i].Create(ctx, a); err != nil {
					b.Error(err)
				}
			})
		}
		wg.Wait()
	}
	var took [2]time.Duration
	b.ResetTimer()
	for i := range b.N {
		for j := range 2 {
			c := (i + j) % 2
			t0 := time.Now()
			objs, _, err := kinds[c].List(ctx)
			if err != nil || len(objs) != n {
				b.Fatalf("list: %d, %v", len(objs), err)
			}
			took[c] += time.Since(t0)
		}
	}
	b.ReportMetric(took[0].Seconds()/float64(b.N)*1000, "plain-ms")
	b.ReportMetric(took[1].Seconds()/float64(b.N)*1000, "sealed-ms")
	b.ReportMetric(100*(took[1].Seconds()/took[0].Seconds()-1), "cost-%")
}
