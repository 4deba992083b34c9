package controller_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/hosts/controller/controllertest"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// quotaWorld is a controller with the fake host, a 2-vCPU flavor and an
// operator's READY cloudlet whose vCPUs quota is vcpus.
func quotaWorld(t *testing.T, vcpus uint64) (*controllertest.Env, *clients, *edgeproto.CloudletKey) {
	t.Helper()
	env := controllertest.Start(t, controllertest.Options{Host: true})
	admin := clientsOf(env.Conn(env.AdminToken()))
	ctx := testCtx(t)
	if _, err := admin.flavors.CreateFlavor(ctx, &edgeproto.CreateFlavorRequest{Flavor: &edgeproto.Flavor{
		Key: &edgeproto.FlavorKey{Name: "fake.medium"}, Vcpus: 2, RamMb: 4096, DiskGb: 40}}); err != nil {
		t.Fatal(err)
	}
	cl := &edgeproto.CloudletKey{Organization: "operator", Name: "site1"}
	ps, err := drain(admin.cloudlets.CreateCloudlet(ctx, &edgeproto.CreateCloudletRequest{Cloudlet: &edgeproto.Cloudlet{
		Key: cl, PlatformType: "fake", ResourceQuotas: []*edgeproto.ResourceQuota{{Name: "vCPUs", Value: vcpus}}}}))
	if err != nil || lastState(t, ps) != edgeproto.TrackedState_TRACKED_STATE_READY {
		t.Fatalf("create cloudlet: %v %v", ps, err)
	}
	return env, admin, cl
}

func mediumCluster(cl *edgeproto.CloudletKey, name string) *edgeproto.ClusterInst {
	return &edgeproto.ClusterInst{Key: &edgeproto.ClusterKey{Organization: "developer", Name: name}, CloudletKey: cl, FlavorName: "fake.medium"}
}

// waitSnapshotClusters waits until the cloudlet's reported resources
// snapshot lists n clusters.
func waitSnapshotClusters(t *testing.T, admin *clients, cl *edgeproto.CloudletKey, n int) {
	t.Helper()
	ctx := testCtx(t)
	for {
		infos, err := recvAll(admin.cloudlets.ShowCloudletInfos(ctx, &edgeproto.ShowCloudletInfosRequest{}))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range infos {
			if i := m.(*edgeproto.CloudletInfo); i.GetKey().GetName() == cl.Name && len(i.GetResourcesSnapshot().GetClusterInsts()) == n {
				return
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the resources snapshot of %s never listed %d clusters", cl.Name, n)
		case <-time.After(10 * time.Millisecond): // polling interval, not synchronisation
		}
	}
}

// A cloudlet with a quota of 4 vCPUs takes two 2-vCPU clusters; the third
// is refused naming vCPUs, what it asks and what is free. Once a cluster is
// deleted and the refreshed snapshot no longer counts it, a new one fits:
// clusters the snapshot lists are not counted again as being created.
func TestClusterCreateRefusedPastCloudletQuota(t *testing.T) {
	t.Parallel()
	_, admin, cl := quotaWorld(t, 4)
	ctx := testCtx(t)
	create := func(name string) error {
		ps, err := drain(admin.clusters.CreateClusterInst(ctx, &edgeproto.CreateClusterInstRequest{ClusterInst: mediumCluster(cl, name)}))
		if err == nil && lastState(t, ps) != edgeproto.TrackedState_TRACKED_STATE_READY {
			t.Fatalf("cluster %s: %v", name, ps)
		}
		return err
	}
	for _, name := range []string{"a", "b"} {
		if err := create(name); err != nil {
			t.Fatalf("cluster %s: %v", name, err)
		}
	}
	err := create("c")
	wantCode(t, err, codes.FailedPrecondition, "third cluster past the quota")
	for _, want := range []string{"vCPUs", "asked 2", "free 0"} {
		if !strings.Contains(status.Convert(err).Message(), want) {
			t.Errorf("refusal %q does not say %q", status.Convert(err).Message(), want)
		}
	}
	waitSnapshotClusters(t, admin, cl, 2)
	if _, err := drain(admin.clusters.DeleteClusterInst(ctx, &edgeproto.DeleteClusterInstRequest{Key: mediumCluster(cl, "a").Key})); err != nil {
		t.Fatal(err)
	}
	waitSnapshotClusters(t, admin, cl, 1)
	if err := create("c"); err != nil {
		t.Fatalf("cluster c after a delete freed 2 vCPUs: %v", err)
	}
}

// Creates racing for the last vCPUs of a cloudlet never exceed its quota:
// of 12 parallel 2-vCPU creates on a 10-vCPU quota exactly 5 are accepted
// (none past the quota, none refused while there was room), whatever the
// engine reports meanwhile.
func TestConcurrentClusterCreatesNeverExceedQuota(t *testing.T) {
	t.Parallel()
	const n, quota = 12, 10
	_, admin, cl := quotaWorld(t, quota)
	ctx := testCtx(t)
	var (
		wg                sync.WaitGroup
		mu                sync.Mutex
		accepted, refused int
		unexpected        []error
	)
	for i := range n {
		wg.Go(func() {
			var err error
			for range 20 { // a conflict with a concurrent create is retried, as a client would
				_, err = drain(admin.clusters.CreateClusterInst(ctx, &edgeproto.CreateClusterInstRequest{
					ClusterInst: mediumCluster(cl, fmt.Sprintf("c%02d", i)), NoWait: true}))
				if status.Code(err) != codes.Aborted {
					break
				}
			}
			mu.Lock()
			defer mu.Unlock()
			switch status.Code(err) {
			case codes.OK:
				accepted++
			case codes.FailedPrecondition:
				refused++
			default:
				unexpected = append(unexpected, err)
			}
		})
	}
	wg.Wait()
	if len(unexpected) > 0 {
		t.Fatalf("unexpected errors: %v", unexpected)
	}
	if accepted != quota/2 || refused != n-quota/2 {
		t.Errorf("accepted %d, refused %d of %d 2-vCPU creates on a %d-vCPU quota, want %d and %d",
			accepted, refused, n, quota, quota/2, n-quota/2)
	}
	got, err := recvAll(admin.clusters.ShowClusterInsts(context.WithoutCancel(ctx), &edgeproto.ShowClusterInstsRequest{}))
	if err != nil || len(got) != quota/2 {
		t.Errorf("stored clusters: %d (%v), want %d", len(got), err, quota/2)
	}
}

// An instance of a VM App asks its flavor of the cloudlet: on a 6-vCPU
// quota with a 2-vCPU cluster, two 2-vCPU VM instances fit and the third
// is refused naming vCPUs, what it asks and what is free, while an
// instance of a container App (which runs inside its admitted cluster)
// still fits. The VM instances, which the fake platform's snapshot does
// not list, stay counted: a new cluster is refused too.
func TestAppInstCreateRefusedPastCloudletQuota(t *testing.T) {
	t.Parallel()
	_, admin, cl := quotaWorld(t, 6)
	ctx := testCtx(t)
	if ps, err := drain(admin.clusters.CreateClusterInst(ctx, &edgeproto.CreateClusterInstRequest{ClusterInst: mediumCluster(cl, "a")})); err != nil ||
		lastState(t, ps) != edgeproto.TrackedState_TRACKED_STATE_READY {
		t.Fatalf("cluster a: %v %v", ps, err)
	}
	for _, app := range []*edgeproto.App{
		{Key: &edgeproto.AppKey{Organization: "developer", Name: "vm", Version: "1"}, Deployment: "vm", DefaultFlavor: "fake.medium"},
		{Key: &edgeproto.AppKey{Organization: "developer", Name: "web", Version: "1"}, Deployment: "docker", DefaultFlavor: "fake.medium"},
	} {
		if _, err := admin.apps.CreateApp(ctx, &edgeproto.CreateAppRequest{App: app}); err != nil {
			t.Fatal(err)
		}
	}
	create := func(name, app string) error {
		_, err := drain(admin.appInsts.CreateAppInst(ctx, &edgeproto.CreateAppInstRequest{AppInst: &edgeproto.AppInst{
			Key:        &edgeproto.AppInstKey{Organization: "developer", Name: name},
			AppKey:     &edgeproto.AppKey{Organization: "developer", Name: app, Version: "1"},
			ClusterKey: mediumCluster(cl, "a").Key}}))
		return err
	}
	for _, name := range []string{"vm1", "vm2"} {
		if err := create(name, "vm"); err != nil {
			t.Fatalf("VM instance %s: %v", name, err)
		}
	}
	err := create("vm3", "vm")
	wantCode(t, err, codes.FailedPrecondition, "third VM instance past the quota")
	for _, want := range []string{"AppInst", "vm3", "vCPUs", "asked 2", "free 0"} {
		if !strings.Contains(status.Convert(err).Message(), want) {
			t.Errorf("refusal %q does not say %q", status.Convert(err).Message(), want)
		}
	}
	if err := create("web1", "web"); err != nil {
		t.Fatalf("container instance on a full cloudlet: %v", err)
	}
	_, err = drain(admin.clusters.CreateClusterInst(ctx, &edgeproto.CreateClusterInstRequest{ClusterInst: mediumCluster(cl, "b")}))
	wantCode(t, err, codes.FailedPrecondition, "cluster past the quota the VM instances take")
}
