package kubernetes

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/yaml"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
)

// maxManifestObjects bounds the objects of one manifest.
const maxManifestObjects = 100

// A manifest instance's record: a ConfigMap named after the instance that
// lists the resources (group/version/resource, one a line) its manifest
// wrote, so that a later update prunes and a delete finds what a changed
// manifest no longer names. It carries the instance's key and state
// annotations: ListInsts reads manifest instances from it.
const (
	recordSuffix    = "-manifest"
	recordKey       = "resources"
	kindManifest    = "appinst-manifest"
	kindManifestObj = "appinst-object"
)

// manifestObject is one object of a manifest.
type manifestObject struct {
	doc int // 1-based document number
	gvr schema.GroupVersionResource
	u   *unstructured.Unstructured
}

func (o manifestObject) String() string {
	s := o.u.GetKind() + " " + o.u.GetName()
	if ns := o.u.GetNamespace(); ns != "" {
		s = o.u.GetKind() + " " + ns + "/" + o.u.GetName()
	}
	return fmt.Sprintf("%s (document %d)", s, o.doc)
}

// decodeManifest splits a multi-document YAML (or JSON) manifest into
// objects; documents are numbered from 1, empty ones are skipped. A
// document that is not an object with apiVersion, kind and metadata.name
// fails naming its number.
func decodeManifest(manifest string) ([]*unstructured.Unstructured, []int, error) {
	rd := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(manifest)))
	var objs []*unstructured.Unstructured
	var docs []int
	for doc := 1; ; doc++ {
		raw, err := rd.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("document %d: %v", doc, err)
		}
		var m map[string]any
		if err := yaml.Unmarshal(raw, &m); err != nil {
			return nil, nil, fmt.Errorf("document %d: %v", doc, err)
		}
		if len(m) == 0 {
			continue // only comments
		}
		u := &unstructured.Unstructured{Object: m}
		switch {
		case u.GetAPIVersion() == "":
			return nil, nil, fmt.Errorf("document %d: no apiVersion", doc)
		case u.GetKind() == "":
			return nil, nil, fmt.Errorf("document %d: no kind", doc)
		case u.GetName() == "":
			return nil, nil, fmt.Errorf("document %d: %s has no metadata.name", doc, u.GetKind())
		case strings.HasSuffix(u.GetKind(), "List"):
			return nil, nil, fmt.Errorf("document %d: %s: give the objects as documents of their own", doc, u.GetKind())
		}
		if len(objs) == maxManifestObjects {
			return nil, nil, fmt.Errorf("more than %d objects", maxManifestObjects)
		}
		objs = append(objs, u)
		docs = append(docs, doc)
	}
	if len(objs) == 0 {
		return nil, nil, errors.New("no objects")
	}
	return objs, docs, nil
}

// manifestObjects decodes the App's manifest and resolves each object's
// resource through the cluster's discovery. An object of cluster scope or
// of another namespace than ns is refused, naming it.
func manifestObjects(c *conn, app *edgeproto.App, ns string) ([]manifestObject, error) {
	name := executor.KeyString(app.GetKey())
	us, docs, err := decodeManifest(app.GetDeploymentManifest())
	if err != nil {
		return nil, fmt.Errorf("%w: app %s: manifest: %v", executor.ErrBadObject, name, err)
	}
	seen := map[string]int{}
	var out []manifestObject
	for i, u := range us {
		o := manifestObject{doc: docs[i], u: u}
		gvk := u.GroupVersionKind()
		m, err := c.restMapping(gvk)
		if err != nil {
			return nil, fmt.Errorf("%w: app %s: manifest: %s: %v", executor.ErrBadObject, name, o, err)
		}
		if m.Scope.Name() != meta.RESTScopeNameNamespace {
			return nil, fmt.Errorf("%w: app %s: manifest: %s is cluster-scoped; a manifest may only hold objects of its cluster's namespace", executor.ErrBadObject, name, o)
		}
		if got := u.GetNamespace(); got != "" && got != ns {
			return nil, fmt.Errorf("%w: app %s: manifest: %s is in namespace %q; a manifest may only hold objects of its cluster's namespace %q (leave metadata.namespace out)", executor.ErrBadObject, name, o, got, ns)
		}
		o.gvr = m.Resource
		id := o.gvr.String() + "/" + u.GetName()
		if d, dup := seen[id]; dup {
			return nil, fmt.Errorf("%w: app %s: manifest: %s is also document %d", executor.ErrBadObject, name, o, d)
		}
		seen[id] = o.doc
		out = append(out, o)
	}
	return out, nil
}

// restMapping resolves a kind through the cluster's discovery, read again
// once when the kind is unknown (a CRD installed since).
func (c *conn) restMapping(gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	m, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		c.mapper.Reset()
		m, err = c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	if meta.IsNoMatchError(err) {
		return nil, fmt.Errorf("the cluster serves no %s in %s", gvk.Kind, gvk.GroupVersion())
	}
	return m, err
}

func gvrString(g schema.GroupVersionResource) string {
	return g.Group + "/" + g.Version + "/" + g.Resource
}

func parseGVR(s string) (schema.GroupVersionResource, bool) {
	p := strings.Split(s, "/")
	if len(p) != 3 || p[1] == "" || p[2] == "" {
		return schema.GroupVersionResource{}, false
	}
	return schema.GroupVersionResource{Group: p[0], Version: p[1], Resource: p[2]}, true
}

// recordedResources reads the resources a manifest instance's record
// lists (none when it has no record).
func recordedResources(ctx context.Context, c *conn, r appRefs) ([]schema.GroupVersionResource, bool, error) {
	cm, err := c.cs.CoreV1().ConfigMaps(r.ns).Get(ctx, r.name+recordSuffix, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, apiErr(ctx, "reading", gvrConfigMap, r.ns, r.name+recordSuffix, err)
	}
	var out []schema.GroupVersionResource
	for _, l := range strings.Split(cm.Data[recordKey], "\n") {
		if g, ok := parseGVR(l); ok {
			out = append(out, g)
		}
	}
	return out, true, nil
}

// deployManifest applies the App's manifest into the cluster's namespace,
// removes what an earlier version of it wrote and this one no longer
// names, and waits until its Deployments and StatefulSets are ready.
func (p *Platform) deployManifest(ctx context.Context, c *conn, r appRefs, ann map[string]string, app *edgeproto.App, inst *edgeproto.AppInst, pr executor.Progress, update bool) (*edgeproto.AppInstRuntime, error) {
	what := "app instance " + executor.KeyString(inst)
	switch inst.GetPowerState() {
	case edgeproto.PowerState_POWER_STATE_POWER_OFF_REQUESTED, edgeproto.PowerState_POWER_STATE_REBOOT_REQUESTED:
		return nil, fmt.Errorf("%w: %s: power off and reboot of an App given as a manifest", executor.ErrUnsupported, what)
	}
	objs, err := manifestObjects(c, app, r.ns)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	old, hasRecord, err := recordedResources(ctx, c, r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if update && !hasRecord {
		return nil, fmt.Errorf("%s: config map %s/%s: %w", what, r.ns, r.name+recordSuffix, executor.ErrNotFound)
	}
	// The record lists every resource written so far before any is
	// written: a delete then finds all of them.
	all := map[string]bool{}
	for _, g := range old {
		all[gvrString(g)] = true
	}
	now := map[string]bool{}
	for _, o := range objs {
		all[gvrString(o.gvr)] = true
		now[gvrString(o.gvr)] = true
	}
	writeRecord := func(set map[string]bool, state string) error {
		lines := make([]string, 0, len(set))
		for k := range set {
			lines = append(lines, k)
		}
		sort.Strings(lines)
		_, err := apply(ctx, c, gvrConfigMap, r.ns, r.name+recordSuffix, func(cur *unstructured.Unstructured) (runtime.Object, error) {
			if cur != nil && cur.GetAnnotations()[AnnState] == stateReady {
				state = stateReady
			}
			return &corev1.ConfigMap{
				TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
				ObjectMeta: metav1.ObjectMeta{
					Labels:      mergeLabels(r.labels, map[string]string{LabelKind: kindManifest}),
					Annotations: mergeLabels(ann, map[string]string{AnnState: state}),
				},
				Data: map[string]string{recordKey: strings.Join(lines, "\n")},
			}, nil
		})
		return err
	}
	state := stateCreating
	if update {
		state = stateReady
	}
	step(pr, "Applying manifest")
	if err := writeRecord(all, state); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	labels := mergeLabels(r.labels, map[string]string{LabelKind: kindManifestObj})
	written := map[string]bool{}
	gens := map[string]int64{}
	for _, o := range objs {
		u := o.u.DeepCopy()
		// What the API server owns (an object exported from a cluster
		// carries it) is not written.
		for _, f := range []string{"resourceVersion", "uid", "generation", "managedFields", "creationTimestamp", "deletionTimestamp", "ownerReferences", "selfLink"} {
			unstructured.RemoveNestedField(u.Object, "metadata", f)
		}
		u.SetNamespace(r.ns)
		u.SetLabels(mergeLabels(u.GetLabels(), labels))
		u.SetAnnotations(mergeLabels(u.GetAnnotations(), ann))
		if o.gvr == gvrDeployment || o.gvr == gvrStatefulSet {
			want, set, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
			if !set {
				want = 1
			}
			u.SetAnnotations(mergeLabels(u.GetAnnotations(), map[string]string{AnnWantedReplicas: strconv.FormatInt(want, 10)}))
		}
		// The pods of a workload carry the instance's labels too: the
		// readiness wait and the delete find them.
		if hasTemplate(u) {
			l, _, _ := unstructured.NestedStringMap(u.Object, "spec", "template", "metadata", "labels")
			if err := unstructured.SetNestedStringMap(u.Object, mergeLabels(l, labels), "spec", "template", "metadata", "labels"); err != nil {
				return nil, fmt.Errorf("%s: manifest: %s: %v", what, o, err)
			}
		}
		// A Deployment that sets no progress deadline gets the one of
		// the platform's own (see Config.ProgressDeadline).
		if o.gvr == gvrDeployment {
			if _, set, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "progressDeadlineSeconds"); !set {
				if pd := p.progressDeadline(ctx); pd != nil {
					if err := unstructured.SetNestedField(u.Object, int64(*pd), "spec", "progressDeadlineSeconds"); err != nil {
						return nil, fmt.Errorf("%s: manifest: %s: %v", what, o, err)
					}
				}
			}
		}
		out, err := apply(ctx, c, o.gvr, r.ns, u.GetName(), fixed(u))
		if err != nil {
			return nil, fmt.Errorf("%s: manifest: %s: %w", what, o, err)
		}
		written[gvrString(o.gvr)+"/"+u.GetName()] = true
		gens[o.gvr.Resource+"/"+u.GetName()] = out.GetGeneration()
	}
	// Prune what an earlier manifest wrote and this one does not name.
	for k := range all {
		g, _ := parseGVR(k)
		l, err := resourceFor(c, g, r.ns).List(ctx, metav1.ListOptions{LabelSelector: r.sel + "," + LabelKind + "=" + kindManifestObj})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, apiErr(ctx, "listing", g, r.ns, r.sel, err))
		}
		for _, x := range l.Items {
			if !written[k+"/"+x.GetName()] {
				if err := deleteFenced(ctx, c, g, r.ns, x.GetName()); err != nil {
					return nil, fmt.Errorf("%s: %w", what, err)
				}
			}
		}
	}
	pods, err := waitManifest(ctx, c, r, gens, pr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if err := writeRecord(now, stateReady); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	rt := &edgeproto.AppInstRuntime{ContainerIds: containerIDs(pods)}
	if err := addServices(ctx, c, r, rt); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return rt, nil
}

func hasTemplate(u *unstructured.Unstructured) bool {
	_, ok, _ := unstructured.NestedMap(u.Object, "spec", "template")
	return ok
}

// waitManifest waits, by watching, until the manifest's Deployments and
// StatefulSets (gens: "deployments/name" or "statefulsets/name" to the
// generation written) have all their pods of the current template ready.
// A pod that cannot run or a stuck rollout ends it with the cluster's
// reason. It returns the instance's ready pods.
func waitManifest(ctx context.Context, c *conn, r appRefs, gens map[string]int64, pr interface{ Step(string) }) ([]*corev1.Pod, error) {
	var pods []*corev1.Pod
	err := watchInstance(ctx, c, r, "manifest in "+r.ns, pr, func(w watched) (bool, string, error) {
		done, ready, msg, err := manifestState(w.deps, w.stss, w.pods, gens)
		pods = ready
		return done, msg, err
	})
	return pods, err
}

// manifestState reads where the manifest's workloads are.
func manifestState(deps, stss, pods cache.Store, gens map[string]int64) (done bool, ready []*corev1.Pod, msg string, err error) {
	var all []*corev1.Pod
	for _, o := range pods.List() {
		if p := o.(*corev1.Pod); p.DeletionTimestamp == nil {
			all = append(all, p)
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Name < all[j].Name })
	for _, p := range all {
		if err := podFailure(p); err != nil {
			return false, nil, "", err
		}
		if podReady(p) {
			ready = append(ready, p)
		}
	}
	var want, have int32
	pending := 0
	found := map[string]bool{}
	for _, o := range deps.List() {
		d := o.(*appsv1.Deployment)
		gen, ok := gens["deployments/"+d.Name]
		if !ok {
			continue
		}
		found["deployments/"+d.Name] = true
		for _, cond := range observedConditions(d, gen) {
			switch {
			case cond.Type == appsv1.DeploymentProgressing && cond.Status == corev1.ConditionFalse:
				return false, nil, "", fmt.Errorf("%w: deployment %s/%s: %s: %s", ErrRollout, d.Namespace, d.Name, cond.Reason, cond.Message)
			case cond.Type == appsv1.DeploymentReplicaFailure && cond.Status == corev1.ConditionTrue && !transientFailure(cond.Message):
				return false, nil, "", fmt.Errorf("%w: deployment %s/%s: %s: %s", ErrPodFailed, d.Namespace, d.Name, cond.Reason, cond.Message)
			}
		}
		n := int32(1)
		if d.Spec.Replicas != nil {
			n = *d.Spec.Replicas
		}
		st := d.Status
		want += n
		if d.Generation < gen || st.ObservedGeneration < d.Generation {
			pending++
			continue
		}
		have += min(st.ReadyReplicas, n)
		if st.UpdatedReplicas != n || st.Replicas != n || st.ReadyReplicas != n || st.AvailableReplicas != n {
			pending++
		}
	}
	for _, o := range stss.List() {
		s := o.(*appsv1.StatefulSet)
		gen, ok := gens["statefulsets/"+s.Name]
		if !ok {
			continue
		}
		found["statefulsets/"+s.Name] = true
		n := int32(1)
		if s.Spec.Replicas != nil {
			n = *s.Spec.Replicas
		}
		st := s.Status
		want += n
		if s.Generation < gen || st.ObservedGeneration < s.Generation {
			pending++
			continue
		}
		have += min(st.ReadyReplicas, n)
		if st.ReadyReplicas != n || st.Replicas != n || st.UpdatedReplicas != n || (st.UpdateRevision != "" && st.CurrentRevision != st.UpdateRevision) {
			pending++
		}
	}
	for k := range gens {
		if (strings.HasPrefix(k, "deployments/") || strings.HasPrefix(k, "statefulsets/")) && !found[k] {
			pending++
		}
	}
	if pending == 0 {
		return true, ready, fmt.Sprintf("%d/%d pods ready", have, want), nil
	}
	return false, nil, fmt.Sprintf("Waiting for %d/%d pods ready", have, want), nil
}

// containerIDs are pod/container of the pods' containers (the pod alone
// when it reports none), sorted.
func containerIDs(pods []*corev1.Pod) []string {
	var ids []string
	for _, pod := range pods {
		for _, cs := range pod.Status.ContainerStatuses {
			ids = append(ids, pod.Name+"/"+cs.Name)
		}
		if len(pod.Status.ContainerStatuses) == 0 {
			ids = append(ids, pod.Name)
		}
	}
	sort.Strings(ids)
	return ids
}
