package ccrm_test

import (
	"context"
	"log/slog"
	"regexp"
	"testing"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/hosts/ccrm"
	"github.com/edgekit/edgekit/hosts/ccrm/ccrmtest"
	"github.com/edgekit/edgekit/hosts/controller"
	"github.com/edgekit/edgekit/hosts/controller/controllertest"
	"github.com/edgekit/edgekit/internal/testenv/logbuf"
	"github.com/edgekit/edgekit/platforms/fake"
)

// A reconciliation takes the claim of what it removes: a cluster the
// region does not have but another replica claims (a create of the same
// key, say) is left alone while the claim is held, and removed by a later
// reconciliation once it is gone.
func TestReconcileLeavesWhatAnotherReplicaClaims(t *testing.T) {
	t.Parallel()
	r := ccrmtest.NewRegion(t, ccrmtest.RegionOptions{Cloudlets: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p := fake.New(fake.Options{})
	cl := &edgeproto.Cloudlet{Key: &edgeproto.CloudletKey{Organization: "op", Name: "orphans"}, PlatformType: fake.Name,
		CrmOverride: edgeproto.CRMOverride_CRM_OVERRIDE_IGNORE_CRM}
	if _, err := ccrmtest.Wait(r.Cloudlet.CreateCloudlet(ctx, &edgeproto.CreateCloudletRequest{Cloudlet: cl})); err != nil {
		t.Fatal(err)
	}
	orphan := &edgeproto.ClusterInst{Key: &edgeproto.ClusterKey{Organization: "dev", Name: "orphan"}, CloudletKey: cl.Key, FlavorName: "fake.small"}
	if err := p.CreateCluster(ctx, cl, orphan, executor.NewMemReservations(), executor.ProgressFunc(func(string) {})); err != nil {
		t.Fatal(err)
	}
	onPlatform := func() bool {
		t.Helper()
		inv, err := p.ListInsts(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		return len(inv.Clusters) == 1
	}
	claimKey := controller.ClaimKey(r.Env.Store.Prefix(), "ClusterInst", executor.KeyString(orphan.Key))
	if _, err := r.Env.Store.Client().Put(ctx, claimKey, "another-replica"); err != nil {
		t.Fatal(err)
	}
	logs := &logbuf.Buffer{}
	startReplica(t, r, ccrm.Config{ReplicaID: "rec", Platforms: []string{fake.Name}, ReconcileInterval: time.Second,
		NewPlatform: func(*edgeproto.Cloudlet) (executor.Platform, error) { return p, nil },
		Logger:      slog.New(slog.NewTextHandler(logs, nil))})
	reconciled := regexp.MustCompile(`msg="cloudlet reconciled" .*cloudlet="[^"]*name=orphans[^"]*" (.*)`)
	controllertest.WaitFor(t, 30*time.Second, "a reconciliation of the cloudlet", func() bool {
		return reconciled.MatchString(logs.String())
	})
	if !onPlatform() {
		t.Fatal("the orphan was removed while another replica claimed it")
	}
	if m := reconciled.FindStringSubmatch(logs.String()); !regexp.MustCompile(`delete=0 none=0 busy=1`).MatchString(m[1]) {
		t.Errorf("the first reconciliation logged %q, want delete=0 none=0 busy=1", m[1])
	}
	if _, err := r.Env.Store.Client().Delete(ctx, claimKey); err != nil {
		t.Fatal(err)
	}
	controllertest.WaitFor(t, 30*time.Second, "a reconciliation to remove the orphan once its claim is gone", func() bool {
		return !onPlatform()
	})
	controllertest.WaitFor(t, 10*time.Second, "the reconciliation to release its claim", func() bool {
		resp, err := r.Env.Store.Client().Get(ctx, claimKey)
		return err == nil && len(resp.Kvs) == 0
	})
}
