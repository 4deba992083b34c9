package crm_test

import (
	"context"
	"flag"
	"os"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
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
// READY app instances, and a simulated CRM connected for each, in a child
// process (simCRMs).
type benchRegion struct {
	env   *controllertest.Env
	insts []*edgeproto.AppInst // perSite per cloudlet, cloudlet by cloudlet
	sims  *simCRMs
	mu    sync.Mutex
	round string
	lat   []time.Duration // write start to receipt, of the current round
	got   int64
	want  int64
	done  chan struct{}
}

// startBenchRegion loads the region straight into the store in large
// transactions (the setup is not what is measured) and starts the
// simulated CRMs; it returns once every CRM synchronised.
func startBenchRegion(b *testing.B, cfg notify.Config, n, perSite int) *benchRegion {
	b.Helper()
	cfg.KeepaliveInterval = time.Minute
	env := controllertest.Start(b, controllertest.Options{Notify: true, NotifyConfig: cfg})
	e := &edge{env: env}
	r := &benchRegion{env: env}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cls := make([]*edgeproto.Cloudlet, n)
	for i := range cls {
		cls[i] = &edgeproto.Cloudlet{Key: &edgeproto.CloudletKey{Organization: "operator", Name: "site" + strconv.Itoa(i)},
			PlatformType: fake.Name, State: edgeproto.TrackedState_TRACKED_STATE_READY}
	}
	keys := env.SeedEdgeCloudlets(ctx, cls)
	for i, cl := range cls {
		for j := range perSite {
			ai := e.appInst("s"+strconv.Itoa(i)+"-i"+strconv.Itoa(j), "web", "c"+strconv.Itoa(i))
			ai.CloudletKey, ai.State = cl.Key, edgeproto.TrackedState_TRACKED_STATE_READY
			r.insts = append(r.insts, ai)
		}
	}
	controllertest.Seed(ctx, env, r.insts)
	sites := make([]simSite, n)
	for i, cl := range cls {
		sites[i] = simSite{Org: cl.Key.Organization, Name: cl.Key.Name, Key: keys[i]}
	}
	r.sims = startSimCRMs(b, env.Addr, sites, r.recv)
	if missing := r.sims.waitSynced(nil, time.Now().Add(10*time.Minute)); missing > 0 {
		b.Fatalf("%d of %d simulated CRMs never synchronised", missing, n)
	}
	return r
}

// recv counts a change of the current round reaching its CRM.
func (r *benchRegion) recv(round string, lat time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if round != r.round || r.done == nil {
		return
	}
	r.lat = append(r.lat, lat)
	if r.got++; r.got == r.want {
		close(r.done)
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
func rss() float64 { return rssOf("self") }

// rssOf is the resident set of process pid ("self": this one), in bytes.
func rssOf(pid string) float64 {
	data, err := os.ReadFile("/proc/" + pid + "/status")
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
// -crm.bench-sessions CRMs connected (simulated, in a child process: a
// notify stream each over gRPC on loopback, read by a goroutine), each
// cloudlet holding -crm.bench-site-objects app instances, all loaded
// straight into the store. A round writes -crm.bench-changes changes of
// app instances spread over every cloudlet (each change concerns one CRM),
// paced at -crm.bench-rate per second by 16 writers, and ends when every
// change reached its CRM. It reports the CPU per change of the
// benchmark's process (controller, etcd and writers; the clients run in
// the child), the p50 and p99 of the time from a write's start (so
// including etcd's commit) to its receipt, the heap and RSS of the
// benchmark's process with every CRM connected, and the child's RSS.
// design=shared is the notify server's one watch of the region fanned out
// to the sessions; design=per-session gives each session a watch of its
// own (Config.WatchPerSession, the design before), which decodes and
// routes every change of the region.
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
	heap, resident, clients := float64(ms.HeapInuse), rss(), r.sims.rss()
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
		r.round, r.lat, r.got, r.want, r.done = "r"+strconv.Itoa(round), nil, 0, int64(changes), make(chan struct{})
		mark, done := r.round, r.done
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
		case <-done:
		case <-time.After(2 * time.Minute):
			r.mu.Lock()
			got := r.got
			r.mu.Unlock()
			b.Fatalf("round %d: %d of %d changes reached their CRM", round, got, changes)
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
	b.ReportMetric(clients/(1<<20), "clients-rss-MiB")
	b.ReportMetric(float64(n), "sessions")
}

// benchStormTimeout bounds how long BenchmarkNotifyStorm waits for every
// CRM to synchronise again.
var benchStormTimeout = flag.Duration("crm.bench-storm-timeout", 5*time.Minute, "how long BenchmarkNotifyStorm waits for every CRM to synchronise again")

// BenchmarkNotifyStorm measures a reconnect storm: -crm.bench-sessions
// simulated CRMs (in a child process; each resumes from the last revision
// it applied and waits as long as a busy controller's RetryInfo asks) are
// connected to a region of -crm.bench-site-objects app instances per
// cloudlet when the controller restarts on the same etcd (Env.Restart:
// every stream ends at once). It reports the time from the restart to the
// last CRM synchronised again, the CRMs that were not within
// -crm.bench-storm-timeout (lost: the benchmark fails unless 0), how many
// syncs were resumed ones and how often a CRM was turned away, and the
// peak RSS and Go heap of the benchmark's process (controller, etcd)
// sampled during the storm, and its CPU time during the storm. The controller's admission is its default
// (notify.DefaultMaxSyncs, DefaultMaxWaitingSyncs).
func BenchmarkNotifyStorm(b *testing.B) {
	n, perSite := *benchSessions, *benchSiteObjects
	r := startBenchRegion(b, notify.Config{}, n, perSite)
	var took, used time.Duration
	var lost, resumed, busy int
	var peakRSS, peakHeap float64
	b.ResetTimer()
	for range b.N {
		before, resumed0, busy0 := r.sims.counts()
		stop := make(chan struct{})
		sampled := make(chan [2]float64)
		go func() {
			var pr, ph float64
			sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
			t := time.NewTicker(50 * time.Millisecond) // sampling memory, not synchronisation
			defer t.Stop()
			for {
				metrics.Read(sample)
				pr, ph = max(pr, rss()), max(ph, float64(sample[0].Value.Uint64()))
				select {
				case <-stop:
					sampled <- [2]float64{pr, ph}
					return
				case <-t.C:
				}
			}
		}()
		start, cpu0 := time.Now(), cpu(b)
		r.env.Restart()
		missing := r.sims.waitSynced(before, start.Add(*benchStormTimeout))
		took += time.Since(start)
		used += cpu(b) - cpu0
		close(stop)
		p := <-sampled
		peakRSS, peakHeap = max(peakRSS, p[0]), max(peakHeap, p[1])
		_, resumed1, busy1 := r.sims.counts()
		lost += missing
		resumed += resumed1 - resumed0
		busy += busy1 - busy0
	}
	b.StopTimer()
	if lost > 0 {
		b.Errorf("%d CRMs did not synchronise again within %v of a controller restart", lost, *benchStormTimeout)
	}
	b.ReportMetric(took.Seconds()/float64(b.N), "storm-s")
	b.ReportMetric(used.Seconds()/float64(b.N), "cpu-s")
	b.ReportMetric(float64(lost), "lost")
	b.ReportMetric(float64(resumed)/float64(b.N), "resumed")
	b.ReportMetric(float64(busy)/float64(b.N), "turned-away")
	b.ReportMetric(peakRSS/(1<<20), "peak-rss-MiB")
	b.ReportMetric(peakHeap/(1<<20), "peak-heap-MiB")
	b.ReportMetric(r.sims.rss()/(1<<20), "clients-rss-MiB")
	b.ReportMetric(float64(n), "sessions")
}
