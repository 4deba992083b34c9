package ccrm_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/hosts/ccrm/ccrmtest"
	"github.com/edgekit/edgekit/hosts/controller"
	"github.com/edgekit/edgekit/hosts/controller/controllertest"
	"github.com/edgekit/edgekit/internal/store"
	"github.com/edgekit/edgekit/internal/testenv/cpuprof"
	"github.com/edgekit/edgekit/internal/testenv/etcdtest"
	"github.com/edgekit/edgekit/platforms/fake"
)

// BenchmarkReplicas measures the throughput of 1, 2 and 4 replica
// processes (4 workers each) on a platform whose every call takes 50 ms:
// b.N clusters are requested (16 requests at a time) and the clock stops
// when the last is READY, seen through a watch (a poll that lists every
// cluster would spend the CPU it measures). Besides clusters/s it reports
// the CPU time spent per cluster by the replicas and by this process
// (process-cpu-ms: the controller, its etcd, the platform server and this
// driver), and, from a CPU profile of this process over the same time
// (see package cpuprof), by each of those parts: controller-cpu-ms is
// the controller's share. The platform server keeps its reservations in an
// etcd of its own (platform-etcd-cpu-ms), so that the controller's etcd
// (etcd-cpu-ms) serves only the region. It also reports the etcd requests
// and watch events per cluster by sender (see etcdCounts), and logs them
// all. Run with a fixed count, e.g. -benchtime=300x.
func BenchmarkReplicas(b *testing.B) {
	for _, n := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("replicas=%d", n), func(b *testing.B) {
			ctlEtcd, platEtcd := etcdtest.NewCounter(), etcdtest.NewCounter()
			r := ccrmtest.NewRegion(b, ccrmtest.RegionOptions{Cloudlets: 4, Latency: 50 * time.Millisecond,
				StoreDialOptions: ctlEtcd.DialOptions(), PlatformEtcd: true, PlatformEtcdDialOptions: platEtcd.DialOptions()})
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
			var driverEvents atomic.Int64 // the watch shares the controller's etcd client
			go func() {
				seen := map[string]bool{}
				for ev := range clusters.Watch(wctx, rev+1) {
					driverEvents.Add(1)
					if ev.Type == store.EventPut && ev.Object.State == edgeproto.TrackedState_TRACKED_STATE_READY && !seen[ev.Key] {
						seen[ev.Key] = true
						ready <- struct{}{}
					}
				}
			}()
			cpu0, self0 := replicasCPU(b, ps), cpuprof.SelfCPU()
			counts0 := etcdCountsOf(b, ctlEtcd, platEtcd, &driverEvents)
			prof := cpuprof.Start()
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
			cpu, self := replicasCPU(b, ps)-cpu0, cpuprof.SelfCPU()-self0
			profFile := ""
			if dir := os.Getenv(ccrmtest.EnvCPUProfileDir); dir != "" {
				// Beside the replicas' profiles: this process's, by component.
				profFile = filepath.Join(dir, "benchmark.pprof")
			}
			byComponent, err := prof.Stop(controllertest.ComponentLabel, profFile)
			if err != nil {
				b.Fatal(err)
			}
			counts := etcdCountsOf(b, ctlEtcd, platEtcd, &driverEvents).sub(counts0)
			perCluster := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(b.N) }
			b.ReportMetric(float64(b.N)/took.Seconds(), "clusters/s")
			b.ReportMetric(perCluster(cpu), "replica-cpu-ms/cluster")
			b.ReportMetric(perCluster(self), "process-cpu-ms/cluster")
			if byComponent != nil {
				b.ReportMetric(perCluster(byComponent[controllertest.ComponentController]), "controller-cpu-ms/cluster")
				b.ReportMetric(perCluster(byComponent[controllertest.ComponentEtcd]), "etcd-cpu-ms/cluster")
				b.ReportMetric(perCluster(byComponent[ccrmtest.ComponentPlatform]), "platform-cpu-ms/cluster")
				b.ReportMetric(perCluster(byComponent[ccrmtest.ComponentPlatformEtcd]), "platform-etcd-cpu-ms/cluster")
				b.ReportMetric(perCluster(byComponent[""]), "other-cpu-ms/cluster")
			}
			counts.report(b)
		})
	}
}

// etcdCounts are the etcd requests and watch events of a benchmark's
// parts: the controller's (its store's client, less the driver's watch,
// which shares it), the driver's watch, the platform server's (its own
// etcd), and the replicas': what the etcd members served less the others.
type etcdCounts struct {
	controller, platform, replicas etcdtest.Counts
	driverEvents                   int64
	server                         etcdtest.Counts // both etcds
}

func etcdCountsOf(b *testing.B, ctl, plat *etcdtest.Counter, driverEvents *atomic.Int64) etcdCounts {
	srv, err := etcdtest.ServerCounts()
	if err != nil {
		b.Fatal(err)
	}
	return etcdCounts{controller: ctl.Counts(), platform: plat.Counts(), driverEvents: driverEvents.Load(), server: srv}
}

func (c etcdCounts) sub(o etcdCounts) etcdCounts {
	out := etcdCounts{controller: c.controller.Sub(o.controller), platform: c.platform.Sub(o.platform),
		driverEvents: c.driverEvents - o.driverEvents, server: c.server.Sub(o.server)}
	out.controller.WatchEvents -= out.driverEvents
	// The replicas' share: the servers' counts (a Txn not split into
	// reads and writes) less what the clients of this process sent.
	out.replicas = out.server.Sub(out.controller).Sub(out.platform)
	out.replicas.WatchEvents -= out.driverEvents
	for _, in := range []etcdtest.Counts{out.controller, out.platform} {
		out.replicas.Requests["Txn"] -= in.Requests["Txn/read"] + in.Requests["Txn/write"]
		delete(out.replicas.Requests, "Txn/read")
		delete(out.replicas.Requests, "Txn/write")
	}
	for k := range out.replicas.Requests {
		if strings.HasPrefix(k, "mvcc/") {
			delete(out.replicas.Requests, k)
		}
	}
	return out
}

// report reports the requests per cluster by sender, and logs them all.
func (c etcdCounts) report(b *testing.B) {
	per := func(n int64) float64 { return float64(n) / float64(b.N) }
	b.ReportMetric(per(c.controller.Writes()), "ctl-etcd-writes/cluster")
	b.ReportMetric(per(c.controller.Reads()), "ctl-etcd-reads/cluster")
	b.ReportMetric(per(c.controller.WatchEvents), "ctl-watch-events/cluster")
	b.ReportMetric(per(c.replicas.Requests["Txn"]+c.replicas.Requests["Put"]+c.replicas.Requests["DeleteRange"]+c.replicas.Requests["Range"]), "replica-etcd-requests/cluster")
	b.ReportMetric(per(c.replicas.WatchEvents), "replica-watch-events/cluster")
	b.ReportMetric(per(c.server.Requests["mvcc/put"]), "etcd-keys-put/cluster")
	b.ReportMetric(per(c.platform.Writes()+c.platform.Reads()), "platform-etcd-requests/cluster")
	b.Logf("etcd per %d clusters: controller: %v; replicas: %v; driver: watch-events=%d; platform server: %v; servers: %v",
		b.N, c.controller, c.replicas, c.driverEvents, c.platform, c.server)
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
