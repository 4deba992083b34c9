package kubernetes

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	k8s "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/internal/testenv/k8senv"
)

// benchInsts is how many AppInsts each iteration of BenchmarkAppInstsToReady
// creates: CI-sized by default; docs/benchmarks.md uses 100.
var benchInsts = flag.Int("k8s.insts", 10, "AppInsts per iteration of BenchmarkAppInstsToReady")

// counter is an http.RoundTripper that counts the requests it carries,
// by method and resource path (names and namespaces left out).
type counter struct {
	next  http.RoundTripper
	total atomic.Int64
	mu    sync.Mutex
	by    map[string]int
}

func (c *counter) RoundTrip(r *http.Request) (*http.Response, error) {
	c.total.Add(1)
	what := r.Method + " " + resourceOf(r.URL)
	c.mu.Lock()
	c.by[what]++
	c.mu.Unlock()
	return c.next.RoundTrip(r)
}

// take returns the counts since the last take, and resets them.
func (c *counter) take() (int64, map[string]int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	by := c.by
	c.by = map[string]int{}
	return c.total.Swap(0), by
}

// resourceOf names the resource of an API path: the group's resource
// (deployments, pods...), with "watch" for a watch and "/sub" for a
// subresource.
func resourceOf(u *url.URL) string {
	parts := strings.Split(strings.Trim(u.Path, "/"), "/")
	// /api/v1/namespaces/NS/pods/NAME/status, /apis/G/V/namespaces/NS/R/NAME
	start := 2
	if parts[0] == "apis" {
		start = 3
	}
	if len(parts) <= start {
		return u.Path
	}
	rest := parts[start:]
	if len(rest) >= 3 && rest[0] == "namespaces" {
		rest = rest[2:]
	}
	out := rest[0]
	if len(rest) >= 3 {
		out += "/" + rest[2]
	}
	if u.Query().Get("watch") == "true" || u.Query().Get("watch") == "1" {
		out += " (watch)"
	}
	return out
}

// countingProxy serves the control plane of env on a loopback HTTP port
// through a counter, and returns a kubeconfig of it (no credentials: the
// proxy adds them).
func countingProxy(b *testing.B, env *k8senv.Env) ([]byte, *counter) {
	b.Helper()
	rt, err := rest.TransportFor(env.RESTConfig())
	if err != nil {
		b.Fatal(err)
	}
	target, err := url.Parse(env.Server())
	if err != nil {
		b.Fatal(err)
	}
	c := &counter{next: rt, by: map[string]int{}}
	proxy := &httputil.ReverseProxy{
		Rewrite:       func(r *httputil.ProxyRequest) { r.SetURL(target); r.Out.Host = target.Host },
		Transport:     c,
		FlushInterval: -1, // watches stream
	}
	srv := httptest.NewServer(proxy)
	b.Cleanup(srv.Close)
	kc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: bench, cluster: {server: %q}}]
users: [{name: bench, user: {}}]
contexts: [{name: bench, context: {cluster: bench, user: bench}}]
current-context: bench
`, srv.URL)
	return []byte(kc), c
}

// BenchmarkAppInstsToReady creates -k8s.insts AppInsts of one App on one
// cluster through the engine, to READY, on the simulated cluster
// (kwok nodes), then the same Deployments and Services (read back from
// what the platform made, in a namespace of their own) directly with
// client-go, waiting with one watch until every Deployment is available.
// Both go through the same counting proxy, with the same client rate
// limits (50 QPS, burst 100) and 64 at once (the engine's default
// workers). Metrics: engine-s and direct-s (the two creates), ratio
// (engine/direct), and API requests per AppInst lifecycle through the
// engine (create to READY, then delete until gone: req/lifecycle), split
// into req/create and req/delete.
func BenchmarkAppInstsToReady(b *testing.B) {
	n := *benchInsts
	env := k8senv.ForTest(b)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	for i := range 2 {
		if err := env.AddNode(ctx, k8senv.Node{Name: fmt.Sprintf("bench-%d", i), CPU: "64", Memory: "128Gi", Pods: 110}); err != nil {
			b.Fatalf("adding a node: %v", err)
		}
	}
	kc, count := countingProxy(b, env)
	p, err := New(Config{Kubeconfig: kc})
	if err != nil {
		b.Fatal(err)
	}
	rc, err := clientcmd.RESTConfigFromKubeConfig(kc)
	if err != nil {
		b.Fatal(err)
	}
	rc.QPS, rc.Burst = 50, 100
	direct, err := k8s.NewForConfig(rc)
	if err != nil {
		b.Fatal(err)
	}

	cl := testCloudlet("bench", kc)
	app := testApp()
	var (
		engineTotal, directTotal time.Duration
		createReqs, deleteReqs   int64
		byCreate, byDelete       map[string]int
	)
	iter := 0
	for b.Loop() {
		b.StopTimer()
		iter++
		ci := testCluster(cl, fmt.Sprintf("bench-%d", iter))
		ci.NodePools = []*edgeproto.NodePool{{Name: "pool", NumNodes: 1, NodeResources: &edgeproto.NodeResources{Vcpus: 128, RamMb: 262144}}}
		if err := p.CreateCluster(ctx, cl, ci, nil, &steps{}); err != nil {
			b.Fatal(err)
		}
		ready := ci.Clone()
		ready.State = edgeproto.TrackedState_TRACKED_STATE_READY
		eng, stop := benchEngine(b, p, ready, app)
		insts := make([]*edgeproto.AppInst, n)
		for i := range insts {
			insts[i] = testInst(ci, app, fmt.Sprintf("i%d", i))
		}
		count.take()

		// Through the engine.
		b.StartTimer()
		start := time.Now()
		submitAll(b, ctx, eng, insts, edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED)
		engineTotal += time.Since(start)
		b.StopTimer()
		reqs, by := count.take()
		createReqs += reqs
		byCreate = by

		// The same objects, directly.
		ns := namespaceName(cl.GetKey(), ci.GetKey())
		deps, err := direct.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
		if err != nil || len(deps.Items) != n {
			b.Fatalf("the engine's namespace holds %d Deployments (%v), want %d", len(deps.Items), err, n)
		}
		svcs, err := direct.CoreV1().Services(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			b.Fatal(err)
		}
		dns := fmt.Sprintf("bench-direct-%d", iter)
		if _, err := direct.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: dns}}, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
		count.take()
		b.StartTimer()
		start = time.Now()
		createDirect(b, ctx, direct, dns, deps.Items, svcs.Items)
		directTotal += time.Since(start)
		b.StopTimer()
		if iter == 1 {
			reqs, _ := count.take()
			b.Logf("direct: %d requests for %d Deployments and %d Services, waited for with a list and a watch", reqs, len(deps.Items), len(svcs.Items))
		}

		// Delete, through the engine, and clean up.
		count.take()
		submitAll(b, ctx, eng, insts, edgeproto.TrackedState_TRACKED_STATE_DELETE_REQUESTED)
		reqs, by = count.take()
		deleteReqs += reqs
		byDelete = by
		stop()
		if err := p.DeleteCluster(ctx, cl, ci, nil, &steps{}); err != nil {
			b.Fatal(err)
		}
		if err := direct.CoreV1().Namespaces().Delete(ctx, dns, metav1.DeleteOptions{}); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	iters := float64(iter)
	b.ReportMetric(engineTotal.Seconds()/iters, "engine-s")
	b.ReportMetric(directTotal.Seconds()/iters, "direct-s")
	b.ReportMetric(engineTotal.Seconds()/directTotal.Seconds(), "ratio")
	per := float64(n) * iters
	b.ReportMetric(float64(createReqs)/per, "req/create")
	b.ReportMetric(float64(deleteReqs)/per, "req/delete")
	b.ReportMetric(float64(createReqs+deleteReqs)/per, "req/lifecycle")
	b.Logf("%d AppInsts; requests of the last create, by kind:\n%s", n, byKind(byCreate))
	b.Logf("requests of the last delete, by kind:\n%s", byKind(byDelete))
}

func byKind(by map[string]int) string {
	keys := make([]string, 0, len(by))
	for k := range by {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var s strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&s, "  %5d  %s\n", by[k], k)
	}
	return s.String()
}

// benchEngine starts an engine on p that knows cluster (READY) and app.
func benchEngine(b *testing.B, p *Platform, cluster *edgeproto.ClusterInst, app *edgeproto.App) (*executor.Engine, func()) {
	b.Helper()
	eng, err := executor.New(executor.Config{
		Platform: p,
		Objects: executor.Objects{
			ClusterInsts: executor.GetterFunc[*edgeproto.ClusterKey, *edgeproto.ClusterInst](func(context.Context, *edgeproto.ClusterKey) (*edgeproto.ClusterInst, error) {
				return cluster.Clone(), nil
			}),
			Apps: executor.GetterFunc[*edgeproto.AppKey, *edgeproto.App](func(context.Context, *edgeproto.AppKey) (*edgeproto.App, error) {
				return app.Clone(), nil
			}),
		},
	})
	if err != nil {
		b.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- eng.Start(runCtx) }()
	return eng, func() { cancel(); <-done }
}

// submitAll submits every instance in state and waits for all.
func submitAll(b *testing.B, ctx context.Context, eng *executor.Engine, insts []*edgeproto.AppInst, state edgeproto.TrackedState) {
	b.Helper()
	hs := make([]*executor.Handle, len(insts))
	for i, inst := range insts {
		inst = inst.Clone()
		inst.State = state
		h, err := eng.SubmitAppInst(inst)
		if err != nil {
			b.Fatal(err)
		}
		hs[i] = h
	}
	for i, h := range hs {
		if err := h.Wait(ctx); err != nil {
			b.Fatalf("%s %s: %v", state, executor.KeyString(insts[i]), err)
		}
	}
}

// createDirect creates copies of deps and svcs in namespace ns, 64 at a
// time, and waits until every Deployment has all its replicas updated and
// ready, watching them from before the first create (a list, then a watch
// from its resourceVersion; again when the server ends the watch).
func createDirect(b *testing.B, ctx context.Context, cs k8s.Interface, ns string, deps []appsv1.Deployment, svcs []corev1.Service) {
	b.Helper()
	allReady := make(chan error, 1)
	go func() { allReady <- waitAvailable(ctx, cs, ns, len(deps)) }()
	var (
		wg   sync.WaitGroup
		sem  = make(chan struct{}, 64)
		mu   sync.Mutex
		errs []error
	)
	fail := func(err error) { mu.Lock(); errs = append(errs, err); mu.Unlock() }
	for i := range deps {
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: deps[i].Name, Labels: deps[i].Labels}, Spec: deps[i].Spec}
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			if _, err := cs.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
				fail(err)
			}
		})
	}
	for i := range svcs {
		spec := svcs[i].Spec
		spec.ClusterIP, spec.ClusterIPs = "", nil
		s := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: svcs[i].Name, Labels: svcs[i].Labels}, Spec: spec}
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			if _, err := cs.CoreV1().Services(ns).Create(ctx, s, metav1.CreateOptions{}); err != nil {
				fail(err)
			}
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		b.Fatalf("direct creates: %v", errs[0])
	}
	if err := <-allReady; err != nil {
		b.Fatalf("direct: %v", err)
	}
}

// waitAvailable waits until n Deployments of ns have all their replicas
// updated and ready (bounded by ctx).
func waitAvailable(ctx context.Context, cs k8s.Interface, ns string, n int) error {
	ready := map[string]bool{}
	note := func(d *appsv1.Deployment) {
		want := int32(1)
		if d.Spec.Replicas != nil {
			want = *d.Spec.Replicas
		}
		if d.Status.ObservedGeneration >= d.Generation && d.Status.UpdatedReplicas == want && d.Status.ReadyReplicas == want {
			ready[d.Name] = true
		}
	}
	for ctx.Err() == nil {
		list, err := cs.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		for i := range list.Items {
			note(&list.Items[i])
		}
		if len(ready) >= n {
			return nil
		}
		w, err := cs.AppsV1().Deployments(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
		if err != nil {
			return err
		}
		for ev := range w.ResultChan() {
			if d, ok := ev.Object.(*appsv1.Deployment); ok && ev.Type != watch.Deleted {
				note(d)
			}
			if len(ready) >= n {
				w.Stop()
				return nil
			}
		}
		w.Stop()
	}
	return fmt.Errorf("%d/%d Deployments of %s available: %w", len(ready), n, ns, ctx.Err())
}
