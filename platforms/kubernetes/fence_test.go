package kubernetes

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/edgekit/edgekit/executor"
)

// TestStaleFenceIsRefused: once a newer claim (fence 20) wrote a cluster's
// objects, a write or delete under an older claim (fence 10) is refused
// and changes nothing.
func TestStaleFenceIsRefused(t *testing.T) {
	env := testEnv(t)
	cs := admin(t, env)
	p := newPlatform(t)
	cl := testCloudlet("fence", env.AdminKubeconfig())
	ci := testCluster(cl, "fenced")
	newer := executor.WithFence(testCtx(t), executor.Fence{Key: "claim", Token: 20})
	older := executor.WithFence(testCtx(t), executor.Fence{Key: "claim", Token: 10})
	t.Cleanup(func() { _ = p.DeleteCluster(newer, cl, ci, nil, &steps{}) })
	if err := p.CreateCluster(newer, cl, ci, nil, &steps{}); err != nil {
		t.Fatal(err)
	}
	ns := namespaceName(cl.GetKey(), ci.GetKey())
	if err := p.UpdateCluster(older, cl, ci, nil, &steps{}); !errors.Is(err, ErrFenced) {
		t.Fatalf("update under an older fence: %v, want ErrFenced", err)
	}
	if err := p.DeleteCluster(older, cl, ci, nil, &steps{}); !errors.Is(err, ErrFenced) {
		t.Fatalf("delete under an older fence: %v, want ErrFenced", err)
	}
	got, err := cs.CoreV1().Namespaces().Get(newer, ns, metav1.GetOptions{})
	if err != nil || got.DeletionTimestamp != nil || got.Annotations[AnnFence] != "20" {
		t.Fatalf("namespace after the stale writes: %v, %v; want it alive with fence 20", got, err)
	}
	// The same fence, and a newer one, may write.
	if err := p.UpdateCluster(newer, cl, ci, nil, &steps{}); err != nil {
		t.Fatal(err)
	}
	newest := executor.WithFence(testCtx(t), executor.Fence{Key: "claim", Token: 30})
	if err := p.UpdateCluster(newest, cl, ci, nil, &steps{}); err != nil {
		t.Fatal(err)
	}
}

// TestFenceCheckAndWriteAreOneStep: a newer claim's write landing between
// a stale writer's check and its write makes the stale write fail its
// resourceVersion precondition; read again, the object refuses it.
func TestFenceCheckAndWriteAreOneStep(t *testing.T) {
	env := testEnv(t)
	p := newPlatform(t)
	cl := testCloudlet("fence-race", env.AdminKubeconfig())
	c, err := p.connFor(cl)
	if err != nil {
		t.Fatal(err)
	}
	ns := "fence-race"
	cm := func(v string) runtime.Object {
		return &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{LabelManagedBy: managedBy}}, Data: map[string]string{"v": v}}
	}
	base := testCtx(t)
	if _, err := apply(base, c, gvrNamespace, "", ns, fixed(&corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}})); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = deleteFenced(testCtx(t), c, gvrNamespace, "", ns) })
	stale := executor.WithFence(base, executor.Fence{Token: 5})
	fresh := executor.WithFence(base, executor.Fence{Token: 7})
	if _, err := apply(stale, c, gvrConfigMap, ns, "obj", fixed(cm("stale-1"))); err != nil {
		t.Fatal(err)
	}
	interleaved := false
	_, err = apply(stale, c, gvrConfigMap, ns, "obj", func(cur *unstructured.Unstructured) (runtime.Object, error) {
		if !interleaved {
			// The stale writer has read (and checked) the object: now
			// the newer claim writes it.
			interleaved = true
			if _, err := apply(fresh, c, gvrConfigMap, ns, "obj", fixed(cm("fresh"))); err != nil {
				return nil, err
			}
		}
		return cm("stale-2"), nil
	})
	if !errors.Is(err, ErrFenced) {
		t.Fatalf("stale write racing a newer one: %v, want ErrFenced", err)
	}
	got, err := c.cs.CoreV1().ConfigMaps(ns).Get(context.Background(), "obj", metav1.GetOptions{})
	if err != nil || got.Data["v"] != "fresh" || got.Annotations[AnnFence] != "7" {
		t.Fatalf("object after the race: %v, %v; want the newer write", got, err)
	}
}
