package crm_test

import (
	"context"
	"flag"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/hosts/controller/controllertest"
	"github.com/edgekit/edgekit/hosts/controller/notify"
	"github.com/edgekit/edgekit/internal/store"
	"github.com/edgekit/edgekit/platforms/fake"
)

// The region benchmark's size: CI runs it with the defaults,
// docs/benchmarks.md with -crm.bench-sessions=100 and 1000.
var (
	benchSessions    = flag.Int("crm.bench-sessions", 24, "connected CRMs (edge cloudlets) in BenchmarkNotifyFanout")
	benchSiteObjects = flag.Int("crm.bench-site-objects", 10, "app instances on each cloudlet in BenchmarkNotifyFanout")
	benchChanges     = flag.Int("crm.bench-changes", 200, "app instance changes per round of BenchmarkNotifyFanout")
	benchRate        = flag.Int("crm.bench-rate", 200, "changes per second the writers of BenchmarkNotifyFanout aim at")
)

// benchRegion is a controller with n edge cloudlets, each holding perSite
// READY app instances, and a simulated CRM connected for each: a notify
// stream read by a goroutine that decodes what it receives.
type benchRegion struct {
	env      *controllertest.Env
	insts    []*edgeproto.AppInst // perSite per cloudlet, cloudlet by cloudlet
	received atomic.Int64         // changes of the current round received
	want     int64
	done     chan struct{}
	mu       sync.Mutex
	round    string
	lat      []time.Duration // write start to receipt, of the current round
}

func startBenchRegion(b *testing.B, cfg notify.Config, n, perSite int) *benchRegion {
	b.Helper()
	cfg.KeepaliveInterval = time.Minute
	env := controllertest.Start(b, controllertest.Options{Notify: true, NotifyConfig: cfg})
	e := &edge{env: env}
	r := &benchRegion{env: env}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cloudlets := make([]*edgeproto.CloudletKey, n)
	keys := make([]string, n)
	idx := make([]int, n)
	for i := range cloudlets {
		cloudlets[i] = &edgeproto.CloudletKey{Organization: "operator", Name: "site" + strconv.Itoa(i)}
		idx[i] = i
	}
	parallel(b, idx, func(i int) error {
		keys[i] = env.CreateEdgeCloudlet(ctx, &edgeproto.Cloudlet{Key: cloudlets[i], PlatformType: fake.Name})
		return nil
	})
	for i, cl := range cloudlets {
		for j := range perSite {
			ai := e.appInst("s"+strconv.Itoa(i)+"-i"+strconv.Itoa(j), "web", "c"+strconv.Itoa(i))
			ai.CloudletKey, ai.State = cl, edgeproto.TrackedState_TRACKED_STATE_READY
			r.insts = append(r.insts, ai)
		}
	}
	kind := store.NewKind[*edgeproto.AppInst](env.Store)
	parallel(b, r.insts, func(ai *edgeproto.AppInst) error { _, err := kind.Put(ctx, ai); return err })
	var synced sync.WaitGroup
	for i, cl := range cloudlets {
		st := e.rawConnect(b, cl, keys[i])
		synced.Add(1)
		go r.read(st, &synced)
	}
	synced.Wait()
	return r
}

// read plays one CRM: it reads the stream until it ends and counts the
// changes of the current round.
func (r *benchRegion) read(st rawStream, synced *sync.WaitGroup) {
	syncing := true
	for {
		m, err := st.Recv()
		if err != nil {
			if syncing {
				synced.Done()
			}
			return
		}
		if syncing && m.GetSyncEnd() != nil {
			syncing = false
			synced.Done()
		}
		ai := m.GetUpdate().GetAppInst()
		if ai == nil {
			continue
		}
		at := time.Now()
		mark, stamp, ok := strings.Cut(ai.GetAnnotations()["round"], "@")
		r.mu.Lock()
		if ok && mark == r.round {
			if ns, err := strconv.ParseInt(stamp, 10, 64); err == nil {
				r.lat = append(r.lat, at.Sub(time.Unix(0, ns)))
			}
			if r.received.Add(1) == r.want {
				close(r.done)
			}
		}
		r.mu.Unlock()
	}
}

// cpu is the process's user and system CPU time.
func cpu(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// rss is the process's resident set, in bytes (0 where /proc is missing).
func rss() float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(data)) {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return kb * 1024
		}
	}
	return 0
}

// BenchmarkNotifyFanout measures the notify server holding a region:
// -crm.bench-sessions CRMs connected (simulated: a notify stream each, over
// gRPC on loopback, read by a goroutine), each cloudlet holding
// -crm.bench-site-objects app instances. A round writes -crm.bench-changes
// changes of app instances spread over every cloudlet (each change
// concerns one CRM), paced at -crm.bench-rate per second by 16 writers,
// and ends when every change reached its CRM. It reports the process's CPU
// per change (controller, etcd, writers and clients all run in the
// benchmark's process), the p50 and p99 of the time from a write's start
// (so including etcd's commit) to its receipt, and the heap and RSS with
// every CRM connected. design=shared is the notify server's one watch of
// the region fanned out to the sessions; design=per-session gives each
// session a watch of its own (Config.WatchPerSession, the design before),
// which decodes and routes every change of the region.
func BenchmarkNotifyFanout(b *testing.B) {
	for _, d := range []struct {
		name string
		cfg  notify.Config
	}{{"per-session", notify.Config{WatchPerSession: true}}, {"shared", notify.Config{}}} {
		b.Run("design="+d.name, func(b *testing.B) { benchFanout(b, d.cfg) })
	}
}

func benchFanout(b *testing.B, cfg notify.Config) {
	n, perSite, changes, rate := *benchSessions, *benchSiteObjects, *benchChanges, *benchRate
	if changes > n*perSite {
		b.Fatalf("-crm.bench-changes=%d: at most one change per app instance a round (%d)", changes, n*perSite)
	}
	r := startBenchRegion(b, cfg, n, perSite)
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	heap, resident := float64(ms.HeapInuse), rss()
	kind := store.NewKind[*edgeproto.AppInst](r.env.Store)
	ctx := context.Background()
	// Changes go round-robin over the cloudlets, so every CRM gets its share.
	order := make([]*edgeproto.AppInst, 0, len(r.insts))
	for j := range perSite {
		for i := range n {
			order = append(order, r.insts[i*perSite+j])
		}
	}
	var all []time.Duration
	var used time.Duration
	b.ResetTimer()
	for round := range b.N {
		r.mu.Lock()
		r.round, r.lat, r.want, r.done = "r"+strconv.Itoa(round), nil, int64(changes), make(chan struct{})
		r.received.Store(0)
		mark := r.round
		r.mu.Unlock()
		batch := make([]int, changes)
		for i := range batch {
			batch[i] = i
		}
		start, cpu0 := time.Now(), cpu(b)
		interval := time.Second / time.Duration(max(rate, 1))
		parallel(b, batch, func(i int) error {
			if wait := time.Until(start.Add(time.Duration(i) * interval)); wait > 0 {
				time.Sleep(wait) // pacing the writers, not synchronisation
			}
			ai := order[i%len(order)].Clone()
			ai.Annotations = map[string]string{"round": mark + "@" + strconv.FormatInt(time.Now().UnixNano(), 10)}
			_, err := kind.Put(ctx, ai)
			return err
		})
		select {
		case <-r.done:
		case <-time.After(2 * time.Minute):
			b.Fatalf("round %d: %d of %d changes reached their CRM", round, r.received.Load(), changes)
		}
		used += cpu(b) - cpu0
		r.mu.Lock()
		all = append(all, r.lat...)
		r.mu.Unlock()
	}
	b.StopTimer()
	slices.Sort(all)
	pct := func(p float64) float64 {
		if len(all) == 0 {
			return 0
		}
		return all[min(len(all)-1, int(p*float64(len(all))))].Seconds() * 1000
	}
	b.ReportMetric(float64(used.Microseconds())/float64(changes*b.N), "cpu-µs/change")
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(heap/(1<<20), "heap-MiB")
	b.ReportMetric(resident/(1<<20), "rss-MiB")
	b.ReportMetric(float64(n), "sessions")
}
