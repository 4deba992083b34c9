package kubernetes

import (
	"context"
	"sort"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
)

// ListInsts reports the cloudlet's clusters (its labelled namespaces) and
// instances (its labelled Deployments, and the records of instances of
// manifests), read from their labels and key
// annotations: READY once their create finished, CREATING before. Each
// instance carries its runtime as it is now (liveState.runtime): the
// containers of its ready pods while all its Deployments and
// StatefulSets are available, and its Services' addresses. A
// namespace being deleted is not listed; an object whose key annotation is
// unreadable is skipped (it is not the platform's).
func (p *Platform) ListInsts(ctx context.Context, cloudlet *edgeproto.Cloudlet) (*executor.Inventory, error) {
	c, err := p.connFor(cloudlet)
	if err != nil {
		return nil, err
	}
	sel := cloudletSelector(cloudlet.GetKey())
	inv := &executor.Inventory{}
	nss, err := c.cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: sel + "," + LabelKind + "=" + kindNS})
	if err != nil {
		return nil, apiErr(ctx, "listing", gvrNamespace, "", "", err)
	}
	nsLive := map[string]bool{}
	for _, ns := range nss.Items {
		if ns.DeletionTimestamp != nil {
			continue
		}
		ck := &edgeproto.ClusterKey{}
		if protojson.Unmarshal([]byte(ns.Annotations[AnnClusterKey]), ck) != nil {
			continue
		}
		nsLive[ns.Name] = true
		inv.Clusters = append(inv.Clusters, &edgeproto.ClusterInst{
			Key: ck, CloudletKey: cloudlet.GetKey().Clone(), Deployment: "kubernetes",
			State:     stateOf(ns.Annotations),
			Resources: &edgeproto.InfraResources{Vms: []*edgeproto.VmInfo{{Name: ns.Name, Type: "namespace", Status: string(ns.Status.Phase)}}},
		})
	}
	deps, err := c.cs.AppsV1().Deployments("").List(ctx, metav1.ListOptions{LabelSelector: sel + "," + LabelKind + "=" + kindApp})
	if err != nil {
		return nil, apiErr(ctx, "listing", gvrDeployment, "", "", err)
	}
	// An App given as a manifest has no Deployment of its own: its
	// record (a ConfigMap) stands for it.
	recs, err := c.cs.CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{LabelSelector: sel + "," + LabelKind + "=" + kindManifest})
	if err != nil {
		return nil, apiErr(ctx, "listing", gvrConfigMap, "", "", err)
	}
	type object struct {
		metav1.ObjectMeta
		recorded []schema.GroupVersionResource // a manifest's record: the resources it wrote
	}
	objs := make([]object, 0, len(deps.Items)+len(recs.Items))
	for _, d := range deps.Items {
		objs = append(objs, object{ObjectMeta: d.ObjectMeta})
	}
	for _, r := range recs.Items {
		o := object{ObjectMeta: r.ObjectMeta}
		for _, l := range strings.Split(r.Data[recordKey], "\n") {
			if g, ok := parseGVR(l); ok {
				o.recorded = append(o.recorded, g)
			}
		}
		objs = append(objs, o)
	}
	live, err := readLive(ctx, c, sel)
	if err != nil {
		return nil, err
	}
	for _, d := range objs {
		if d.DeletionTimestamp != nil || !nsLive[d.Namespace] {
			continue
		}
		ik, ck, ak := &edgeproto.AppInstKey{}, &edgeproto.ClusterKey{}, &edgeproto.AppKey{}
		if protojson.Unmarshal([]byte(d.Annotations[AnnAppInstKey]), ik) != nil ||
			protojson.Unmarshal([]byte(d.Annotations[AnnClusterKey]), ck) != nil ||
			protojson.Unmarshal([]byte(d.Annotations[AnnAppKey]), ak) != nil {
			continue
		}
		inst := &edgeproto.AppInst{Key: ik, AppKey: ak, ClusterKey: ck, CloudletKey: cloudlet.GetKey().Clone(), State: stateOf(d.Annotations)}
		if _, off := d.Annotations[AnnReplicas]; off {
			inst.PowerState = edgeproto.PowerState_POWER_STATE_POWER_OFF
		} else {
			inst.PowerState = edgeproto.PowerState_POWER_STATE_POWER_ON
		}
		if inst.RuntimeInfo, err = live.runtime(ctx, c, d.Namespace, d.Labels[LabelAppInst], d.recorded); err != nil {
			return nil, err
		}
		inv.AppInsts = append(inv.AppInsts, inst)
	}
	sort.Slice(inv.Clusters, func(i, j int) bool { return executor.KeyString(inv.Clusters[i]) < executor.KeyString(inv.Clusters[j]) })
	sort.Slice(inv.AppInsts, func(i, j int) bool { return executor.KeyString(inv.AppInsts[i]) < executor.KeyString(inv.AppInsts[j]) })
	return inv, nil
}

func stateOf(ann map[string]string) edgeproto.TrackedState {
	if ann[AnnState] == stateReady {
		return edgeproto.TrackedState_TRACKED_STATE_READY
	}
	return edgeproto.TrackedState_TRACKED_STATE_CREATING
}
