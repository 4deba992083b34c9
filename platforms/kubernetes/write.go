package kubernetes

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"

	"github.com/edgekit/edgekit/executor"
)

// The resources the platform writes.
var (
	gvrNamespace     = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	gvrQuota         = schema.GroupVersionResource{Version: "v1", Resource: "resourcequotas"}
	gvrLimitRange    = schema.GroupVersionResource{Version: "v1", Resource: "limitranges"}
	gvrNetworkPolicy = schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "networkpolicies"}
	gvrDeployment    = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	gvrService       = schema.GroupVersionResource{Version: "v1", Resource: "services"}
	gvrSecret        = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	gvrConfigMap     = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	gvrSA            = schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}

	// appResources are what an instance may own, deleted in this order.
	appResources = []schema.GroupVersionResource{gvrService, gvrDeployment, gvrSecret, gvrConfigMap, gvrNetworkPolicy}
)

// writeAttempts bounds the retries of a write that lost a race on the
// object's resourceVersion.
const writeAttempts = 10

func resourceFor(c *conn, gvr schema.GroupVersionResource, ns string) dynamic.ResourceInterface {
	if ns == "" {
		return c.dyn.Resource(gvr)
	}
	return c.dyn.Resource(gvr).Namespace(ns)
}

// fenceOf reads the fence annotation of an object (0 when absent).
func fenceOf(obj metav1.Object) int64 {
	v, ok := obj.GetAnnotations()[AnnFence]
	if !ok {
		return 0
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// checkFence refuses to write over an object recorded under a newer fence
// than the one ctx carries.
func checkFence(ctx context.Context, gvr schema.GroupVersionResource, cur metav1.Object) error {
	f, ok := executor.FenceFrom(ctx)
	if !ok {
		return nil
	}
	if theirs := fenceOf(cur); theirs > f.Token {
		return fmt.Errorf("%w: %s %s/%s carries fence %d, this write %d", ErrFenced, gvr.Resource, cur.GetNamespace(), cur.GetName(), theirs, f.Token)
	}
	return nil
}

// build makes the object to write from the current one (nil when absent).
type build func(cur *unstructured.Unstructured) (runtime.Object, error)

// apply writes the object build returns, fenced: it reads the object,
// refuses when it records a newer fence, and writes with the
// resourceVersion it read as a precondition (server-side apply, field
// manager "edgekit", or a create when the object is absent, which fails
// when someone created it meanwhile), so that the check and the write are
// one step on the API server; a lost race reads again. It returns the
// object as written.
func apply(ctx context.Context, c *conn, gvr schema.GroupVersionResource, ns, name string, b build) (*unstructured.Unstructured, error) {
	ri := resourceFor(c, gvr, ns)
	for range writeAttempts {
		cur, err := ri.Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			cur = nil
		case err != nil:
			return nil, apiErr(ctx, "reading", gvr, ns, name, err)
		}
		if cur != nil {
			if err := checkFence(ctx, gvr, cur); err != nil {
				return nil, err
			}
		}
		obj, err := b(cur)
		if err != nil {
			return nil, err
		}
		u, err := toApply(ctx, obj)
		if err != nil {
			return nil, err
		}
		u.SetName(name)
		if ns != "" {
			u.SetNamespace(ns)
		}
		var out *unstructured.Unstructured
		if cur == nil {
			out, err = ri.Create(ctx, u, metav1.CreateOptions{FieldManager: FieldManager})
			if apierrors.IsAlreadyExists(err) {
				continue
			}
			if err == nil {
				out, err = ownAsApplier(ctx, ri, out)
			}
		} else {
			u.SetResourceVersion(cur.GetResourceVersion())
			data, jerr := json.Marshal(u.Object)
			if jerr != nil {
				return nil, fmt.Errorf("encoding %s %s: %w", gvr.Resource, name, jerr)
			}
			force := true
			out, err = ri.Patch(ctx, name, types.ApplyPatchType, data, metav1.PatchOptions{FieldManager: FieldManager, Force: &force})
			if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
				continue
			}
		}
		if err != nil {
			return nil, apiErr(ctx, "writing", gvr, ns, name, err)
		}
		return out, nil
	}
	return nil, fmt.Errorf("writing %s %s/%s: %w: the object kept changing (%d attempts)", gvr.Resource, ns, name, executor.ErrConflict, writeAttempts)
}

// toApply turns a typed object into the body of a write: no status, no
// creation timestamp, the fence annotation of ctx.
func toApply(ctx context.Context, obj runtime.Object) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("encoding %T: %w", obj, err)
	}
	u := &unstructured.Unstructured{Object: m}
	delete(u.Object, "status")
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	unstructured.RemoveNestedField(u.Object, "spec", "template", "metadata", "creationTimestamp")
	if f, ok := executor.FenceFrom(ctx); ok {
		a := u.GetAnnotations()
		if a == nil {
			a = map[string]string{}
		}
		a[AnnFence] = strconv.FormatInt(f.Token, 10)
		u.SetAnnotations(a)
	}
	return u, nil
}

// deleteFenced deletes one object (foreground) unless it records a newer
// fence, with its uid and resourceVersion as preconditions; an absent
// object is deleted already.
func deleteFenced(ctx context.Context, c *conn, gvr schema.GroupVersionResource, ns, name string) error {
	ri := resourceFor(c, gvr, ns)
	for range writeAttempts {
		cur, err := ri.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return apiErr(ctx, "reading", gvr, ns, name, err)
		}
		if cur.GetDeletionTimestamp() != nil {
			return nil
		}
		if err := checkFence(ctx, gvr, cur); err != nil {
			return err
		}
		uid, rv := cur.GetUID(), cur.GetResourceVersion()
		// Foreground where there are dependents (a Deployment's
		// ReplicaSets and pods go first); the namespace controller
		// empties a namespace; the others have none.
		fg := metav1.DeletePropagationBackground
		if gvr == gvrDeployment {
			fg = metav1.DeletePropagationForeground
		}
		err = ri.Delete(ctx, name, metav1.DeleteOptions{
			PropagationPolicy: &fg,
			Preconditions:     &metav1.Preconditions{UID: &uid, ResourceVersion: &rv},
		})
		switch {
		case err == nil, apierrors.IsNotFound(err):
			return nil
		case apierrors.IsConflict(err):
			continue
		default:
			return apiErr(ctx, "deleting", gvr, ns, name, err)
		}
	}
	return fmt.Errorf("deleting %s %s/%s: %w: the object kept changing (%d attempts)", gvr.Resource, ns, name, executor.ErrConflict, writeAttempts)
}

// deleteLabelled deletes every object of gvr in ns (all namespaces for a
// cluster-scoped resource) matching selector.
func deleteLabelled(ctx context.Context, c *conn, gvr schema.GroupVersionResource, ns, selector string) error {
	l, err := resourceFor(c, gvr, ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return apiErr(ctx, "listing", gvr, ns, selector, err)
	}
	for _, o := range l.Items {
		if err := deleteFenced(ctx, c, gvr, o.GetNamespace(), o.GetName()); err != nil {
			return err
		}
	}
	return nil
}

// waitNone waits, by watching, until no object of gvr in ns matches the
// label and field selectors.
func waitNone(ctx context.Context, c *conn, gvr schema.GroupVersionResource, ns, labels, fields string) error {
	return waitCount(ctx, c, gvr, ns, labels, fields, false)
}

// waitSome waits, by watching, until an object of gvr in ns matches the
// label and field selectors.
func waitSome(ctx context.Context, c *conn, gvr schema.GroupVersionResource, ns, labels, fields string) error {
	return waitCount(ctx, c, gvr, ns, labels, fields, true)
}

func waitCount(ctx context.Context, c *conn, gvr schema.GroupVersionResource, ns, labels, fields string, some bool) error {
	what := "to be gone"
	if some {
		what = "to appear"
	}
	return waitFor(ctx, c, gvr, ns, labels, fields, what, func(objs []any) bool { return (len(objs) > 0) == some })
}

// waitFor waits, by watching, until cond holds of the objects of gvr in ns
// that match the label and field selectors (what says what is waited for,
// in errors).
func waitFor(ctx context.Context, c *conn, gvr schema.GroupVersionResource, ns, labels, fields, what string, cond func(objs []any) bool) error {
	ri := resourceFor(c, gvr, ns)
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.LabelSelector, o.FieldSelector = labels, fields
			return ri.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.LabelSelector, o.FieldSelector = labels, fields
			return ri.Watch(ctx, o)
		},
	}
	var store cache.Store
	_, err := watchtools.UntilWithSync(ctx, lw, &unstructured.Unstructured{}, func(s cache.Store) (bool, error) {
		store = s
		return cond(s.List()), nil
	}, func(watch.Event) (bool, error) {
		return store != nil && cond(store.List()), nil
	})
	if err != nil {
		if e := ctxErr(ctx); e != nil {
			return fmt.Errorf("waiting for %s %s %s: %w", gvr.Resource, ns, what, e)
		}
		return fmt.Errorf("waiting for %s %s %s: %w", gvr.Resource, ns, what, err)
	}
	return nil
}

// apiErr wraps an API error with what was done; a context error becomes
// the engine's sentinel.
func apiErr(ctx context.Context, doing string, gvr schema.GroupVersionResource, ns, name string, err error) error {
	if e := ctxErr(ctx); e != nil {
		return fmt.Errorf("%s %s %s/%s: %w", doing, gvr.Resource, ns, name, e)
	}
	if apierrors.IsForbidden(err) {
		return fmt.Errorf("%s %s %s/%s: %w: %v", doing, gvr.Resource, ns, name, ErrForbidden, err)
	}
	return fmt.Errorf("%s %s %s/%s: %w", doing, gvr.Resource, ns, name, err)
}

// ownAsApplier turns the field ownership a create recorded (manager
// "edgekit", operation Update) into the apply ownership of the same
// manager, so that later applies remove what they no longer list. It is a
// fenced write with the object's resourceVersion as precondition, read
// again when a controller changed the object meanwhile.
func ownAsApplier(ctx context.Context, ri dynamic.ResourceInterface, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	for range writeAttempts {
		mf := obj.GetManagedFields()
		changed := false
		for i := range mf {
			if mf[i].Manager == FieldManager && mf[i].Operation == metav1.ManagedFieldsOperationUpdate {
				mf[i].Operation = metav1.ManagedFieldsOperationApply
				changed = true
			}
		}
		if !changed {
			return obj, nil
		}
		if err := checkFence(ctx, schema.GroupVersionResource{Resource: obj.GetKind()}, obj); err != nil {
			return nil, err
		}
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"managedFields": mf, "resourceVersion": obj.GetResourceVersion()}})
		if err != nil {
			return nil, err
		}
		out, err := ri.Patch(ctx, obj.GetName(), types.MergePatchType, patch, metav1.PatchOptions{FieldManager: FieldManager + "-ownership"})
		if err == nil {
			return out, nil
		}
		if !apierrors.IsConflict(err) {
			return nil, fmt.Errorf("taking apply ownership of %s %s/%s: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
		}
		// A controller wrote the object meanwhile (a Deployment's status):
		// read it again.
		if obj, err = ri.Get(ctx, obj.GetName(), metav1.GetOptions{}); err != nil {
			return nil, fmt.Errorf("taking apply ownership of %s %s: %w", obj.GetNamespace(), obj.GetName(), err)
		}
	}
	return obj, nil
}
