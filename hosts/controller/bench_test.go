package controller_test

import (
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/hosts/controller/controllertest"
	"github.com/edgekit/edgekit/internal/store"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// BenchmarkUpdate compares, on one embedded etcd in one run, an App update
// through the controller's API (gRPC, token check, flag validation, one
// store transaction that reads, copies the flagged fields and writes under
// a compare on the revision) with the raw etcd work underneath: a read and
// a compare-and-swap Txn of the same value, with no gRPC in between. Each
// of 16 goroutines updates its own object.
func BenchmarkUpdate(b *testing.B) {
	env := controllertest.Start(b, controllertest.Options{})
	ctx := context.Background()
	dev := clientsOf(env.Conn(env.OrgToken("dev")))
	const workers = 16
	keys := make([]*edgeproto.AppKey, workers)
	for i := range keys {
		keys[i] = &edgeproto.AppKey{Organization: "dev", Name: fmt.Sprintf("app%d", i), Version: "1"}
		if _, err := dev.apps.CreateApp(ctx, &edgeproto.CreateAppRequest{App: &edgeproto.App{Key: keys[i], Deployment: "docker"}}); err != nil {
			b.Fatal(err)
		}
	}
	run := func(b *testing.B, op func(worker, i int) error) {
		var next atomic.Int64
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		b.ResetTimer()
		for w := range workers {
			wg.Go(func() {
				for {
					i := next.Add(1)
					if i > int64(b.N) {
						return
					}
					if err := op(w, int(i)); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		b.StopTimer()
		close(errs)
		for err := range errs {
			b.Fatal(err)
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "updates/s")
	}
	b.Run("impl=controller", func(b *testing.B) {
		run(b, func(w, i int) error {
			_, err := dev.apps.UpdateApp(ctx, &edgeproto.UpdateAppRequest{
				App: &edgeproto.App{Key: keys[w], ImagePath: fmt.Sprintf("image:%d", i)}, Fields: []string{edgeproto.AppFieldImagePath}})
			return err
		})
	})
	b.Run("impl=etcd-txn", func(b *testing.B) {
		cli := env.Store.Client()
		apps := store.NewKind[*edgeproto.App](env.Store)
		run(b, func(w, i int) error {
			path := apps.Path((&edgeproto.App{Key: keys[w]}).GetKeyString())
			resp, err := cli.Get(ctx, path)
			if err != nil || len(resp.Kvs) == 0 {
				return fmt.Errorf("get %s: %v", path, err)
			}
			kv := resp.Kvs[0]
			val := append([]byte(nil), kv.Value...)
			val[len(val)-2] = byte('a' + i%26) // a changed value of the same size
			_, err = cli.Txn(ctx).If(clientv3.Compare(clientv3.ModRevision(path), "=", kv.ModRevision)).
				Then(clientv3.OpPut(path, string(val))).Commit()
			return err
		})
	})
}

// BenchmarkShow10k measures ShowApps of 10,000 Apps through the API: one
// call, every object streamed to the client.
func BenchmarkShow10k(b *testing.B) {
	env := controllertest.Start(b, controllertest.Options{})
	ctx := context.Background()
	apps := store.NewKind[*edgeproto.App](env.Store)
	const n = 10000
	var wg sync.WaitGroup
	sem := make(chan struct{}, 32)
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			a := &edgeproto.App{Key: &edgeproto.AppKey{Organization: "dev", Name: fmt.Sprintf("app%05d", i), Version: "1"},
				Deployment: "docker", ImagePath: "registry.example/app:1", AccessPorts: "tcp:80",
				Annotations: map[string]string{"team": "blue"}}
			if _, err := apps.Create(ctx, a); err != nil {
				b.Error(err)
			}
		})
	}
	wg.Wait()
	admin := clientsOf(env.Conn(env.AdminToken()))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		s, err := admin.apps.ShowApps(ctx, &edgeproto.ShowAppsRequest{})
		if err != nil {
			b.Fatal(err)
		}
		got := 0
		for {
			_, err := s.Recv()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			got++
		}
		if got != n {
			b.Fatalf("showed %d apps, want %d", got, n)
		}
	}
}

// BenchmarkUpdateInterleaved alternates one controller update and one raw
// read-and-compare-and-swap on the same embedded etcd in one loop, so that
// both see the same machine load, and reports their rates and ratio.
//
// It also reports how many etcd reads an update sent on average: 0 when
// every update read the App from the controller's cache and found it
// current, more when a cache copy was stale and the transaction ran again
// reading etcd.
func BenchmarkUpdateInterleaved(b *testing.B) {
	calls := &etcdCalls{n: map[[2]string]int{}}
	env := controllertest.Start(b, controllertest.Options{StoreInterceptor: calls.intercept})
	ctx := context.Background()
	dev := clientsOf(env.Conn(env.OrgToken("dev")))
	key := &edgeproto.AppKey{Organization: "dev", Name: "app", Version: "1"}
	if _, err := dev.apps.CreateApp(ctx, &edgeproto.CreateAppRequest{App: &edgeproto.App{Key: key, Deployment: "docker"}}); err != nil {
		b.Fatal(err)
	}
	raw := &edgeproto.AppKey{Organization: "dev", Name: "raw", Version: "1"}
	if _, err := dev.apps.CreateApp(ctx, &edgeproto.CreateAppRequest{App: &edgeproto.App{Key: raw, Deployment: "docker"}}); err != nil {
		b.Fatal(err)
	}
	cli := env.Store.Client()
	path := store.NewKind[*edgeproto.App](env.Store).Path((&edgeproto.App{Key: raw}).GetKeyString())
	var ctl, etcd time.Duration
	b.ResetTimer()
	for i := range b.N {
		t0 := time.Now()
		if _, err := dev.apps.UpdateApp(ctx, &edgeproto.UpdateAppRequest{
			App: &edgeproto.App{Key: key, ImagePath: fmt.Sprintf("image:%d", i)}, Fields: []string{edgeproto.AppFieldImagePath}}); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		resp, err := cli.Get(ctx, path)
		if err != nil || len(resp.Kvs) == 0 {
			b.Fatalf("get: %v", err)
		}
		kv := resp.Kvs[0]
		val := append([]byte(nil), kv.Value...)
		val[len(val)-2] = byte('a' + i%26)
		if _, err := cli.Txn(ctx).If(clientv3.Compare(clientv3.ModRevision(path), "=", kv.ModRevision)).
			Then(clientv3.OpPut(path, string(val))).Commit(); err != nil {
			b.Fatal(err)
		}
		ctl += t1.Sub(t0)
		etcd += time.Since(t1)
	}
	b.ReportMetric(float64(b.N)/ctl.Seconds(), "controller-updates/s")
	b.ReportMetric(float64(b.N)/etcd.Seconds(), "etcd-txns/s")
	b.ReportMetric(etcd.Seconds()/ctl.Seconds(), "ratio")
	b.ReportMetric(float64(calls.count("/edgeproto.v1.AppService/UpdateApp", etcdRange))/float64(b.N), "etcd-reads/update")
}
