package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
)

func TestPortRangesDoNotOverlap(t *testing.T) {
	e := newEnv(t)
	if err := e.p.InitCloudlet(e.ctx(), e.cloudlet, e.res, nil); err != nil {
		t.Fatal(err)
	}
	const n = 8
	clusters := make([]*edgeproto.ClusterInst, n)
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		clusters[i] = &edgeproto.ClusterInst{Key: &edgeproto.ClusterKey{Organization: "dev", Name: fmt.Sprintf("c%d", i)}, CloudletKey: e.cloudlet.Key}
		wg.Go(func() { errs[i] = e.p.CreateCluster(e.ctx(), e.cloudlet, clusters[i], e.res, nil) })
	}
	wg.Wait()
	var ranges []portRange
	for i, c := range clusters {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		got := e.reserved(KindPortRange, clusterOwner(c.Key))
		if len(got) != 1 {
			t.Fatalf("cluster %d holds %v", i, got)
		}
		r, err := parsePortRange(got[0])
		if err != nil {
			t.Fatal(err)
		}
		if r.size() != testRangeSize {
			t.Errorf("range %s has %d ports", r, r.size())
		}
		for _, o := range ranges {
			if r.first <= o.last && o.first <= r.last {
				t.Fatalf("ranges %s and %s overlap", r, o)
			}
		}
		ranges = append(ranges, r)
	}
	// Re-creating adopts: same range.
	if err := e.p.CreateCluster(e.ctx(), e.cloudlet, clusters[3], e.res, nil); err != nil {
		t.Fatal(err)
	}
	if got := e.reserved(KindPortRange, clusterOwner(clusters[3].Key)); got[0] != ranges[3].String() {
		t.Errorf("re-create moved the range to %v from %s", got, ranges[3])
	}
	// Delete releases; the next cluster gets the freed range.
	if err := e.p.DeleteCluster(e.ctx(), e.cloudlet, clusters[3], e.res, nil); err != nil {
		t.Fatal(err)
	}
	if got := e.reserved(KindPortRange, clusterOwner(clusters[3].Key)); len(got) != 0 {
		t.Fatalf("range not released: %v", got)
	}
	c := &edgeproto.ClusterInst{Key: &edgeproto.ClusterKey{Organization: "dev", Name: "late"}, CloudletKey: e.cloudlet.Key}
	if err := e.p.CreateCluster(e.ctx(), e.cloudlet, c, e.res, nil); err != nil {
		t.Fatal(err)
	}
	if got := e.reserved(KindPortRange, clusterOwner(c.Key)); got[0] != ranges[3].String() {
		t.Errorf("new cluster got %v, want the freed %s", got, ranges[3])
	}
}

func TestPortRangesExhausted(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.PortMax, c.PortRangeSize = c.PortMin+19, 10 })
	for i := range 3 {
		c := &edgeproto.ClusterInst{Key: &edgeproto.ClusterKey{Organization: "dev", Name: fmt.Sprint(i)}, CloudletKey: e.cloudlet.Key}
		err := e.p.CreateCluster(e.ctx(), e.cloudlet, c, e.res, nil)
		if i < 2 && err != nil {
			t.Fatal(err)
		}
		if i == 2 && !errors.Is(err, ErrNoFreePorts) {
			t.Fatalf("third cluster: err = %v, want ErrNoFreePorts", err)
		}
	}
}

func TestDeleteClusterStopsApps(t *testing.T) {
	e := newEnv(t)
	e.createCluster(e.cluster)
	if vms := e.cluster.GetResources().GetVms(); len(vms) != 1 || !strings.HasPrefix(vms[0].InfraFlavor, "ports:") {
		t.Errorf("cluster resources = %v", e.cluster.GetResources())
	}
	var pids []int
	for _, name := range []string{"a1", "a2"} {
		rt := e.createApp(newApp(), e.newInst(name))
		pids = append(pids, int(rt.Pids[0]))
	}
	if err := e.p.DeleteCluster(e.ctx(), e.cloudlet, e.cluster, e.res, nil); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		if running(pid) {
			t.Errorf("pid %d survived its cluster", pid)
		}
	}
	for _, name := range []string{"a1", "a2"} {
		if got := e.reserved(KindPort, appOwner(e.newInst(name).Key)); len(got) != 0 {
			t.Errorf("%s ports still reserved: %v", name, got)
		}
	}
	l, _ := e.p.clusterLoc(e.cluster)
	if _, err := os.Stat(l.dir); !os.IsNotExist(err) {
		t.Errorf("cluster directory left: %v", err)
	}
}

func TestReservationFailureIsReported(t *testing.T) {
	e := newEnv(t)
	boom := errors.New("store down")
	res := reservationsFunc(func(ctx context.Context, cloudlet string, fn func(executor.ReservationSet) error) error { return boom })
	if err := e.p.CreateCluster(e.ctx(), e.cloudlet, e.cluster, res, nil); !errors.Is(err, boom) {
		t.Fatalf("err = %v, want %v", err, boom)
	}
}

type reservationsFunc func(ctx context.Context, cloudlet string, fn func(executor.ReservationSet) error) error

func (f reservationsFunc) Update(ctx context.Context, cloudlet string, fn func(executor.ReservationSet) error) error {
	return f(ctx, cloudlet, fn)
}
