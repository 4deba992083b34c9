package allocator_test

import (
	"testing"
	"time"

	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/hosts/fluidos/provider"
)

// BenchmarkAllocation measures, per sale, the time from the purchase to
// the allocation ACTIVE and from the release to RELEASED (capacity back on
// sale), on the fake platform (the engine, the store and the allocator's
// own cost) and on the local platform (real processes: a cluster
// directory and port range for a slice; for a service, the kv process
// started and its health check passed, then stopped).
func BenchmarkAllocation(b *testing.B) {
	for _, platform := range []string{"fake", "local"} {
		for _, kind := range []string{"slice", "service"} {
			b.Run(platform+"/"+kind, func(b *testing.B) {
				var opts []envOption
				if platform == "local" {
					opts = append(opts, onLocal(b))
				}
				e := newEnv(b, opts...)
				e.poll = time.Millisecond
				flavor, cfg := provider.K8SliceFlavorID(seller), slice(500, 256<<20, 1)
				if kind == "service" {
					flavor, cfg = provider.ServiceFlavorID(seller, "kv"), service(map[string]string{"password": "bench-pass-1"})
				}
				var up, down time.Duration
				b.ResetTimer()
				for range b.N {
					start := time.Now()
					c := e.buy(flavor, cfg)
					e.waitAllocation(c, "ACTIVE", state(fluidos.AllocationState_ALLOCATION_STATE_ACTIVE))
					mid := time.Now()
					if _, err := e.prov.Release(ctxT(b), "alice", c.GetId(), ""); err != nil {
						b.Fatal(err)
					}
					e.waitAllocation(c, "RELEASED", state(fluidos.AllocationState_ALLOCATION_STATE_RELEASED))
					up, down = up+mid.Sub(start), down+time.Since(mid)
				}
				b.ReportMetric(float64(up)/float64(time.Millisecond)/float64(b.N), "alloc-ms/op")
				b.ReportMetric(float64(down)/float64(time.Millisecond)/float64(b.N), "teardown-ms/op")
			})
		}
	}
}
