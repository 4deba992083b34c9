package ccrm_test

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/hosts/ccrm/ccrmtest"
	"google.golang.org/grpc"
)

var (
	chaosLifecycles = flag.Int("ccrm.lifecycles", 24, "lifecycles of the chaos test (1000 for the full run)")
	chaosParallel   = flag.Int("ccrm.parallel", 8, "lifecycles the chaos test runs at once")
	chaosLatency    = flag.Duration("ccrm.latency", 20*time.Millisecond, "latency of every platform call in the chaos test")
)

// The chaos test: four replica processes run lifecycles (create, update,
// delete of clusters and instances over three cloudlets) while a driver
// kills a random replica with SIGKILL and starts it again every couple of
// seconds, and every third time stops another with SIGSTOP for longer than
// the lease before SIGCONT. Nothing may be lost, created twice on the
// platform, or reported under a claim that had ended.
func TestChaos(t *testing.T) {
	t.Parallel()
	const (
		replicas = 4
		ttl      = 2 * time.Second
	)
	oracle := &reportOracle{}
	r := ccrmtest.NewRegion(t, ccrmtest.RegionOptions{Latency: *chaosLatency,
		ServerOptions: []grpc.ServerOption{grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			return oracle.interceptor()(ctx, req, info, h)
		})}})
	oracle.cli = r.Env.Store.Client()
	ps := make([]*ccrmtest.Process, replicas)
	for i := range ps {
		id := fmt.Sprintf("r%d", i)
		ps[i] = ccrmtest.StartReplica(t, id, r.ReplicaArgs(id, ttl, "--workers", "8"), r.TokenEnv())
	}

	n := *chaosLifecycles
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(n)*2*time.Second+2*time.Minute)
	defer cancel()

	// The driver.
	var (
		kills, pauses atomic.Int64
		lastChaos     atomic.Int64
		chaosDone     = make(chan struct{})
		stopChaos     = make(chan struct{})
	)
	go func() {
		defer close(chaosDone)
		rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
		var pwg sync.WaitGroup
		defer pwg.Wait()
		for round := 1; ; round++ {
			select {
			case <-stopChaos:
				return
			case <-time.After(1500 * time.Millisecond):
			}
			i := rng.IntN(replicas)
			ps[i].Restart() // SIGKILL, then a new process
			kills.Add(1)
			if round%3 == 0 {
				j := (i + 1 + rng.IntN(replicas-1)) % replicas
				ps[j].Pause()
				pauses.Add(1)
				pwg.Go(func() {
					time.Sleep(ttl + ttl/2) // longer than the lease
					ps[j].Resume()
				})
			}
			lastChaos.Store(time.Now().UnixNano())
		}
	}()

	// The lifecycles.
	var (
		completed atomic.Int64
		mu        sync.Mutex
		lost      []error
		wg        sync.WaitGroup
		sem       = make(chan struct{}, *chaosParallel)
	)
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := r.Lifecycle(ctx, i); err != nil {
				mu.Lock()
				lost = append(lost, err)
				mu.Unlock()
				return
			}
			completed.Add(1)
		})
	}
	wg.Wait()
	end := time.Now()
	close(stopChaos)
	<-chaosDone
	for _, p := range ps {
		p.Resume()
	}
	converge := end.Sub(time.Unix(0, lastChaos.Load()))

	dups := 0
	for i := range n {
		for _, key := range []string{executor.KeyString(ccrmtest.ClusterKey(i)), executor.KeyString(ccrmtest.AppInstKey(i))} {
			if st := r.Server.Platform.Stats(key); st.Created > 1 {
				dups++
				t.Errorf("%s created %d times on the platform", key, st.Created)
			}
			if _, ok := r.Server.Platform.Cluster(key); ok {
				t.Errorf("cluster %s left on the platform", key)
			}
		}
	}
	leaked := 0
	for _, cl := range r.Cloudlets {
		snap, err := r.Reservations.Snapshot(ctx, executor.CloudletName(cl))
		if err != nil {
			t.Fatal(err)
		}
		for _, vals := range snap {
			leaked += len(vals)
		}
	}
	total, applied, staleApplied, staleRefused, unfenced := oracle.counts()
	fencedStale, _ := r.Server.Fenced()
	t.Logf("chaos: %d replicas, lease %v, platform latency %v, %d at once, %v in all", replicas, ttl, *chaosLatency, *chaosParallel, end.Sub(start).Round(time.Millisecond))
	t.Logf("| lifecycles | completed | lost | duplicate platform creates | stale reports applied | stale reports refused | platform calls fenced | kills | pauses | reports (applied) | reservations left | converged after last fault | requests retried (controller conflicts) |")
	t.Logf("| %d | %d | %d | %d | %d | %d | %d | %d | %d | %d (%d) | %d | %v | %d |", n, completed.Load(), len(lost), dups,
		staleApplied, staleRefused, fencedStale, kills.Load(), pauses.Load(), total, applied, leaked, converge.Round(time.Millisecond), r.Conflicts())
	for _, err := range lost {
		t.Errorf("lost: %v", err)
	}
	if staleApplied > 0 {
		t.Errorf("%d reports applied under a claim that had ended", staleApplied)
	}
	if unfenced > 0 {
		t.Errorf("%d reports without a fence", unfenced)
	}
	if leaked > 0 {
		t.Errorf("%d reserved values left after every object was deleted", leaked)
	}
	if kills.Load() == 0 {
		t.Errorf("the driver killed no replica: the run was too short to test anything")
	}
}
