package kubernetes

import (
	"context"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/edgekit/edgekit/edgeproto"
)

var gvrStatefulSet = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "statefulsets"}

// liveState is what runs of a cloudlet's instances, by instance label
// (LabelAppInst): their ready pods and whether each of their Deployments
// and StatefulSets is available.
type liveState struct {
	ready       map[string][]*corev1.Pod
	unavailable map[string]bool
	workloads   map[string]map[string]bool // instance: "deployments", "statefulsets" it has
}

// readLive lists the pods, Deployments and StatefulSets of the cloudlet
// whose label selector is sel (one list of each).
func readLive(ctx context.Context, c *conn, sel string) (*liveState, error) {
	l := &liveState{ready: map[string][]*corev1.Pod{}, unavailable: map[string]bool{}, workloads: map[string]map[string]bool{}}
	pods, err := c.cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, apiErr(ctx, "listing", gvrPod, "", sel, err)
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if id := p.Labels[LabelAppInst]; id != "" && p.DeletionTimestamp == nil && podReady(p) {
			l.ready[id] = append(l.ready[id], p)
		}
	}
	deps, err := c.cs.AppsV1().Deployments("").List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, apiErr(ctx, "listing", gvrDeployment, "", sel, err)
	}
	for _, d := range deps.Items {
		l.workload(d.ObjectMeta, "deployments", d.Spec.Replicas, d.Status.AvailableReplicas)
	}
	stss, err := c.cs.AppsV1().StatefulSets("").List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, apiErr(ctx, "listing", gvrStatefulSet, "", sel, err)
	}
	for _, s := range stss.Items {
		l.workload(s.ObjectMeta, "statefulsets", s.Spec.Replicas, s.Status.ReadyReplicas)
	}
	return l, nil
}

// workload records one Deployment or StatefulSet of an instance: it is
// available when it is not being deleted, is not scaled below what its
// manifest asks (AnnWantedReplicas), and as many of its pods are
// available as it wants.
func (l *liveState) workload(m metav1.ObjectMeta, resource string, replicas *int32, available int32) {
	id := m.Labels[LabelAppInst]
	if id == "" {
		return
	}
	if l.workloads[id] == nil {
		l.workloads[id] = map[string]bool{}
	}
	l.workloads[id][resource] = true
	want := int32(1)
	if replicas != nil {
		want = *replicas
	}
	wanted := int64(want)
	if a, ok := m.Annotations[AnnWantedReplicas]; ok {
		if n, err := strconv.ParseInt(a, 10, 32); err == nil {
			wanted = n
		}
	}
	if m.DeletionTimestamp != nil || int64(want) < wanted || int64(available) < max(int64(want), wanted) {
		l.unavailable[id] = true
	}
}

// runtime is what ListInsts reports as an instance's runtime: the
// containers of its ready pods while every one of its Deployments and
// StatefulSets is available, none otherwise (a workload scaled down,
// whose pods are gone or not ready, or deleted: recorded names the
// resources a manifest instance wrote, so a workload that vanished
// counts), and the addresses of its Services. A health check that reads
// it sees an instance that stopped after its create.
func (l *liveState) runtime(ctx context.Context, c *conn, ns, id string, recorded []schema.GroupVersionResource) (*edgeproto.AppInstRuntime, error) {
	rt := &edgeproto.AppInstRuntime{}
	up := !l.unavailable[id]
	for _, g := range recorded {
		if (g == gvrDeployment || g == gvrStatefulSet) && !l.workloads[id][g.Resource] {
			up = false
		}
	}
	if up {
		rt.ContainerIds = containerIDs(l.ready[id])
	}
	r := appRefs{ns: ns, sel: LabelManagedBy + "=" + managedBy + "," + LabelAppInst + "=" + id}
	if err := addServices(ctx, c, r, rt); err != nil {
		return nil, err
	}
	return rt, nil
}
