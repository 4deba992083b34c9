package etcd_test

import (
	"context"
	"fmt"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/edgekit/edgekit/internal/testenv/cpuprof"
	"github.com/edgekit/edgekit/internal/testenv/etcdtest"
)

// BenchmarkMemberCPU measures the CPU an embedded etcd member spends per
// write transaction (a compare of the key's version and a put of 300
// bytes, each on a new key), with the transactions sent by 16 workers at a
// fixed rate or as fast as they go (rate=max), and with 0 or 5 clients
// watching every key (each its own connection, as the controller's caches
// and the CCRM replicas are). The member runs as the tests' members do,
// with fsync off, so a member with fsync on spends more.
//
// It reports, per transaction, the CPU of the member (etcd-cpu-us: its
// servers, raft, WAL and backend, and the goroutines serving the watches),
// of the writing client (client-cpu-us: encoding the requests and reading
// the responses), of the watchers' clients, and of the whole process, from
// a CPU profile labelled by part (package cpuprof). Run with a fixed
// count: -benchtime=2000x sends 2,000 transactions, 2 s at 1,000/s.
func BenchmarkMemberCPU(b *testing.B) {
	for _, c := range []struct {
		rate, watchers int // rate 0: as fast as the workers go
	}{{200, 0}, {1000, 0}, {1000, 5}, {0, 0}, {0, 5}} {
		rate := "max"
		if c.rate > 0 {
			rate = fmt.Sprint(c.rate)
		}
		b.Run(fmt.Sprintf("rate=%s/watchers=%d", rate, c.watchers), func(b *testing.B) {
			benchMemberCPU(b, c.rate, c.watchers)
		})
	}
}

const (
	partLabel    = "part"
	partEtcd     = "etcd"
	partClient   = "client"
	partWatchers = "watchers"
)

func benchMemberCPU(b *testing.B, rate, watchers int) {
	var srv *etcdtest.Server
	pprof.Do(context.Background(), pprof.Labels(partLabel, partEtcd), func(context.Context) {
		srv = etcdtest.New(b)
	})
	var cli *clientv3.Client
	pprof.Do(context.Background(), pprof.Labels(partLabel, partClient), func(context.Context) {
		cli = srv.NewClient()
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	prefix := fmt.Sprintf("/bench/%s/", strings.ReplaceAll(b.Name(), "/", "-"))
	var seen sync.WaitGroup
	pprof.Do(ctx, pprof.Labels(partLabel, partWatchers), func(ctx context.Context) {
		for range watchers {
			w := srv.NewClient()
			wch := w.Watch(clientv3.WithRequireLeader(ctx), prefix, clientv3.WithPrefix(), clientv3.WithCreatedNotify())
			if r, ok := <-wch; !ok || !r.Created {
				b.Fatalf("watch not created: %v", r.Err())
			}
			seen.Add(1)
			go func() {
				defer seen.Done()
				for n := 0; n < b.N; {
					r, ok := <-wch
					if !ok {
						b.Errorf("watch ended after %d of %d events", n, b.N)
						return
					}
					n += len(r.Events)
				}
			}()
		}
	})
	value := strings.Repeat("v", 300)
	work := make(chan int, 16)
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				k := fmt.Sprintf("%s%08d", prefix, i)
				resp, err := cli.Txn(ctx).If(clientv3.Compare(clientv3.Version(k), "=", 0)).Then(clientv3.OpPut(k, value)).Commit()
				if err != nil {
					b.Error(err)
				} else if !resp.Succeeded {
					b.Errorf("%s existed", k)
				}
			}
		}()
	}
	self0 := cpuprof.SelfCPU()
	prof := cpuprof.Start()
	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		if rate > 0 {
			if d := time.Until(start.Add(time.Duration(i) * time.Second / time.Duration(rate))); d > 0 {
				time.Sleep(d) // pacing the sender, not waiting for a condition
			}
		}
		work <- i
	}
	close(work)
	wg.Wait()
	seen.Wait()
	took := time.Since(start)
	b.StopTimer()
	self := cpuprof.SelfCPU() - self0
	parts, err := prof.Stop(partLabel, "")
	if err != nil {
		b.Fatal(err)
	}
	per := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 / float64(b.N) }
	b.ReportMetric(float64(b.N)/took.Seconds(), "txn/s")
	b.ReportMetric(per(self), "process-cpu-us/txn")
	if parts != nil {
		b.ReportMetric(per(parts[partEtcd]), "etcd-cpu-us/txn")
		b.ReportMetric(per(parts[partClient]), "client-cpu-us/txn")
		b.ReportMetric(per(parts[partWatchers]), "watchers-cpu-us/txn")
	}
}
