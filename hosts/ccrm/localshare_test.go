package ccrm_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/hosts/ccrm/ccrmtest"
	"github.com/edgekit/edgekit/platforms/local"
)

// localProcs lists the live processes of the local platform whose marker
// names the cloudlet directory cloudletDir.
func localProcs(cloudletDir string) map[int]string {
	out := map[int]string{}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return out
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue
		}
		for _, kv := range strings.Split(string(env), "\x00") {
			v, ok := strings.CutPrefix(kv, local.MarkerEnv+"=")
			if ok && strings.Contains(v, ":"+cloudletDir+"/") {
				if st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil && !strings.Contains(string(st), ") Z ") {
					out[pid] = v
				}
			}
		}
	}
	return out
}

// Two replica processes share one state directory and serve the same
// local cloudlet at once: the instances created on it are spread over
// both (each runs one operation at a time), every instance has exactly
// one process, and the delete of the cluster leaves none.
func TestLocalCloudletServedByBothReplicas(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	r := ccrmtest.NewRegion(t, ccrmtest.RegionOptions{Cloudlets: 1})
	state := t.TempDir()
	const cloudletDir = "operator.lshare"
	t.Cleanup(func() {
		for pid := range localProcs(cloudletDir) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	var replicas []*ccrmtest.Process
	for _, id := range []string{"l0", "l1"} {
		args := r.ReplicaArgs(id, 2*time.Second, "--platforms", local.PlatformType, "--workers", "1", "--state-dir", state)
		replicas = append(replicas, ccrmtest.StartReplica(t, id, args, r.TokenEnv()))
	}
	ready := edgeproto.TrackedState_TRACKED_STATE_READY
	want := func(step string, p *edgeproto.Progress, err error, s edgeproto.TrackedState) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if p.GetState() != s {
			t.Fatalf("%s ended in %v (%v), want %v", step, p.GetState(), p.GetErrors(), s)
		}
	}
	ck := &edgeproto.CloudletKey{Organization: "operator", Name: "lshare"}
	p, err := ccrmtest.Wait(r.Cloudlet.CreateCloudlet(ctx, &edgeproto.CreateCloudletRequest{Cloudlet: &edgeproto.Cloudlet{
		Key: ck, PlatformType: local.PlatformType}}))
	want("create cloudlet", p, err, ready)
	apps := edgeproto.NewAppServiceClient(r.Env.Conn(r.Env.AdminToken()))
	app := &edgeproto.App{Key: &edgeproto.AppKey{Organization: "dev", Name: "sleeper", Version: "1"},
		Deployment: local.PlatformType, ImageType: edgeproto.ImageType_IMAGE_TYPE_NONE,
		Command: "sleep 600", HealthCheck: edgeproto.HealthCheck_HEALTH_CHECK_NONE}
	if _, err := apps.CreateApp(ctx, &edgeproto.CreateAppRequest{App: app}); err != nil {
		t.Fatal(err)
	}
	cl := &edgeproto.ClusterKey{Organization: "dev", Name: "shared"}
	p, err = ccrmtest.Wait(r.Cluster.CreateClusterInst(ctx, &edgeproto.CreateClusterInstRequest{ClusterInst: &edgeproto.ClusterInst{
		Key: cl, CloudletKey: ck, Deployment: local.PlatformType, FlavorName: "fake.small"}}))
	want("create cluster", p, err, ready)

	const n = 8
	errs := make(chan error, n)
	for i := range n {
		go func() {
			p, err := ccrmtest.Wait(r.AppInst.CreateAppInst(ctx, &edgeproto.CreateAppInstRequest{AppInst: &edgeproto.AppInst{
				Key: &edgeproto.AppInstKey{Organization: "dev", Name: fmt.Sprintf("s%d", i)}, AppKey: app.Key, ClusterKey: cl}}))
			if err == nil && p.GetState() != ready {
				err = fmt.Errorf("ended in %v (%v)", p.GetState(), p.GetErrors())
			}
			if err != nil {
				err = fmt.Errorf("create instance s%d: %w", i, err)
			}
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if t.Failed() {
		for _, rp := range replicas {
			t.Logf("replica log:\n%s", rp.Log())
		}
		t.FailNow()
	}
	// Each instance runs once.
	byInst := map[string][]int{}
	for pid, m := range localProcs(cloudletDir) {
		byInst[m[strings.LastIndex(m, "/")+1:]] = append(byInst[m[strings.LastIndex(m, "/")+1:]], pid)
	}
	if len(byInst) != n {
		t.Errorf("processes of %d instances run, want %d: %v", len(byInst), n, byInst)
	}
	for inst, pids := range byInst {
		if len(pids) != 1 {
			t.Errorf("instance %s has processes %v: a duplicate", inst, pids)
		}
	}
	// Both replicas did some of the creates.
	for i, rp := range replicas {
		done := 0
		for _, l := range strings.Split(rp.Log(), "\n") {
			if strings.Contains(l, `msg="operation done"`) && strings.Contains(l, "kind=AppInst") && strings.Contains(l, "op=create") {
				done++
			}
		}
		if done == 0 {
			t.Errorf("replica l%d did no instance create: the cloudlet is not served by both\n%s", i, rp.Log())
		}
	}
	// The deletes, by both replicas, stop them all.
	for i := range n {
		go func() {
			_, err := ccrmtest.Wait(r.AppInst.DeleteAppInst(ctx, &edgeproto.DeleteAppInstRequest{
				Key: &edgeproto.AppInstKey{Organization: "dev", Name: fmt.Sprintf("s%d", i)}}))
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Errorf("delete instance: %v", err)
		}
	}
	if _, err := ccrmtest.Wait(r.Cluster.DeleteClusterInst(ctx, &edgeproto.DeleteClusterInstRequest{Key: cl})); err != nil {
		t.Fatalf("delete cluster: %v", err)
	}
	if left := localProcs(cloudletDir); len(left) != 0 {
		t.Errorf("processes left after the deletes: %v", left)
	}
}
