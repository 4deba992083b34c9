package executor_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/platforms/fake"
)

// benchObjects is how many clusters the reconcile and resend benchmarks
// hold: a large cloudlet.
const benchObjects = 1000

// benchEngine runs an engine on the fake platform with benchObjects READY
// clusters on both the host's side and the platform's.
func benchEngine(b *testing.B) (*executor.Engine, *edgeproto.Cloudlet) {
	b.Helper()
	p := fake.New(fake.Options{Capacity: map[string]uint64{
		fake.ResourceVCPUs: 1 << 20, fake.ResourceRAM: 1 << 30, fake.ResourceDisk: 1 << 30}})
	res := executor.NewMemReservations()
	w := newWorld()
	cl := &edgeproto.Cloudlet{Key: cloudletKey.Clone()}
	w.cloudlets.Put(cl)
	for i := range benchObjects {
		ci := &edgeproto.ClusterInst{Key: clusterKey("c" + strconv.Itoa(i)), CloudletKey: cloudletKey.Clone(),
			State: edgeproto.TrackedState_TRACKED_STATE_READY}
		if err := p.CreateCluster(context.Background(), cl, ci.Clone(), res, executor.ProgressFunc(func(string) {})); err != nil {
			b.Fatal(err)
		}
		w.clusters.Put(ci)
	}
	cfg := w.config(p)
	cfg.Reservations = res
	cfg.ClusterInstInfos = w.clusterInfos
	eng, err := executor.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	start(b, eng)
	return eng, cl
}

// BenchmarkReconcile reconciles a cloudlet with 1,000 clusters present on
// both sides (each gets a report with its resources): the cost of a
// restart that finds everything in place.
func BenchmarkReconcile(b *testing.B) {
	eng, cl := benchEngine(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		res, err := eng.Reconcile(ctx, cl)
		if err != nil || res.Count(executor.ReconcileReport) != benchObjects {
			b.Fatalf("Reconcile: %d reports, %v", res.Count(executor.ReconcileReport), err)
		}
	}
	b.ReportMetric(float64(benchObjects*b.N)/b.Elapsed().Seconds(), "objects/s")
}

// BenchmarkResend re-sends the last known Info of 1,000 clusters.
func BenchmarkResend(b *testing.B) {
	eng, cl := benchEngine(b)
	ctx := context.Background()
	if _, err := eng.Reconcile(ctx, cl); err != nil { // every cluster reported once
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := eng.Resend(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(benchObjects*b.N)/b.Elapsed().Seconds(), "objects/s")
}
