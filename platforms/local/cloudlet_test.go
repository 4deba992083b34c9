package local

import (
	"os"
	"runtime"
	"testing"

	"github.com/edgekit/edgekit/edgeproto"
)

func TestGatherCloudletInfo(t *testing.T) {
	e := newEnv(t)
	e.cloudlet.ResourceQuotas = []*edgeproto.ResourceQuota{{Name: ResourceRAM, Value: 1024, AlertThreshold: 70}}
	e.createCluster(e.cluster)
	info := &edgeproto.CloudletInfo{}
	if err := e.p.GatherCloudletInfo(e.ctx(), e.cloudlet, info); err != nil {
		t.Fatal(err)
	}
	if len(info.Flavors) == 0 || info.Flavors[len(info.Flavors)-1].Vcpus != uint64(runtime.NumCPU()) {
		t.Errorf("flavors = %v", info.Flavors)
	}
	for _, f := range info.Flavors {
		if f.Vcpus > uint64(runtime.NumCPU()) {
			t.Errorf("flavor %s larger than the host", f.Name)
		}
	}
	res := map[string]*edgeproto.InfraResource{}
	for _, r := range info.ResourcesSnapshot.GetInfo() {
		res[r.Name] = r
	}
	if r := res[ResourceVCPUs]; r == nil || r.Total != uint64(runtime.NumCPU()) || r.Used > r.Total {
		t.Errorf("vCPUs = %v", r)
	}
	if r := res[ResourceRAM]; r == nil || r.Total == 0 || r.Used > r.Total || r.Quota != 1024 || r.AlertThreshold != 70 || r.Units != "MB" {
		t.Errorf("RAM = %v", r)
	}
	if r := res[ResourceDisk]; r == nil || r.Total == 0 || r.Used > r.Total {
		t.Errorf("Disk = %v", r)
	}
	if cs := info.ResourcesSnapshot.GetClusterInsts(); len(cs) != 1 || !cs[0].Equal(e.cluster.Key) {
		t.Errorf("clusters = %v", cs)
	}
	host, _ := os.Hostname()
	if len(info.NodeInfos) != 1 || info.NodeInfos[0].Name != host || info.NodeInfos[0].Capacity["cpu"] == "" {
		t.Errorf("node infos = %v", info.NodeInfos)
	}
	if info.Properties["platform"] != PlatformType || info.Properties["os"] != runtime.GOOS {
		t.Errorf("properties = %v", info.Properties)
	}
}

func TestInitAndCleanupCloudlet(t *testing.T) {
	e := newEnv(t)
	for range 2 {
		if err := e.p.InitCloudlet(e.ctx(), e.cloudlet, e.res, nil); err != nil {
			t.Fatal(err)
		}
	}
	e.createCluster(e.cluster)
	rt := e.createApp(newApp(), e.newInst("a1"))
	if err := e.p.CleanupCloudlet(e.ctx(), e.cloudlet, nil); err != nil {
		t.Fatal(err)
	}
	if running(int(rt.Pids[0])) {
		t.Error("process survived cloudlet cleanup")
	}
	l, _ := e.p.cloudletLoc(e.cloudlet.Key)
	if _, err := os.Stat(l.dir); !os.IsNotExist(err) {
		t.Errorf("cloudlet directory left: %v", err)
	}
}

func TestFeatures(t *testing.T) {
	if got := newEnv(t).p.Features().PlatformType; got != "local" {
		t.Errorf("PlatformType = %q", got)
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	for _, cfg := range []Config{
		{},
		{Root: t.TempDir(), PortMin: 100, PortMax: 50},
		{Root: t.TempDir(), PortMin: 100, PortMax: 109, PortRangeSize: 11},
		{Root: t.TempDir(), PortMax: 70000},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) succeeded", cfg)
		}
	}
}
