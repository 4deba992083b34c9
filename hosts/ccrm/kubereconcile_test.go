package ccrm_test

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/hosts/ccrm/ccrmtest"
	"github.com/edgekit/edgekit/hosts/controller/controllertest"
	"github.com/edgekit/edgekit/platforms/kubernetes"
)

// A cluster and an instance the region deleted while no replica ran
// (without the resource manager: crm_override IGNORE_CRM) leave their
// namespace and Deployment on the Kubernetes cluster; the first replica
// that starts serving the cloudlet reconciles it and removes them, and
// leaves the cluster and instance the region still has as they are. A
// replica with a short --reconcile-interval removes, at its next periodic
// reconciliation, a cluster the region deletes without the resource
// manager while it runs.
func TestKubernetesReconcileRemovesWhatTheRegionDeleted(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	r := newK8sRegion(t, ctx, "rec", k8sOptions{})
	ready, done := edgeproto.TrackedState_TRACKED_STATE_READY, edgeproto.TrackedState_TRACKED_STATE_DELETE_DONE
	ignore := edgeproto.CRMOverride_CRM_OVERRIDE_IGNORE_CRM
	kept := r.readyCluster(t, ctx, "kept", 1, 1024)
	keptInst, keptNS, keptDep := r.readyInstance(t, ctx, "kept-web", kept)
	gone := r.readyCluster(t, ctx, "gone", 1, 1024)
	goneInst, goneNS, _ := r.readyInstance(t, ctx, "gone-web", gone)
	before, err := r.cs.AppsV1().Deployments(keptNS).Get(ctx, keptDep, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	// No replica runs while the region deletes the instance and its
	// cluster without the resource manager: the namespace stays.
	for i, rp := range r.replicas {
		if !rp.Terminate(15 * time.Second) {
			t.Fatalf("replica k%d did not stop in time", i)
		}
	}
	p, err := ccrmtest.Wait(r.AppInst.DeleteAppInst(ctx, &edgeproto.DeleteAppInstRequest{Key: goneInst, CrmOverride: ignore}))
	r.want(t, "delete instance gone-web without the resource manager", p, err, done)
	p, err = ccrmtest.Wait(r.Cluster.DeleteClusterInst(ctx, &edgeproto.DeleteClusterInstRequest{Key: gone, CrmOverride: ignore}))
	r.want(t, "delete cluster gone without the resource manager", p, err, done)
	if nss, err := r.namespaces(ctx); err != nil || !slices.Contains(nss, goneNS) {
		t.Fatalf("namespaces after the region deleted cluster gone: %v, %v; want %s still there", nss, err, goneNS)
	}

	// A replica starts: its first reconciliation of the cloudlet removes
	// what the region no longer has, and nothing else.
	k0 := r.replicas[0]
	k0.Restart()
	controllertest.WaitFor(t, 60*time.Second, "the restarted replica to remove the namespace of cluster gone", func() bool {
		nss, err := r.namespaces(ctx)
		return err == nil && !slices.Contains(nss, goneNS)
	})
	reconciled := regexp.MustCompile(`msg="cloudlet reconciled" .*cloudlet="[^"]*name=k8s-rec[^"]*" .*delete=2 none=0 busy=0`)
	controllertest.WaitFor(t, 30*time.Second, "the restarted replica to log its reconciliation of the cloudlet", func() bool {
		return reconciled.MatchString(k0.Log())
	})
	if nss, err := r.namespaces(ctx); err != nil || !slices.Equal(nss, []string{keptNS}) {
		t.Errorf("namespaces after the reconciliation: %v, %v; want only %s", nss, err, keptNS)
	}
	if deps, err := r.deployments(ctx, "gone-web"); err != nil || len(deps) != 0 {
		t.Errorf("deployments of gone-web after the reconciliation: %v, %v; want none", deps, err)
	}
	after, err := r.cs.AppsV1().Deployments(keptNS).Get(ctx, keptDep, metav1.GetOptions{})
	switch {
	case err != nil:
		t.Errorf("the Deployment of the instance the region has: %v", err)
	case after.DeletionTimestamp != nil || after.Generation != before.Generation ||
		after.Annotations[kubernetes.AnnFence] != before.Annotations[kubernetes.AnnFence]:
		t.Errorf("the Deployment of the instance the region has changed: generation %d, fence %s, deleted %v; was %d, %s",
			after.Generation, after.Annotations[kubernetes.AnnFence], after.DeletionTimestamp, before.Generation, before.Annotations[kubernetes.AnnFence])
	}
	if st, errs := r.appInstState(t, ctx, keptInst); st != ready {
		t.Errorf("instance kept-web is %v (%v) after the reconciliation, want READY", st, errs)
	}
	metrics := scrapeMetrics(t, ctx, k0)
	for _, kind := range []string{"AppInst", "ClusterInst"} {
		if line := `edgekit_ccrm_reconcile_actions_total{action="delete",kind="` + kind + `",result="ok"} 1`; !strings.Contains(metrics, line) {
			t.Errorf("the replica's metrics lack %s", line)
		}
	}
	if !regexp.MustCompile(`edgekit_ccrm_reconciliations_total\{result="ok"\} [1-9]`).MatchString(metrics) {
		t.Error("the replica's metrics count no successful reconciliation")
	}

	// Periodically: a replica reconciling every second removes what the
	// region deletes without the resource manager once it ran its first
	// reconciliation (k0 reconciles again only minutes later).
	late := r.readyCluster(t, ctx, "late", 1, 1024)
	nss, err := r.namespaces(ctx)
	if err != nil || len(nss) != 2 {
		t.Fatalf("namespaces with cluster late: %v, %v; want two", nss, err)
	}
	lateNS := nss[0]
	if lateNS == keptNS {
		lateNS = nss[1]
	}
	k2 := ccrmtest.StartReplica(t, "k2", r.ReplicaArgs("k2", 2*time.Second, "--platforms", kubernetes.PlatformType,
		"--metrics-listen", "127.0.0.1:0", "--workers", "1", "--reconcile-interval", "1s"), r.TokenEnv())
	first := regexp.MustCompile(`msg="cloudlet reconciled" .*delete=0`)
	controllertest.WaitFor(t, 60*time.Second, "replica k2 to reconcile the cloudlet a first time", func() bool {
		return first.MatchString(k2.Log())
	})
	p, err = ccrmtest.Wait(r.Cluster.DeleteClusterInst(ctx, &edgeproto.DeleteClusterInstRequest{Key: late, CrmOverride: ignore}))
	r.want(t, "delete cluster late without the resource manager", p, err, done)
	removedLate := regexp.MustCompile(`msg="reconcile: removing what the region no longer has" .*kind=ClusterInst key="name=late,organization=dev" result=ok`)
	controllertest.WaitFor(t, 60*time.Second, "a periodic reconciliation of replica k2 to remove cluster late", func() bool {
		return removedLate.MatchString(k2.Log())
	})
	if nss, err := r.namespaces(ctx); err != nil || !slices.Equal(nss, []string{keptNS}) {
		t.Errorf("namespaces after the periodic reconciliation: %v, %v; want only %s (not %s)", nss, err, keptNS, lateNS)
	}
	for _, rp := range []*ccrmtest.Process{k0, k2} {
		r.noSecret(t, "a replica's log", rp.Log())
	}
}
