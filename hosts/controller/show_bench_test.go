package controller_test

import (
	"context"
	"flag"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/hosts/controller/controllertest"
	"github.com/edgekit/edgekit/internal/store"
)

var showBenchObjects = flag.Int("controller.show-objects", 10000, "AppInsts in BenchmarkShowAppInsts (100000 for the issue's figure)")

// showAppInst is an AppInst of org with the fields a running instance
// has: keys of its app, cluster and cloudlet, ports, a URI, annotations.
func showAppInst(org string, i int) *edgeproto.AppInst {
	return &edgeproto.AppInst{
		Key:         &edgeproto.AppInstKey{Organization: org, Name: fmt.Sprintf("inst%06d", i)},
		AppKey:      &edgeproto.AppKey{Organization: org, Name: fmt.Sprintf("app%03d", i%100), Version: "1.0"},
		ClusterKey:  &edgeproto.ClusterKey{Organization: org, Name: fmt.Sprintf("cluster%04d", i%1000)},
		CloudletKey: &edgeproto.CloudletKey{Organization: "operator", Name: fmt.Sprintf("site%04d", i%1000)},
		State:       edgeproto.TrackedState_TRACKED_STATE_READY,
		Uri:         fmt.Sprintf("inst%06d.site%04d.edge.example", i, i%1000),
		Flavor:      "m4.small",
		MappedPorts: []*edgeproto.Port{
			{Proto: edgeproto.PortProtocol_PORT_PROTOCOL_TCP, InternalPort: 80, PublicPort: int32(10000 + i%50000)},
			{Proto: edgeproto.PortProtocol_PORT_PROTOCOL_UDP, InternalPort: 5353, PublicPort: int32(20000 + i%40000)},
		},
		Annotations: map[string]string{"team": "blue", "tier": "frontend", "release": fmt.Sprintf("r%d", i%7)},
	}
}

// putAppInsts writes the AppInsts obj(0) to obj(n-1) straight to the
// store, 50 to a transaction, 8 transactions at a time, and returns the
// last revision.
func putAppInsts(tb testing.TB, s *store.Store, n int, obj func(i int) *edgeproto.AppInst) int64 {
	tb.Helper()
	ctx := context.Background()
	k := store.NewKind[*edgeproto.AppInst](s)
	const batch = 50
	var (
		wg   sync.WaitGroup
		last atomic.Int64
		sem  = make(chan struct{}, 8)
	)
	for lo := 0; lo < n; lo += batch {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			rev, err := s.Txn(ctx, func(tx *store.Tx) error {
				for i := lo; i < min(lo+batch, n); i++ {
					if err := k.TxPut(tx, obj(i)); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				tb.Error(err)
				return
			}
			for cur := last.Load(); rev > cur && !last.CompareAndSwap(cur, rev); cur = last.Load() {
			}
		})
	}
	wg.Wait()
	if tb.Failed() {
		tb.FailNow()
	}
	return last.Load()
}

// heapSampler records, while it runs, the largest heap of live and dead
// objects (runtime/metrics, read every millisecond without stopping the
// world) and the largest live heap a collection found.
type heapSampler struct {
	stop     chan struct{}
	done     chan struct{}
	peakHeap uint64
	peakLive uint64
}

func startHeapSampler() *heapSampler {
	h := &heapSampler{stop: make(chan struct{}), done: make(chan struct{})}
	samples := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/gc/heap/live:bytes"}}
	read := func() {
		metrics.Read(samples)
		h.peakHeap = max(h.peakHeap, samples[0].Value.Uint64())
		h.peakLive = max(h.peakLive, samples[1].Value.Uint64())
	}
	read()
	go func() {
		defer close(h.done)
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-h.stop:
				read()
				return
			case <-t.C:
				read()
			}
		}
	}()
	return h
}

func (h *heapSampler) finish() {
	close(h.stop)
	<-h.done
}

// heapNow collects garbage and returns the heap objects' bytes and the
// live heap. It collects twice, so that what sync.Pools hold (buffers of
// gRPC) is not counted.
func heapNow() (heap, live uint64) {
	runtime.GC()
	runtime.GC()
	samples := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/gc/heap/live:bytes"}}
	metrics.Read(samples)
	return samples[0].Value.Uint64(), samples[1].Value.Uint64()
}

// BenchmarkShowAppInsts measures ShowAppInsts of -controller.show-objects
// AppInsts through the API (one call, every object received and dropped
// by a client in the same process), as Show works now (path=stream: the
// objects sent as a snapshot of the cache is walked) and as it worked
// before (path=whole: every object copied out of the cache before the
// first is sent), in one run. It reports the time to the first object, and
// the peak heap above what it was before the call: peak-heap-MiB samples
// the heap of live and dead objects every millisecond, peak-live-MiB is
// the largest live heap a collection found during the call. The garbage
// collector runs at GOGC=20 during the calls, so that collections (and
// live-heap readings) come often.
func BenchmarkShowAppInsts(b *testing.B) {
	n := *showBenchObjects
	env := controllertest.Start(b, controllertest.Options{})
	ctx := context.Background()
	putAppInsts(b, env.Store, n, func(i int) *edgeproto.AppInst { return showAppInst("dev", i) })
	admin := clientsOf(env.Conn(env.AdminToken()))
	show := func() (first time.Duration, got int) {
		t0 := time.Now()
		s, err := admin.appInsts.ShowAppInsts(ctx, &edgeproto.ShowAppInstsRequest{})
		if err != nil {
			b.Fatal(err)
		}
		for {
			_, err := s.Recv()
			if err == io.EOF {
				return first, got
			}
			if err != nil {
				b.Fatal(err)
			}
			if got == 0 {
				first = time.Since(t0)
			}
			got++
		}
	}
	show() // the cache has caught up; gRPC and the codecs are warm
	for _, path := range []string{"whole", "stream"} {
		b.Run("path="+path, func(b *testing.B) {
			env.Controller.SetShowWhole(path == "whole")
			defer env.Controller.SetShowWhole(false)
			defer debug.SetGCPercent(debug.SetGCPercent(20))
			var first time.Duration
			var peakHeap, peakLive float64
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				baseHeap, baseLive := heapNow()
				h := startHeapSampler()
				b.StartTimer()
				f, got := show()
				b.StopTimer()
				h.finish()
				if got != n {
					b.Fatalf("showed %d AppInsts, want %d", got, n)
				}
				first += f
				peakHeap = max(peakHeap, float64(h.peakHeap)-float64(baseHeap))
				peakLive = max(peakLive, float64(h.peakLive)-float64(baseLive))
				b.StartTimer()
			}
			b.ReportMetric(float64(first.Milliseconds())/float64(b.N), "first-row-ms")
			b.ReportMetric(peakHeap/(1<<20), "peak-heap-MiB")
			b.ReportMetric(peakLive/(1<<20), "peak-live-MiB")
		})
	}
}
