package crm_test

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/hosts/controller/controllertest"
	"github.com/edgekit/edgekit/hosts/controller/notify"
	inotify "github.com/edgekit/edgekit/internal/notify"
	"github.com/edgekit/edgekit/internal/store"
	"github.com/edgekit/edgekit/platforms/fake"
	notifyv1 "github.com/edgekit/edgekit/proto/edgekit/notify/v1"
)

// benchObjects is how many app instances the notify benchmarks use; CI
// runs them with the default, docs/benchmarks.md with 10000.
var benchObjects = flag.Int("crm.bench-objects", 1000, "app instances in the notify benchmarks")

// benchEdge is a controller with an edge cloudlet holding n READY app
// instances, written straight into the store.
func benchEdge(b *testing.B, n int, state edgeproto.TrackedState) (*edge, []*edgeproto.AppInst) {
	b.Helper()
	env := controllertest.Start(b, controllertest.Options{Notify: true, NotifyConfig: notify.Config{KeepaliveInterval: time.Minute}})
	e := &edge{env: env, cloudlet: &edgeproto.CloudletKey{Organization: "operator", Name: "site1"}}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	e.key = env.CreateEdgeCloudlet(ctx, &edgeproto.Cloudlet{Key: e.cloudlet, PlatformType: fake.Name})
	insts := make([]*edgeproto.AppInst, n)
	for i := range insts {
		ai := e.appInst("i"+strconv.Itoa(i), "web", "c1")
		ai.CloudletKey, ai.State = e.cloudlet, state
		insts[i] = ai
	}
	kind := store.NewKind[*edgeproto.AppInst](env.Store)
	parallel(b, insts, func(ai *edgeproto.AppInst) error { _, err := kind.Put(ctx, ai); return err })
	return e, insts
}

// parallel runs fn on every element with 16 goroutines.
func parallel[T any](b testing.TB, items []T, fn func(T) error) {
	b.Helper()
	ch := make(chan T)
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for range 16 {
		wg.Go(func() {
			for it := range ch {
				if err := fn(it); err != nil {
					once.Do(func() { first = err })
				}
			}
		})
	}
	for _, it := range items {
		ch <- it
	}
	close(ch)
	wg.Wait()
	if first != nil {
		b.Fatal(first)
	}
}

// BenchmarkInitialSync measures a CRM's initial sync: from the Hello to
// the SyncEnd, every object decoded into a typed cache as the CRM does.
func BenchmarkInitialSync(b *testing.B) {
	n := *benchObjects
	e, _ := benchEdge(b, n, edgeproto.TrackedState_TRACKED_STATE_READY)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		cache := executor.NewCache[*edgeproto.AppInst]()
		st := e.rawConnect(b, e.cloudlet, e.key)
		for {
			m, err := st.Recv()
			if err != nil {
				b.Fatal(err)
			}
			if u := m.GetUpdate(); u != nil && u.GetAppInst() != nil {
				cache.Put(u.GetAppInst())
			}
			if m.GetSyncEnd() != nil {
				break
			}
		}
		if got := len(cache.Keys()); got != n {
			b.Fatalf("sync sent %d instances, want %d", got, n)
		}
		_ = st.CloseSend()
	}
	b.ReportMetric(float64(n*b.N)/time.Since(start).Seconds(), "objects/s")
	b.ReportMetric(float64(n), "objects")
}

// BenchmarkNotifyUpdates measures changes flowing to a connected CRM: n
// app instances are changed by 16 concurrent writers through the store,
// from the first commit to the last change in the CRM's cache. It includes
// etcd's commits (commit-s is when the last write returned).
func BenchmarkNotifyUpdates(b *testing.B) {
	n := *benchObjects
	e, insts := benchEdge(b, n, edgeproto.TrackedState_TRACKED_STATE_READY)
	st := e.rawConnect(b, e.cloudlet, e.key)
	readUntil(b, st, isSyncEnd)
	kind := store.NewKind[*edgeproto.AppInst](e.env.Store)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	var commit, total time.Duration
	for i := range b.N {
		mark := strconv.Itoa(i)
		cache := executor.NewCache[*edgeproto.AppInst]()
		done := make(chan error, 1)
		go func() {
			seen := 0
			for seen < n {
				m, err := st.Recv()
				if err != nil {
					done <- err
					return
				}
				ai := m.GetUpdate().GetAppInst()
				if ai == nil || ai.GetAnnotations()["round"] != mark {
					continue
				}
				if _, ok := cache.Get(ai.GetKeyString()); !ok {
					seen++
				}
				cache.Put(ai)
			}
			done <- nil
		}()
		start := time.Now()
		parallel(b, insts, func(ai *edgeproto.AppInst) error {
			ai = ai.Clone()
			ai.Annotations = map[string]string{"round": mark}
			_, err := kind.Put(ctx, ai)
			return err
		})
		commit += time.Since(start)
		if err := <-done; err != nil {
			b.Fatal(err)
		}
		total += time.Since(start)
	}
	b.ReportMetric(float64(n*b.N)/total.Seconds(), "objects/s")
	b.ReportMetric(commit.Seconds()/float64(b.N), "commit-s")
	b.ReportMetric(total.Seconds()/float64(b.N), "last-received-s")
}

// BenchmarkNotifyReports measures Info reports a CRM sends back: one
// report per app instance (CREATING, with a status message), sent without
// waiting, until every acknowledgement came back; each applied report is
// a store transaction (transition check, Info written, state mirrored).
func BenchmarkNotifyReports(b *testing.B) {
	n := *benchObjects
	e, insts := benchEdge(b, n, edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED)
	st := e.rawConnect(b, e.cloudlet, e.key)
	readUntil(b, st, isSyncEnd)
	fields := []string{edgeproto.AppInstInfoFieldKey, edgeproto.AppInstInfoFieldState, edgeproto.AppInstInfoFieldStatus}
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	seq := uint64(0)
	for range b.N {
		done := make(chan error, 1)
		go func() {
			acks := 0
			for acks < n {
				m, err := st.Recv()
				if err != nil {
					done <- err
					return
				}
				if a := m.GetReportAck(); a != nil {
					if a.GetVerdict() != notifyv1.Verdict_VERDICT_APPLIED {
						done <- fmt.Errorf("report %d: %v %s", a.GetSeq(), a.GetVerdict(), a.GetReason())
						return
					}
					acks++
				}
			}
			done <- nil
		}()
		for _, ai := range insts {
			seq++
			info := &edgeproto.AppInstInfo{Key: ai.Key, State: edgeproto.TrackedState_TRACKED_STATE_CREATING,
				Status: &edgeproto.StatusInfo{TaskNumber: 1, TaskName: "Creating AppInst", MsgCount: 1, Msgs: []string{"Creating AppInst"}}}
			fm, err := info.FieldSchema().Parse(fields...)
			if err != nil {
				b.Fatal(err)
			}
			r, err := inotify.ReportOf(seq, info, fm)
			if err != nil {
				b.Fatal(err)
			}
			if err := st.Send(&notifyv1.ConnectRequest{Msg: &notifyv1.ConnectRequest_Report{Report: r}}); err != nil {
				b.Fatal(err)
			}
		}
		if err := <-done; err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n*b.N)/time.Since(start).Seconds(), "reports/s")
}
