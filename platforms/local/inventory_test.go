package local

import (
	"errors"
	"os"
	"slices"
	"testing"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
)

// TestListInsts: the inventory lists what the state directory and the
// host hold: clusters and instances with their state, runtime, ports and
// power state; nothing for a cloudlet never initialised.
func TestListInsts(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	inv, err := e.p.ListInsts(e.ctx(), e.cloudlet)
	if err != nil || len(inv.Clusters)+len(inv.AppInsts) != 0 {
		t.Fatalf("inventory of a cloudlet never initialised: %v, %v", inv, err)
	}
	e.createCluster(e.cluster)
	app := newApp()
	a1, a2 := e.newInst("a1"), e.newInst("a2")
	rt := e.createApp(app, a1)
	a2.PowerState = edgeproto.PowerState_POWER_STATE_POWER_OFF
	if _, err := e.p.CreateAppInst(e.ctx(), e.cluster, app, a2, e.res, nil); err != nil {
		t.Fatal(err)
	}
	inv, err = e.p.ListInsts(e.ctx(), e.cloudlet)
	if err != nil {
		t.Fatal(err)
	}
	if len(inv.Clusters) != 1 || !inv.Clusters[0].Key.Equal(e.cluster.Key) || inv.Clusters[0].State != edgeproto.TrackedState_TRACKED_STATE_READY ||
		len(inv.Clusters[0].GetResources().GetVms()) != 1 || !inv.Clusters[0].CloudletKey.Equal(e.cloudlet.Key) {
		t.Errorf("clusters = %v", inv.Clusters)
	}
	if len(inv.AppInsts) != 2 {
		t.Fatalf("instances = %v", inv.AppInsts)
	}
	got1, got2 := inv.AppInsts[0], inv.AppInsts[1]
	if !got1.Key.Equal(a1.Key) || got1.State != edgeproto.TrackedState_TRACKED_STATE_READY || !got1.ClusterKey.Equal(e.cluster.Key) ||
		!got1.AppKey.Equal(app.Key) || !slices.Equal(got1.RuntimeInfo.GetPids(), rt.Pids) || !slices.Equal(got1.RuntimeInfo.GetPorts(), rt.Ports) ||
		got1.Uri != loopback || len(got1.MappedPorts) != 1 || got1.MappedPorts[0].PublicPort != int32(rt.Ports[0]) {
		t.Errorf("a1 = %v, runtime %v", got1, rt)
	}
	if !got2.Key.Equal(a2.Key) || got2.State != edgeproto.TrackedState_TRACKED_STATE_READY ||
		got2.PowerState != edgeproto.PowerState_POWER_STATE_POWER_OFF || len(got2.RuntimeInfo.GetPids()) != 0 {
		t.Errorf("a2 = %v", got2)
	}
	// GatherCloudletInfo lists the same clusters.
	info := &edgeproto.CloudletInfo{}
	if err := e.p.GatherCloudletInfo(e.ctx(), e.cloudlet, info); err != nil {
		t.Fatal(err)
	}
	if cs := info.GetResourcesSnapshot().GetClusterInsts(); len(cs) != 1 || !cs[0].Equal(e.cluster.Key) {
		t.Errorf("snapshot clusters = %v", cs)
	}
}

// TestListInstsAfterCrashMidCreate kills a real engine process after it
// started an instance's process and before it recorded it: the inventory
// lists that instance as CREATING with the running pid, found by its
// marker; after the engine undoes it (a delete), nothing is listed.
func TestListInstsAfterCrashMidCreate(t *testing.T) {
	t.Parallel()
	sc := newScenario(t, 1)
	ep := startEngine(t, sc, "create", hookAppStarted)
	ep.waitLine("paused")
	ep.kill()

	p, err := New(Config{Root: sc.root, PortMin: sc.ports.first, PortMax: sc.ports.last, PortRangeSize: testRangeSize})
	if err != nil {
		t.Fatal(err)
	}
	inv, err := p.ListInsts(t.Context(), sc.cloudlet())
	if err != nil {
		t.Fatal(err)
	}
	running := markedProcs(t, sc.root)
	if len(inv.Clusters) != 1 || inv.Clusters[0].State != edgeproto.TrackedState_TRACKED_STATE_READY {
		t.Errorf("clusters = %v", inv.Clusters)
	}
	if len(inv.AppInsts) != 1 || !inv.AppInsts[0].Key.Equal(sc.inst(0).Key) ||
		inv.AppInsts[0].State != edgeproto.TrackedState_TRACKED_STATE_CREATING || len(inv.AppInsts[0].RuntimeInfo.GetPids()) != 1 {
		t.Fatalf("instances = %v", inv.AppInsts)
	}
	if pid := int(inv.AppInsts[0].RuntimeInfo.Pids[0]); running[pid] == "" {
		t.Errorf("listed pid %d is not the running process %v", pid, running)
	}
	// The engine's undo of an interrupted create is a delete.
	cl := sc.cluster()
	if err := p.DeleteAppInst(t.Context(), cl, nil, inv.AppInsts[0], executor.NewMemReservations(), nil); err != nil {
		t.Fatal(err)
	}
	if inv, err = p.ListInsts(t.Context(), sc.cloudlet()); err != nil || len(inv.AppInsts) != 0 {
		t.Errorf("after the undo: %v, %v", inv, err)
	}
	checkNoneRunning(t, sc.root)
	_ = p.Close()
}

// TestListInstsFindsProcessesWithoutDirectory: a process of the platform
// whose instance directory is gone is listed (CREATING, keyed from its
// marker), never dropped.
func TestListInstsFindsProcessesWithoutDirectory(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createCluster(e.cluster)
	inst := e.newInst("a1")
	rt := e.createApp(newApp(), inst)
	l, _ := e.p.clusterLoc(e.cluster)
	if err := os.RemoveAll(l.dir); err != nil {
		t.Fatal(err)
	}
	inv, err := e.p.ListInsts(e.ctx(), e.cloudlet)
	if err != nil {
		t.Fatal(err)
	}
	if len(inv.AppInsts) != 1 || !inv.AppInsts[0].Key.Equal(inst.Key) || !inv.AppInsts[0].ClusterKey.Equal(e.cluster.Key) ||
		inv.AppInsts[0].State != edgeproto.TrackedState_TRACKED_STATE_CREATING || !slices.Equal(inv.AppInsts[0].RuntimeInfo.GetPids(), rt.Pids) {
		t.Errorf("instances = %v", inv.AppInsts)
	}
	if err := e.p.DeleteAppInst(e.ctx(), e.cluster, newApp(), inst, e.res, nil); err != nil {
		t.Fatal(err)
	}
	checkNoneRunning(t, e.root)
}

// TestUpdateOfNeverCreated: updating a cluster or an instance that was
// never created fails with ErrNotFound and creates nothing.
func TestUpdateOfNeverCreated(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if err := e.p.UpdateCluster(e.ctx(), e.cloudlet, e.cluster, e.res, nil); !errors.Is(err, executor.ErrNotFound) {
		t.Errorf("update of an absent cluster: %v", err)
	}
	if l, _ := e.p.clusterLoc(e.cluster); dirExists(l.dir) {
		t.Errorf("update created the cluster")
	}
	e.createCluster(e.cluster)
	inst := e.newInst("a1")
	if _, err := e.p.UpdateAppInst(e.ctx(), e.cluster, newApp(), inst, e.res, nil); !errors.Is(err, ErrInstanceNotFound) || !errors.Is(err, executor.ErrNotFound) {
		t.Errorf("update of an absent instance: %v", err)
	}
	if left := markedProcs(t, e.root); len(left) != 0 || dirExists(e.mustAppDir(inst)) {
		t.Errorf("update started %v", left)
	}
}
