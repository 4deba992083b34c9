package ccrm_test

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/hosts/ccrm/ccrmtest"
	"github.com/edgekit/edgekit/hosts/controller"
	"github.com/edgekit/edgekit/internal/store"
	"github.com/edgekit/edgekit/platforms/fake"
)

// BenchmarkReplicas measures the throughput of 1, 2 and 4 replica
// processes (4 workers each) on a platform whose every call takes 50 ms:
// b.N clusters are requested at once and the clock stops when the last is
// READY. Run with a fixed count, e.g. -benchtime=200x.
func BenchmarkReplicas(b *testing.B) {
	for _, n := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("replicas=%d", n), func(b *testing.B) {
			r := ccrmtest.NewRegion(b, ccrmtest.RegionOptions{Cloudlets: 4, Latency: 50 * time.Millisecond})
			for i := range n {
				id := fmt.Sprintf("r%d", i)
				ccrmtest.StartReplica(b, id, r.ReplicaArgs(id, 5*time.Second, "--workers", "4", "--log-level", "warn"), r.TokenEnv())
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			clusters := store.NewKind[*edgeproto.ClusterInst](r.Env.Store)
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
			for {
				all, _, err := clusters.List(ctx)
				if err != nil {
					b.Fatal(err)
				}
				ready := 0
				for _, c := range all {
					if c.State == edgeproto.TrackedState_TRACKED_STATE_READY {
						ready++
					}
				}
				if ready == b.N {
					break
				}
				if ctx.Err() != nil {
					b.Fatalf("%d of %d clusters READY when the time ran out", ready, b.N)
				}
				time.Sleep(10 * time.Millisecond)
			}
			took := time.Since(start)
			b.StopTimer()
			b.ReportMetric(float64(b.N)/took.Seconds(), "clusters/s")
		})
	}
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
