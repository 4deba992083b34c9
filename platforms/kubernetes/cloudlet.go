package kubernetes

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"google.golang.org/protobuf/types/known/timestamppb"
	authv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
)

// Permission is one verb on one resource the platform needs, cluster-wide.
type Permission struct {
	Group, Resource, Verb string
}

func (p Permission) String() string {
	if p.Group == "" {
		return p.Verb + " " + p.Resource
	}
	return p.Verb + " " + p.Group + "/" + p.Resource
}

// Permissions are what InitCloudlet checks the credentials for; the
// ClusterRole in docs/kubernetes-clusterrole.yaml grants exactly these.
var Permissions = func() []Permission {
	var out []Permission
	add := func(group string, resources []string, verbs ...string) {
		for _, r := range resources {
			for _, v := range verbs {
				out = append(out, Permission{group, r, v})
			}
		}
	}
	write := []string{"get", "list", "watch", "create", "patch", "delete"}
	add("", []string{"namespaces", "resourcequotas", "limitranges", "services", "secrets", "configmaps"}, write...)
	add("apps", []string{"deployments", "statefulsets"}, write...)
	add("apps", []string{"replicasets"}, "get", "list", "watch")
	add("networking.k8s.io", []string{"networkpolicies"}, write...)
	add("", []string{"pods", "nodes", "serviceaccounts"}, "get", "list", "watch")
	return out
}()

// InitCloudlet checks that the cluster's API answers and that the
// credentials may do everything the platform does (one
// SelfSubjectAccessReview per verb and resource), failing with an error
// naming what is missing. It creates nothing.
func (p *Platform) InitCloudlet(ctx context.Context, cloudlet *edgeproto.Cloudlet, _ executor.Reservations, pr executor.Progress) error {
	c, err := p.initConn(cloudlet)
	if err != nil {
		return err
	}
	step(pr, "Checking the Kubernetes API")
	v, err := c.cs.Discovery().ServerVersion()
	if err != nil {
		if e := ctxErr(ctx); e != nil {
			return e
		}
		return fmt.Errorf("%w: cloudlet %s: the API server does not answer: %v", ErrAccess, executor.KeyString(cloudlet.GetKey()), err)
	}
	step(pr, "Checking permissions")
	missing, err := checkPermissions(ctx, c)
	if err != nil {
		return err
	}
	if len(missing) > 0 {
		names := make([]string, len(missing))
		for i, m := range missing {
			names[i] = m.String()
		}
		return fmt.Errorf("%w: cloudlet %s: the credentials may not %s (grant the ClusterRole of docs/kubernetes-clusterrole.yaml)",
			ErrForbidden, executor.KeyString(cloudlet.GetKey()), strings.Join(names, ", "))
	}
	p.log.InfoContext(ctx, "cloudlet initialised", "cloudlet", executor.KeyString(cloudlet.GetKey()), "kubernetes", v.GitVersion)
	return nil
}

// checkPermissions returns the Permissions the credentials lack.
func checkPermissions(ctx context.Context, c *conn) ([]Permission, error) {
	var (
		mu       sync.Mutex
		missing  []Permission
		firstErr error
		wg       sync.WaitGroup
	)
	sem := make(chan struct{}, 8)
	for _, perm := range Permissions {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			r, err := c.cs.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authv1.SelfSubjectAccessReview{
				Spec: authv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authv1.ResourceAttributes{
					Group: perm.Group, Resource: perm.Resource, Verb: perm.Verb,
				}},
			}, metav1.CreateOptions{})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				if firstErr == nil {
					firstErr = err
				}
			case !r.Status.Allowed:
				missing = append(missing, perm)
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		if e := ctxErr(ctx); e != nil {
			return nil, e
		}
		return nil, fmt.Errorf("%w: checking permissions: %v", ErrAccess, firstErr)
	}
	slices.SortFunc(missing, func(a, b Permission) int { return strings.Compare(a.String(), b.String()) })
	return missing, nil
}

// CleanupCloudlet forgets the cloudlet's clients. It deletes nothing: the
// cluster and what the engine's deletes left on it are the operator's.
func (p *Platform) CleanupCloudlet(ctx context.Context, cloudlet *edgeproto.Cloudlet, _ executor.Progress) error {
	p.forget(cloudlet.GetKey())
	return nil
}

// Resource names of the snapshot GatherCloudletInfo reports.
const (
	ResourceVCPUs = "vCPUs"
	ResourceRAM   = "RAM"
	ResourcePods  = "Pods"
	ResourceGPUs  = "GPUs"
)

// GatherCloudletInfo reports the cluster's nodes (allocatable and capacity
// of CPU, memory, pods, ephemeral storage and extended resources such as
// GPUs), one flavor per node shape, and a resources snapshot: the requests
// of the pods on the nodes against the nodes' allocatable, the cloudlet's
// quotas, and the cloudlet's clusters.
func (p *Platform) GatherCloudletInfo(ctx context.Context, cloudlet *edgeproto.Cloudlet, info *edgeproto.CloudletInfo) error {
	if info == nil {
		return fmt.Errorf("%w: nil CloudletInfo", executor.ErrBadObject)
	}
	c, err := p.connFor(cloudlet)
	if err != nil {
		return err
	}
	nodes, err := c.cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return apiErr(ctx, "listing", gvrNode, "", "", err)
	}
	pods, err := c.cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "status.phase!=Succeeded,status.phase!=Failed"})
	if err != nil {
		return apiErr(ctx, "listing", gvrPod, "", "", err)
	}
	var total, used corev1.ResourceList = corev1.ResourceList{}, corev1.ResourceList{}
	info.NodeInfos = nil
	shapes := map[string]*edgeproto.FlavorInfo{}
	for _, n := range nodes.Items {
		if n.Spec.Unschedulable {
			continue
		}
		ni := &edgeproto.NodeInfo{Name: n.Name, Allocatable: quantities(n.Status.Allocatable), Capacity: quantities(n.Status.Capacity)}
		for l := range n.Labels {
			if r, ok := strings.CutPrefix(l, "node-role.kubernetes.io/"); ok && r != "" {
				ni.Roles = append(ni.Roles, r)
			}
		}
		sort.Strings(ni.Roles)
		info.NodeInfos = append(info.NodeInfos, ni)
		addList(total, n.Status.Allocatable)
		f := nodeFlavor(n.Status.Allocatable)
		shapes[f.Name] = f
	}
	for _, pod := range pods.Items {
		if pod.Spec.NodeName == "" {
			continue
		}
		for _, ctr := range pod.Spec.Containers {
			addList(used, ctr.Resources.Requests)
		}
		used[corev1.ResourcePods] = *resource.NewQuantity(used.Pods().Value()+1, resource.DecimalSI)
	}
	info.Flavors = nil
	for _, name := range sortedKeys(shapes) {
		info.Flavors = append(info.Flavors, shapes[name])
	}
	quota := map[string]uint64{}
	for _, q := range cloudlet.GetResourceQuotas() {
		quota[q.GetName()] = q.GetValue()
	}
	gpuTotal, gpuUsed := gpus(total), gpus(used)
	snap := &edgeproto.InfraResourcesSnapshot{TakenAt: timestamppb.Now()}
	add := func(name, units string, u, t uint64) {
		snap.Info = append(snap.Info, &edgeproto.InfraResource{Name: name, Used: u, Total: t, Quota: quota[name], Units: units})
	}
	add(ResourceVCPUs, "", milliCeil(used.Cpu())/1000, uint64(total.Cpu().Value()))
	add(ResourceRAM, "MB", mb(used.Memory()), mb(total.Memory()))
	add(ResourcePods, "", uint64(used.Pods().Value()), uint64(total.Pods().Value()))
	if gpuTotal > 0 {
		add(ResourceGPUs, "", gpuUsed, gpuTotal)
	}
	inv, err := p.ListInsts(ctx, cloudlet)
	if err != nil {
		return err
	}
	for _, ci := range inv.Clusters {
		snap.ClusterInsts = append(snap.ClusterInsts, ci.GetKey())
	}
	info.ResourcesSnapshot = snap
	if info.Properties == nil {
		info.Properties = map[string]string{}
	}
	info.Properties["platform"] = PlatformType
	info.Properties["nodes"] = fmt.Sprint(len(info.NodeInfos))
	return nil
}

func quantities(l corev1.ResourceList) map[string]string {
	m := make(map[string]string, len(l))
	for k, v := range l {
		m[string(k)] = v.String()
	}
	return m
}

func addList(dst, src corev1.ResourceList) {
	for k, v := range src {
		q := dst[k]
		q.Add(v)
		dst[k] = q
	}
}

// isGPU tells an extended resource that counts GPUs (nvidia.com/gpu,
// amd.com/gpu, gpu.intel.com/i915...).
func isGPU(name corev1.ResourceName) bool {
	return strings.Contains(string(name), "gpu") || strings.Contains(string(name), "i915")
}

func gpus(l corev1.ResourceList) uint64 {
	var n int64
	for k, v := range l {
		if isGPU(k) {
			n += v.Value()
		}
	}
	return uint64(max(n, 0))
}

func milliCeil(q *resource.Quantity) uint64 { return uint64(max(q.MilliValue(), 0)) + 999 }

func mb(q *resource.Quantity) uint64 { return uint64(max(q.Value(), 0)) / (1 << 20) }

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
