package ccrm_test

import (
	"bytes"
	"context"
	"fmt"
	"runtime/pprof"
	"sort"
	"syscall"
	"testing"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/hosts/ccrm/ccrmtest"
	"github.com/edgekit/edgekit/hosts/controller"
	"github.com/edgekit/edgekit/hosts/controller/controllertest"
	"github.com/edgekit/edgekit/internal/store"
	"github.com/edgekit/edgekit/platforms/fake"
	"github.com/google/pprof/profile"
)

// BenchmarkReplicas measures the throughput of 1, 2 and 4 replica
// processes (4 workers each) on a platform whose every call takes 50 ms:
// b.N clusters are requested (16 requests at a time) and the clock stops
// when the last is READY, seen through a watch (a poll that lists every
// cluster would spend the CPU it measures). Besides clusters/s it reports
// the CPU time spent per cluster by the replicas and by this process
// (process-cpu-ms: the controller, its etcd, the platform server and this
// driver), and, from a CPU profile of this process over the same time
// (see componentProfile), by each of those parts: controller-cpu-ms is
// the controller's share. Run with a fixed count, e.g. -benchtime=300x.
func BenchmarkReplicas(b *testing.B) {
	for _, n := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("replicas=%d", n), func(b *testing.B) {
			r := ccrmtest.NewRegion(b, ccrmtest.RegionOptions{Cloudlets: 4, Latency: 50 * time.Millisecond})
			var ps []*ccrmtest.Process
			for i := range n {
				id := fmt.Sprintf("r%d", i)
				ps = append(ps, ccrmtest.StartReplica(b, id, r.ReplicaArgs(id, 5*time.Second, "--workers", "4", "--log-level", "warn"), r.TokenEnv()))
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			clusters := store.NewKind[*edgeproto.ClusterInst](r.Env.Store)
			_, rev, err := clusters.List(ctx)
			if err != nil {
				b.Fatal(err)
			}
			ready := make(chan struct{}, b.N)
			wctx, wcancel := context.WithCancel(ctx)
			defer wcancel()
			go func() {
				seen := map[string]bool{}
				for ev := range clusters.Watch(wctx, rev+1) {
					if ev.Type == store.EventPut && ev.Object.State == edgeproto.TrackedState_TRACKED_STATE_READY && !seen[ev.Key] {
						seen[ev.Key] = true
						ready <- struct{}{}
					}
				}
			}()
			cpu0, self0 := replicasCPU(b, ps), selfCPU()
			prof := startComponentProfile()
			b.ResetTimer()
			start := time.Now()
			sem := make(chan struct{}, 16)
			for i := range b.N {
				sem <- struct{}{}
				go func() {
					defer func() { <-sem }()
					_, err := ccrmtest.Wait(r.Cluster.CreateClusterInst(ctx, &edgeproto.CreateClusterInstRequest{NoWait: true, ClusterInst: &edgeproto.ClusterInst{
						Key: ccrmtest.ClusterKey(i), CloudletKey: r.Cloudlets[i%len(r.Cloudlets)], FlavorName: "fake.small", Deployment: "docker"}}))
					if err != nil {
						b.Error(err)
					}
				}()
			}
			for i := range b.N {
				select {
				case <-ready:
				case <-ctx.Done():
					b.Fatalf("%d of %d clusters READY when the time ran out", i, b.N)
				}
			}
			took := time.Since(start)
			b.StopTimer()
			cpu, self := replicasCPU(b, ps)-cpu0, selfCPU()-self0
			byComponent := prof.stop(b)
			perCluster := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(b.N) }
			b.ReportMetric(float64(b.N)/took.Seconds(), "clusters/s")
			b.ReportMetric(perCluster(cpu), "replica-cpu-ms/cluster")
			b.ReportMetric(perCluster(self), "process-cpu-ms/cluster")
			if byComponent != nil {
				b.ReportMetric(perCluster(byComponent[controllertest.ComponentController]), "controller-cpu-ms/cluster")
				b.ReportMetric(perCluster(byComponent[controllertest.ComponentEtcd]), "etcd-cpu-ms/cluster")
				b.ReportMetric(perCluster(byComponent[ccrmtest.ComponentPlatform]), "platform-cpu-ms/cluster")
				b.ReportMetric(perCluster(byComponent[""]), "other-cpu-ms/cluster")
			}
		})
	}
}

// componentProfile is a CPU profile of this process that tells the parts
// of the region apart by their profiler label (controllertest.ComponentLabel).
type componentProfile struct {
	buf bytes.Buffer
	on  bool
}

// startComponentProfile starts profiling this process, unless a profile
// runs already (-test.cpuprofile): then stop reports nothing.
func startComponentProfile() *componentProfile {
	p := &componentProfile{}
	p.on = pprof.StartCPUProfile(&p.buf) == nil
	return p
}

// stop ends the profile and returns the CPU time of its samples by
// component: controllertest.ComponentController (the controller's API,
// handlers, caches and watches), controllertest.ComponentEtcd (etcd and its
// clients' connection goroutines), ccrmtest.ComponentPlatform (the platform
// server) and "" for the rest (this benchmark's driver and watch, and the
// runtime's background work: garbage collection that no goroutine paid
// for as an assist, the scheduler). Sampled at 100 Hz: a run of a few
// seconds gives figures to a few percent.
func (p *componentProfile) stop(b *testing.B) map[string]time.Duration {
	if !p.on {
		return nil
	}
	pprof.StopCPUProfile()
	prof, err := profile.Parse(&p.buf)
	if err != nil {
		b.Fatalf("parse the CPU profile: %v", err)
	}
	idx := -1
	for i, st := range prof.SampleType {
		if st.Type == "cpu" && st.Unit == "nanoseconds" {
			idx = i
		}
	}
	if idx < 0 {
		b.Fatalf("the CPU profile has no cpu/nanoseconds sample type: %v", prof.SampleType)
	}
	out := map[string]time.Duration{}
	for _, s := range prof.Sample {
		c := ""
		if v := s.Label[controllertest.ComponentLabel]; len(v) > 0 {
			c = v[0]
		}
		out[c] += time.Duration(s.Value[idx])
	}
	return out
}

// replicasCPU is the CPU time the replica processes have used so far.
func replicasCPU(b *testing.B, ps []*ccrmtest.Process) time.Duration {
	var sum time.Duration
	for _, p := range ps {
		d, err := p.CPUTime()
		if err != nil {
			b.Fatal(err)
		}
		sum += d
	}
	return sum
}

// selfCPU is the CPU time this process has used so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkTakeover measures how long after a replica holding a claim is
// killed (SIGKILL) another replica holds it, with a 2 s lease.
func BenchmarkTakeover(b *testing.B) {
	const ttl = 2 * time.Second
	r := ccrmtest.NewRegion(b, ccrmtest.RegionOptions{Cloudlets: 1})
	ps := map[string]*ccrmtest.Process{}
	for _, id := range []string{"a", "b"} {
		ps[id] = ccrmtest.StartReplica(b, id, r.ReplicaArgs(id, ttl, "--log-level", "warn"), r.TokenEnv())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cli := r.Env.Store.Client()
	var lat []time.Duration
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		key := executor.KeyString(ccrmtest.ClusterKey(i))
		claim := controller.ClaimKey(r.Env.Store.Prefix(), "ClusterInst", key)
		gate := r.Server.Platform.Pause(fake.OpCreateCluster, key)
		if _, err := ccrmtest.Wait(r.Cluster.CreateClusterInst(ctx, &edgeproto.CreateClusterInstRequest{NoWait: true, ClusterInst: &edgeproto.ClusterInst{
			Key: ccrmtest.ClusterKey(i), CloudletKey: r.Cloudlets[0], FlavorName: "fake.small", Deployment: "docker"}})); err != nil {
			b.Fatal(err)
		}
		<-gate.Reached()
		resp, err := cli.Get(ctx, claim)
		if err != nil || len(resp.Kvs) != 1 {
			b.Fatalf("claim of %s: %v", key, err)
		}
		holder, rev := string(resp.Kvs[0].Value), resp.Kvs[0].CreateRevision
		b.StartTimer()
		killed := time.Now()
		ps[holder].Kill()
		for {
			resp, err := cli.Get(ctx, claim)
			if err != nil {
				b.Fatal(err)
			}
			if len(resp.Kvs) == 1 && resp.Kvs[0].CreateRevision > rev {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		lat = append(lat, time.Since(killed))
		b.StopTimer()
		gate.Release()
		ps[holder].Restart()
		b.StartTimer()
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	var sum time.Duration
	for _, l := range lat {
		sum += l
	}
	b.ReportMetric(float64(sum.Milliseconds())/float64(len(lat)), "ms/takeover")
	b.ReportMetric(float64(lat[len(lat)-1].Milliseconds()), "max-ms")
	b.ReportMetric(float64(lat[len(lat)-1])/float64(ttl), "max/TTL")
}
