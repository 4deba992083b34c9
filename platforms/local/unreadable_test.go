package local

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
)

// TestOneUnreadableRecordFailsOnlyItsInstance runs the real engine over a
// cloudlet where one instance's state file is broken: the cloudlet's init
// succeeds (READY, its cluster listed), and a reconcile leaves the other
// instance running and READY while the broken one is reported
// CREATE_ERROR with an error naming its file and its process is stopped;
// deleting it then succeeds.
func TestOneUnreadableRecordFailsOnlyItsInstance(t *testing.T) {
	t.Parallel()
	for name, content := range corruptions {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.createCluster(e.cluster)
			app := newApp()
			good, bad := e.newInst("a1"), e.newInst("a2")
			goodPid := int(e.createApp(app, good).Pids[0])
			badPid := int(e.createApp(app, bad).Pids[0])
			if err := os.WriteFile(filepath.Join(e.mustAppDir(bad), appStateFile), content, 0o600); err != nil {
				t.Fatal(err)
			}
			e.restart() // a new engine

			cloudlets := executor.NewCache[*edgeproto.Cloudlet]()
			clusters := executor.NewCache[*edgeproto.ClusterInst]()
			apps := executor.NewCache[*edgeproto.App]()
			insts := executor.NewCache[*edgeproto.AppInst]()
			cloudletInfos := executor.NewCache[*edgeproto.CloudletInfo]()
			instInfos := executor.NewCache[*edgeproto.AppInstInfo]()
			eng, err := executor.New(executor.Config{
				Platform:     e.p,
				Reservations: e.res,
				Objects: executor.Objects{
					Cloudlets:      executor.CacheGetter[*edgeproto.CloudletKey](cloudlets),
					ClusterInsts:   executor.CacheGetter[*edgeproto.ClusterKey](clusters),
					Apps:           executor.CacheGetter[*edgeproto.AppKey](apps),
					AppInsts:       executor.CacheGetter[*edgeproto.AppInstKey](insts),
					ClusterInstsOn: executor.CacheLister(clusters),
					AppInstsOn:     executor.CacheLister(insts),
				},
				CloudletInfos: cloudletInfos,
				AppInstInfos:  instInfos,
			})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(e.ctx())
			stopped := make(chan struct{})
			go func() { defer close(stopped); _ = eng.Start(ctx) }()
			t.Cleanup(func() { cancel(); <-stopped })

			cl := e.cloudlet.Clone()
			cl.State = edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED
			cloudlets.Put(cl)
			h, err := eng.SubmitCloudlet(cl)
			if err != nil {
				t.Fatal(err)
			}
			if err := h.Wait(ctx); err != nil {
				t.Errorf("cloudlet init: %v", err)
			}
			info, _ := cloudletInfos.Get(executor.KeyString(cl))
			if info.GetState() != edgeproto.CloudletState_CLOUDLET_STATE_READY {
				t.Errorf("cloudlet is %v %v, want READY", info.GetState(), info.GetErrors())
			}
			if got := info.GetResourcesSnapshot().GetClusterInsts(); len(got) != 1 || !got[0].Equal(e.cluster.Key) {
				t.Errorf("cloudlet lists clusters %v, want %v", got, e.cluster.Key)
			}

			// What the host wants: everything READY.
			cl.State = edgeproto.TrackedState_TRACKED_STATE_READY
			cloudlets.Put(cl)
			c := e.cluster.Clone()
			c.State = edgeproto.TrackedState_TRACKED_STATE_READY
			clusters.Put(c)
			apps.Put(app)
			for _, inst := range []*edgeproto.AppInst{good, bad} {
				inst = inst.Clone()
				inst.State = edgeproto.TrackedState_TRACKED_STATE_READY
				insts.Put(inst)
			}
			res, err := eng.Reconcile(ctx, cl)
			if err != nil {
				t.Fatalf("reconcile: %v", err)
			}
			for _, it := range res.Items {
				t.Logf("reconcile: %s %s: %s %v", it.Kind, it.Key, it.Action, it.Err)
			}
			if gi, ok := instInfos.Get(executor.KeyString(good)); ok && gi.GetState() != edgeproto.TrackedState_TRACKED_STATE_READY {
				t.Errorf("the readable instance is %v %v, want READY", gi.GetState(), gi.GetErrors())
			}
			if !running(goodPid) {
				t.Errorf("the readable instance's process %d was stopped", goodPid)
			}
			bi, _ := instInfos.Get(executor.KeyString(bad))
			if bi.GetState() != edgeproto.TrackedState_TRACKED_STATE_CREATE_ERROR || !strings.Contains(strings.Join(bi.GetErrors(), "\n"), appStateFile) {
				t.Errorf("the instance with the broken record is %v %q, want CREATE_ERROR naming %s", bi.GetState(), bi.GetErrors(), appStateFile)
			}
			if running(badPid) {
				t.Errorf("the process %d of the instance in error was not stopped by its undo", badPid)
			}

			// Deleting the broken instance works, the other one lives on.
			del := bad.Clone()
			del.State = edgeproto.TrackedState_TRACKED_STATE_DELETE_REQUESTED
			insts.Put(del)
			h, err = eng.SubmitAppInst(del)
			if err != nil {
				t.Fatal(err)
			}
			if err := h.Wait(ctx); err != nil {
				t.Errorf("delete of the instance in error: %v", err)
			}
			if dirExists(e.mustAppDir(bad)) {
				t.Errorf("directory of the deleted instance left")
			}
			if n := len(markedProcs(t, e.root)); n != 1 || !running(goodPid) {
				t.Errorf("%d processes run, want only %d", n, goodPid)
			}
		})
	}
}

// TestUnreadableClusterRecordAffectsOnlyItsCluster: a broken cluster
// record does not fail the cloudlet's info nor the listing of the other
// clusters and instances; the cluster is listed READY from its
// directory's name (nothing is undone on a record that cannot be read),
// and creating an instance on it fails naming the file.
func TestUnreadableClusterRecordAffectsOnlyItsCluster(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createCluster(e.cluster)
	other := &edgeproto.ClusterInst{Key: &edgeproto.ClusterKey{Organization: "dev", Name: "c2"}, CloudletKey: e.cloudlet.Key}
	e.createCluster(other)
	inst := e.newInst("a1")
	pid := e.createApp(newApp(), inst).Pids[0]
	l, err := e.p.clusterLoc(other)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(l.dir, clusterFile), corruptions["garbage"], 0o600); err != nil {
		t.Fatal(err)
	}
	e.restart()

	var info edgeproto.CloudletInfo
	if err := e.p.GatherCloudletInfo(e.ctx(), e.cloudlet, &info); err != nil {
		t.Fatalf("gather: %v", err)
	}
	if got := info.GetResourcesSnapshot().GetClusterInsts(); len(got) != 2 {
		t.Errorf("cloudlet lists clusters %v, want both", got)
	}
	inv, err := e.p.ListInsts(e.ctx(), e.cloudlet)
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	states := map[string]edgeproto.TrackedState{}
	for _, c := range inv.Clusters {
		states[executor.KeyString(c)] = c.GetState()
	}
	if states[executor.KeyString(e.cluster)] != edgeproto.TrackedState_TRACKED_STATE_READY || states[executor.KeyString(other)] != edgeproto.TrackedState_TRACKED_STATE_READY {
		t.Errorf("clusters listed %v, want both READY", states)
	}
	if len(inv.AppInsts) != 1 || len(inv.AppInsts[0].GetRuntimeInfo().GetPids()) != 1 || inv.AppInsts[0].GetRuntimeInfo().GetPids()[0] != pid {
		t.Errorf("instances listed %v, want %v with pid %d", inv.AppInsts, inst.Key, pid)
	}
	onOther := e.newInst("b1")
	onOther.ClusterKey = other.Key
	if _, err := e.p.CreateAppInst(e.ctx(), other, newApp(), onOther, e.res, nil); err == nil || !strings.Contains(err.Error(), clusterFile) {
		t.Errorf("create on the cluster with a broken record: %v, want an error naming %s", err, clusterFile)
	}
	if err := e.p.DeleteCluster(e.ctx(), e.cloudlet, other, e.res, nil); err != nil {
		t.Errorf("delete of the cluster with a broken record: %v", err)
	}
	if !running(int(pid)) {
		t.Errorf("process %d of the other cluster was stopped", pid)
	}
}

// TestUnreadableCloudletRecordIsWrittenAgain: a broken cloudlet record
// does not fail the cloudlet's init (whose undo would stop every instance
// of the cloudlet): the record is written again, the instances run on.
func TestUnreadableCloudletRecordIsWrittenAgain(t *testing.T) {
	t.Parallel()
	for name, content := range corruptions {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.createCluster(e.cluster)
			pid := int(e.createApp(newApp(), e.newInst("a1")).Pids[0])
			l, err := e.p.cloudletLoc(e.cloudlet.Key)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(l.dir, cloudletFile)
			if err := os.WriteFile(path, content, 0o600); err != nil {
				t.Fatal(err)
			}
			e.restart()
			if err := e.p.InitCloudlet(e.ctx(), e.cloudlet, e.res, nil); err != nil {
				t.Fatalf("init: %v", err)
			}
			var rec cloudletRecord
			if ok, err := e.p.readRecord(path, &rec); !ok || err != nil || rec.Name != "host" {
				t.Errorf("cloudlet record after the init: %+v, %v, %v", rec, ok, err)
			}
			var info edgeproto.CloudletInfo
			if err := e.p.GatherCloudletInfo(e.ctx(), e.cloudlet, &info); err != nil {
				t.Errorf("gather: %v", err)
			}
			if !running(pid) {
				t.Errorf("process %d stopped", pid)
			}
		})
	}
}
