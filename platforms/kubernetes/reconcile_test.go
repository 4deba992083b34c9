package kubernetes

import (
	"context"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
)

// TestReconcileAdoptsAndRemoves: an engine restarted on a cluster holding
// two namespaces and an instance, whose host wants only one of the
// clusters and no instance, reports the cluster it wants and removes the
// rest (what the region deleted while no engine watched).
func TestReconcileAdoptsAndRemoves(t *testing.T) {
	env := testEnv(t)
	cs := admin(t, env)
	ctx := testCtx(t)
	p := newPlatform(t)
	cl := testCloudlet("reconcile", env.AdminKubeconfig())
	kept, orphan := testCluster(cl, "kept"), testCluster(cl, "orphan")
	app := testApp()
	inst := testInst(kept, app, "gone")
	for _, ci := range []*edgeproto.ClusterInst{kept, orphan} {
		if err := p.CreateCluster(ctx, cl, ci, nil, &steps{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = p.DeleteCluster(testCtx(t), cl, ci, nil, &steps{}) })
	}
	if _, err := p.CreateAppInst(ctx, kept, app, inst, nil, &steps{}); err != nil {
		t.Fatal(err)
	}

	// The host knows kept as READY, and nothing else.
	wanted := kept.Clone()
	wanted.State = edgeproto.TrackedState_TRACKED_STATE_READY
	notFound := func(what string) error { return fmt.Errorf("%s: %w", what, executor.ErrNotFound) }
	eng, err := executor.New(executor.Config{
		Platform: p,
		Objects: executor.Objects{
			ClusterInsts: executor.GetterFunc[*edgeproto.ClusterKey, *edgeproto.ClusterInst](func(_ context.Context, k *edgeproto.ClusterKey) (*edgeproto.ClusterInst, error) {
				if executor.KeyString(k) == executor.KeyString(wanted) {
					return wanted.Clone(), nil
				}
				return nil, notFound(executor.KeyString(k))
			}),
			AppInsts: executor.GetterFunc[*edgeproto.AppInstKey, *edgeproto.AppInst](func(_ context.Context, k *edgeproto.AppInstKey) (*edgeproto.AppInst, error) {
				return nil, notFound(executor.KeyString(k))
			}),
			Apps: executor.GetterFunc[*edgeproto.AppKey, *edgeproto.App](func(_ context.Context, k *edgeproto.AppKey) (*edgeproto.App, error) {
				return app.Clone(), nil
			}),
			ClusterInstsOn: executor.ListerFunc[*edgeproto.ClusterInst](func(context.Context, *edgeproto.CloudletKey) ([]*edgeproto.ClusterInst, error) {
				return []*edgeproto.ClusterInst{wanted.Clone()}, nil
			}),
			AppInstsOn: executor.ListerFunc[*edgeproto.AppInst](func(context.Context, *edgeproto.CloudletKey) ([]*edgeproto.AppInst, error) {
				return nil, nil
			}),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- eng.Start(runCtx) }()
	t.Cleanup(func() {
		stop()
		<-done
	})
	res, err := eng.Reconcile(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Err(); err != nil {
		t.Fatalf("reconcile: %v (%+v)", err, res.Items)
	}
	if res.Count(executor.ReconcileDelete) != 2 || res.Count(executor.ReconcileReport) != 1 {
		t.Fatalf("reconcile did %+v, want 2 deletes (the orphan cluster and the instance) and 1 report", res.Items)
	}
	if _, err := cs.CoreV1().Namespaces().Get(ctx, namespaceName(cl.GetKey(), orphan.GetKey()), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("orphan namespace after reconcile: %v, want it gone", err)
	}
	r := refsOf(kept, inst)
	if _, err := cs.AppsV1().Deployments(r.ns).Get(ctx, r.name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("deployment of the deleted instance after reconcile: %v, want it gone", err)
	}
	inv, err := p.ListInsts(ctx, cl)
	if err != nil || len(inv.Clusters) != 1 || executor.KeyString(inv.Clusters[0]) != executor.KeyString(kept) || len(inv.AppInsts) != 0 {
		t.Fatalf("inventory after reconcile: %v, %v; want the kept cluster only", inv, err)
	}
}
