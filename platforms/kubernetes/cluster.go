package kubernetes

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	netv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
)

// Names of the objects of a cluster's namespace.
const (
	quotaName      = "edgekit-quota"
	limitRangeName = "edgekit-defaults"
	isolationName  = "edgekit-isolate"
)

// Defaults of the LimitRange: what a container without requests or limits
// gets.
var (
	defaultRequestCPU = resource.MustParse("100m")
	defaultRequestMem = resource.MustParse("64Mi")
	defaultLimitCPU   = resource.MustParse("500m")
	defaultLimitMem   = resource.MustParse("256Mi")
)

// CreateCluster creates (or adopts) the cluster's namespace with its
// ResourceQuota, LimitRange and NetworkPolicies, and marks it ready.
func (p *Platform) CreateCluster(ctx context.Context, cloudlet *edgeproto.Cloudlet, ci *edgeproto.ClusterInst, _ executor.Reservations, pr executor.Progress) error {
	c, err := p.connFor(cloudlet)
	if err != nil {
		return err
	}
	return p.setupCluster(ctx, c, cloudlet, ci, pr, false)
}

// UpdateCluster applies the cluster's quota again; the namespace must
// exist (else the error matches executor.ErrNotFound).
func (p *Platform) UpdateCluster(ctx context.Context, cloudlet *edgeproto.Cloudlet, ci *edgeproto.ClusterInst, _ executor.Reservations, pr executor.Progress) error {
	c, err := p.connFor(cloudlet)
	if err != nil {
		return err
	}
	return p.setupCluster(ctx, c, cloudlet, ci, pr, true)
}

func (p *Platform) setupCluster(ctx context.Context, c *conn, cloudlet *edgeproto.Cloudlet, ci *edgeproto.ClusterInst, pr executor.Progress, update bool) error {
	if err := executor.ValidateKeys(ci); err != nil {
		return err
	}
	if d := ci.GetDeployment(); d != "" && d != "kubernetes" && d != "docker" {
		return fmt.Errorf("%w: cluster %s: deployment %q (a Kubernetes cloudlet runs kubernetes clusters)", executor.ErrUnsupported, executor.KeyString(ci), d)
	}
	sz, err := clusterSize(ci)
	if err != nil {
		return fmt.Errorf("cluster %s: %w", executor.KeyString(ci), err)
	}
	clk, ck := cloudlet.GetKey(), ci.GetKey()
	ns := namespaceName(clk, ck)
	if update {
		got, err := c.cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if apierrors.IsNotFound(err) || (err == nil && got.DeletionTimestamp != nil) {
			return fmt.Errorf("cluster %s: namespace %s: %w", executor.KeyString(ci), ns, executor.ErrNotFound)
		}
		if err != nil {
			return apiErr(ctx, "reading", gvrNamespace, "", ns, err)
		}
	}
	if err := checkCloudletQuota(ctx, c, cloudlet, ns, sz); err != nil {
		return fmt.Errorf("cluster %s: %w", executor.KeyString(ci), err)
	}
	labels := clusterLabels(clk, ck)
	nsObj := func(state string) build {
		return func(cur *unstructured.Unstructured) (runtime.Object, error) {
			if cur != nil && cur.GetDeletionTimestamp() != nil {
				return nil, fmt.Errorf("namespace %s of cluster %s is being deleted: %w", ns, executor.KeyString(ci), executor.ErrConflict)
			}
			if cur != nil && state == stateCreating && cur.GetAnnotations()[AnnState] == stateReady {
				state = stateReady // adopting: stays ready
			}
			a := clusterAnnotations(clk, ck)
			a[AnnState] = state
			return &corev1.Namespace{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
				ObjectMeta: metav1.ObjectMeta{Labels: mergeLabels(labels, map[string]string{LabelKind: kindNS}), Annotations: a},
			}, nil
		}
	}
	if !update {
		step(pr, "Creating namespace")
		if _, err := apply(ctx, c, gvrNamespace, "", ns, nsObj(stateCreating)); err != nil {
			return fmt.Errorf("cluster %s: %w", executor.KeyString(ci), err)
		}
	}
	step(pr, "Setting resource quota")
	hard := corev1.ResourceList{}
	for k, v := range sz.list() {
		hard[corev1.ResourceName("requests."+string(k))] = v
		hard[corev1.ResourceName("limits."+string(k))] = v
	}
	if sz.gpus > 0 {
		hard["requests.nvidia.com/gpu"] = *resource.NewQuantity(sz.gpus, resource.DecimalSI)
	}
	partitionQuota(hard, sz)
	if _, err := apply(ctx, c, gvrQuota, ns, quotaName, fixed(&corev1.ResourceQuota{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ResourceQuota"},
		ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec:       corev1.ResourceQuotaSpec{Hard: hard},
	})); err != nil {
		return fmt.Errorf("cluster %s: %w", executor.KeyString(ci), err)
	}
	// Pods are refused while the quota's usage is not computed yet.
	if err := waitFor(ctx, c, gvrQuota, ns, "", "metadata.name="+quotaName, "to be computed", quotaSynced); err != nil {
		return fmt.Errorf("cluster %s: %w", executor.KeyString(ci), err)
	}
	step(pr, "Setting container defaults")
	if _, err := apply(ctx, c, gvrLimitRange, ns, limitRangeName, fixed(limitRange(labels, sz))); err != nil {
		return fmt.Errorf("cluster %s: %w", executor.KeyString(ci), err)
	}
	step(pr, "Isolating namespace")
	if _, err := apply(ctx, c, gvrNetworkPolicy, ns, isolationName, fixed(&netv1.NetworkPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "NetworkPolicy"},
		ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec: netv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{},
			PolicyTypes: []netv1.PolicyType{netv1.PolicyTypeIngress},
			// Traffic from the namespace's own pods only.
			Ingress: []netv1.NetworkPolicyIngressRule{{From: []netv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{}}}}},
		},
	})); err != nil {
		return fmt.Errorf("cluster %s: %w", executor.KeyString(ci), err)
	}
	if err := p.copyTrustPolicy(ctx, c, cloudlet, ns, labels); err != nil {
		return fmt.Errorf("cluster %s: %w", executor.KeyString(ci), err)
	}
	// Pods are refused until the namespace's default ServiceAccount exists
	// (the cluster's controller makes it): wait for it here, so that an
	// instance's first pods are not.
	step(pr, "Waiting for the namespace's service account")
	if err := waitSome(ctx, c, gvrSA, ns, "", "metadata.name=default"); err != nil {
		return fmt.Errorf("cluster %s: %w", executor.KeyString(ci), err)
	}
	if _, err := apply(ctx, c, gvrNamespace, "", ns, nsObj(stateReady)); err != nil {
		return fmt.Errorf("cluster %s: %w", executor.KeyString(ci), err)
	}
	ci.Resources = &edgeproto.InfraResources{Vms: []*edgeproto.VmInfo{{
		Name: ns, Type: "namespace", Status: "Active", InfraFlavor: ci.GetFlavorName(),
	}}}
	return nil
}

// limitRange gives containers defaults, capped to the cluster's size.
func limitRange(labels map[string]string, sz size) *corev1.LimitRange {
	capq := func(q resource.Quantity, limit int64, milli bool) resource.Quantity {
		if limit <= 0 {
			return q
		}
		var l *resource.Quantity
		if milli {
			l = resource.NewMilliQuantity(limit, resource.DecimalSI)
		} else {
			l = resource.NewQuantity(limit<<20, resource.BinarySI)
		}
		if q.Cmp(*l) > 0 {
			return *l
		}
		return q
	}
	return &corev1.LimitRange{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "LimitRange"},
		ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
			Type: corev1.LimitTypeContainer,
			DefaultRequest: corev1.ResourceList{
				corev1.ResourceCPU:    capq(defaultRequestCPU, sz.milliCPU, true),
				corev1.ResourceMemory: capq(defaultRequestMem, sz.memMB, false),
			},
			Default: corev1.ResourceList{
				corev1.ResourceCPU:    capq(defaultLimitCPU, sz.milliCPU, true),
				corev1.ResourceMemory: capq(defaultLimitMem, sz.memMB, false),
			},
		}}},
	}
}

// DeleteCluster deletes the cluster's namespace (and so everything in it)
// and waits until it is gone; an absent namespace is deleted already.
func (p *Platform) DeleteCluster(ctx context.Context, cloudlet *edgeproto.Cloudlet, ci *edgeproto.ClusterInst, _ executor.Reservations, pr executor.Progress) error {
	c, err := p.connFor(cloudlet)
	if err != nil {
		return err
	}
	ns := namespaceName(cloudlet.GetKey(), ci.GetKey())
	step(pr, "Deleting namespace")
	if err := deleteFenced(ctx, c, gvrNamespace, "", ns); err != nil {
		return fmt.Errorf("cluster %s: %w", executor.KeyString(ci), err)
	}
	step(pr, "Waiting for namespace deletion")
	if err := waitNone(ctx, c, gvrNamespace, "", "", "metadata.name="+ns); err != nil {
		return fmt.Errorf("cluster %s: %w", executor.KeyString(ci), err)
	}
	return nil
}

// fixed is a build that writes obj whatever is there.
func fixed(obj runtime.Object) build {
	return func(*unstructured.Unstructured) (runtime.Object, error) { return obj, nil }
}

func mergeLabels(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// quotaSynced tells that the quota controller computed the usage of the
// (one) quota for its current spec.
func quotaSynced(objs []any) bool {
	if len(objs) != 1 {
		return false
	}
	u := objs[0].(*unstructured.Unstructured)
	spec, _, _ := unstructured.NestedMap(u.Object, "spec", "hard")
	status, _, _ := unstructured.NestedMap(u.Object, "status", "hard")
	used, hasUsed, _ := unstructured.NestedMap(u.Object, "status", "used")
	if len(spec) == 0 {
		return true // nothing to compute: it blocks nothing
	}
	if !hasUsed || len(status) != len(spec) {
		return false
	}
	for k, v := range spec {
		sq, err1 := resource.ParseQuantity(fmt.Sprint(v))
		tq, err2 := resource.ParseQuantity(fmt.Sprint(status[k]))
		if err1 != nil || err2 != nil || sq.Cmp(tq) != 0 {
			return false
		}
		if _, ok := used[k]; !ok {
			return false
		}
	}
	return true
}
