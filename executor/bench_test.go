package executor_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/platforms/fake"
)

// BenchmarkLifecycle measures the engine's overhead per create -> READY ->
// delete -> DELETE_DONE of one cluster on the fake platform without
// latency, reporting into in-memory caches.
func BenchmarkLifecycle(b *testing.B) {
	w := newWorld()
	w.cloudlets.Put(cloudlet(edgeproto.TrackedState_TRACKED_STATE_READY))
	cfg := executor.Config{Platform: fake.New(fake.Options{}), Objects: w.objects(),
		ClusterInstInfos: w.clusterInfos}
	eng, err := executor.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	start(b, eng)
	create := cluster("c1", edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED)
	del := cluster("c1", edgeproto.TrackedState_TRACKED_STATE_DELETE_REQUESTED)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		h, err := eng.SubmitClusterInst(create)
		if err != nil {
			b.Fatal(err)
		}
		if err := h.Wait(ctx); err != nil {
			b.Fatal(err)
		}
		if h, err = eng.SubmitClusterInst(del); err != nil {
			b.Fatal(err)
		}
		if err := h.Wait(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkThroughput creates 1,000 clusters on a fake platform whose every
// call takes 1ms, for several pool sizes, and reports objects per second.
func BenchmarkThroughput(b *testing.B) {
	const objects = 1000
	const latency = time.Millisecond
	clusters := make([]*edgeproto.ClusterInst, objects)
	for i := range clusters {
		clusters[i] = &edgeproto.ClusterInst{Key: clusterKey("c" + strconv.Itoa(i)), CloudletKey: cloudletKey.Clone(),
			State: edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED}
	}
	for _, pool := range []int{1, 4, 16, 64} {
		b.Run("pool="+strconv.Itoa(pool), func(b *testing.B) {
			var total time.Duration
			for b.Loop() {
				b.StopTimer()
				w := newWorld()
				w.cloudlets.Put(&edgeproto.Cloudlet{Key: cloudletKey.Clone()})
				eng, err := executor.New(executor.Config{Platform: fake.New(fake.Options{Latency: latency}),
					Objects: w.objects(), ClusterInstInfos: w.clusterInfos, Workers: pool})
				if err != nil {
					b.Fatal(err)
				}
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan struct{})
				go func() { _ = eng.Start(ctx); close(done) }()
				b.StartTimer()
				t0 := time.Now()
				for _, c := range clusters {
					if _, err := eng.SubmitClusterInst(c); err != nil {
						b.Fatal(err)
					}
				}
				if err := eng.Wait(context.Background()); err != nil {
					b.Fatal(err)
				}
				total += time.Since(t0)
				b.StopTimer()
				if got := len(w.clusterInfos.Keys()); got != objects {
					b.Fatalf("%d clusters reported, want %d", got, objects)
				}
				cancel()
				<-done
				b.StartTimer()
			}
			b.ReportMetric(float64(objects*b.N)/total.Seconds(), "objects/s")
		})
	}
}
