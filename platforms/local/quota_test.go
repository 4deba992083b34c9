package local

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
)

// sliceCluster is the test's cluster sized by one node pool.
func (e *env) sliceCluster(opt map[string]string) *edgeproto.ClusterInst {
	c := e.cluster.Clone()
	c.NodePools = []*edgeproto.NodePool{{Name: "slice", NumNodes: 1, NodeResources: &edgeproto.NodeResources{OptResMap: opt}}}
	return c
}

// requesting is the test app asking cpu and memory of its cluster.
func requesting(cpu, mem string) *edgeproto.App {
	app := newApp()
	app.Annotations = map[string]string{AnnotationCPU: cpu, AnnotationMemory: mem}
	return app
}

func TestQuotaRefusesWhatDoesNotFit(t *testing.T) {
	e := newEnv(t)
	e.cluster = e.sliceCluster(map[string]string{OptResCPU: "1", OptResMemory: "256Mi"})
	e.createCluster(e.cluster)
	e.createApp(requesting("600m", "128Mi"), e.newInst("a"))

	_, err := e.p.CreateAppInst(e.ctx(), e.cluster, requesting("600m", "64Mi"), e.newInst("b"), e.res, nil)
	var qe *QuotaError
	if !errors.As(err, &qe) || !errors.Is(err, ErrQuotaExceeded) || !errors.Is(err, executor.ErrInsufficientResources) {
		t.Fatalf("over the CPU quota: err = %v, want a *QuotaError", err)
	}
	if qe.Resource != OptResCPU || qe.Requested != 600 || qe.Used != 600 || qe.Limit != 1000 {
		t.Errorf("quota error %+v", qe)
	}
	if !strings.Contains(err.Error(), "asks 600m cpu") || !strings.Contains(err.Error(), "600m of 1 in use") {
		t.Errorf("message %q does not say what does not fit", err)
	}
	if got := e.reserved(KindPort, appOwner(e.newInst("b").Key)); len(got) != 0 {
		t.Errorf("a refused instance holds ports %v", got)
	}
	if dirExists(e.mustAppDir(e.newInst("b"))) {
		t.Error("a refused instance left a directory")
	}
	if _, err := e.p.CreateAppInst(e.ctx(), e.cluster, requesting("300m", "200Mi"), e.newInst("c"), e.res, nil); !errors.Is(err, ErrQuotaExceeded) ||
		!strings.Contains(err.Error(), "memory") {
		t.Fatalf("over the memory quota: err = %v", err)
	}
	e.createApp(requesting("400m", "128Mi"), e.newInst("c")) // exactly what is left

	// Deleting gives its share back.
	if err := e.p.DeleteAppInst(e.ctx(), e.cluster, newApp(), e.newInst("a"), e.res, nil); err != nil {
		t.Fatal(err)
	}
	e.createApp(requesting("600m", "64Mi"), e.newInst("b"))
}

func TestQuotaNeedsRequests(t *testing.T) {
	e := newEnv(t)
	e.cluster = e.sliceCluster(map[string]string{OptResCPU: "500m"})
	e.createCluster(e.cluster)
	_, err := e.p.CreateAppInst(e.ctx(), e.cluster, newApp(), e.newInst("a"), e.res, nil)
	if !errors.Is(err, ErrInvalidObject) || !strings.Contains(err.Error(), AnnotationCPU) {
		t.Fatalf("an app without requests in a cluster with a quota: err = %v", err)
	}
	bad := requesting("lots", "1Mi")
	if _, err := e.p.CreateAppInst(e.ctx(), e.cluster, bad, e.newInst("a"), e.res, nil); !errors.Is(err, ErrInvalidObject) || !strings.Contains(err.Error(), `"lots"`) {
		t.Fatalf("a request that is not a quantity: err = %v", err)
	}
	// Memory is not limited here: a CPU request alone is enough.
	app := newApp()
	app.Annotations = map[string]string{AnnotationCPU: "250m"}
	e.createApp(app, e.newInst("a"))
}

func TestQuotaLimitsPods(t *testing.T) {
	e := newEnv(t)
	e.cluster = e.sliceCluster(map[string]string{OptResCPU: "4", OptResPods: "1"})
	e.createCluster(e.cluster)
	e.createApp(requesting("100m", "1Mi"), e.newInst("a"))
	_, err := e.p.CreateAppInst(e.ctx(), e.cluster, requesting("100m", "1Mi"), e.newInst("b"), e.res, nil)
	var qe *QuotaError
	if !errors.As(err, &qe) || qe.Resource != OptResPods || qe.Limit != 1 {
		t.Fatalf("a second instance where one pod is allowed: err = %v", err)
	}
	// Re-creating the admitted one adopts it: it is not counted twice.
	e.createApp(requesting("100m", "1Mi"), e.newInst("a"))
}

func TestQuotaCountsInstancesAfterRestart(t *testing.T) {
	e := newEnv(t)
	e.cluster = e.sliceCluster(map[string]string{OptResCPU: "1", OptResMemory: "1Gi"})
	e.createCluster(e.cluster)
	e.createApp(requesting("800m", "1Mi"), e.newInst("a"))
	e.restart()
	if _, err := e.p.CreateAppInst(e.ctx(), e.cluster, requesting("800m", "1Mi"), e.newInst("b"), e.res, nil); !errors.Is(err, ErrQuotaExceeded) {
		t.Fatalf("after a restart the recorded instance must still count: err = %v", err)
	}
}

func TestQuotaRaceForTheLastShare(t *testing.T) {
	e := newEnv(t)
	e.cluster = e.sliceCluster(map[string]string{OptResCPU: "1", OptResMemory: "1Gi"})
	e.createCluster(e.cluster)
	const n = 5
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			_, errs[i] = e.p.CreateAppInst(e.ctx(), e.cluster, requesting("400m", "1Mi"), e.newInst(fmt.Sprint("r", i)), e.res, nil)
		})
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case !errors.Is(err, ErrQuotaExceeded):
			t.Errorf("unexpected error %v", err)
		}
	}
	if ok != 2 {
		t.Fatalf("%d of %d instances of 400m fit in 1 CPU, want 2", ok, n)
	}
}

func TestClusterQuotaFromNodePools(t *testing.T) {
	t.Parallel()
	c := &edgeproto.ClusterInst{NodePools: []*edgeproto.NodePool{
		{Name: "a", NumNodes: 2, NodeResources: &edgeproto.NodeResources{Vcpus: 2, RamMb: 512}},
		{Name: "b", NodeResources: &edgeproto.NodeResources{OptResMap: map[string]string{OptResCPU: "500m", OptResMemory: "1Gi", OptResPods: "3"}}},
	}}
	q, err := clusterQuota(c)
	if err != nil {
		t.Fatal(err)
	}
	if want := (quota{CPU: 4500, Memory: 2<<30 + 0, Pods: 3}); *q != want {
		t.Errorf("quota %+v, want %+v", *q, want)
	}
	if q, err := clusterQuota(&edgeproto.ClusterInst{}); q != nil || err != nil {
		t.Errorf("no node pools: %v, %v; want no quota", q, err)
	}
	c.NodePools[1].NodeResources.OptResMap[OptResMemory] = "a lot"
	if _, err := clusterQuota(c); !errors.Is(err, ErrInvalidObject) || !strings.Contains(err.Error(), `node pool "b"`) {
		t.Errorf("bad quantity: %v", err)
	}
}
