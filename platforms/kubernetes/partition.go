package kubernetes

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
)

// Optional resources of a node pool (NodeResources.opt_res_map) that state
// an exact partition, as Kubernetes quantities: a cluster whose pool names
// any of them gets exactly these in its ResourceQuota, instead of the
// whole cores and MiB of vcpus and ram_mb. The names are those the local
// platform reads for the same purpose ("cpu", "memory", "pods"), plus
// "gpu" (a count) and "storage" (bytes of persistent volume claims).
const (
	OptResCPU     = "cpu"
	OptResMemory  = "memory"
	OptResPods    = "pods"
	OptResGPU     = "gpu"
	OptResStorage = "storage"
)

// poolPartition is base (one node of the pool) with what the pool states
// exactly in its optional resources in place of its rounded values. A
// value that is not a non-negative quantity fails naming the pool and the
// resource.
func poolPartition(np *edgeproto.NodePool, base size) (s size, err error) {
	opt := np.GetNodeResources().GetOptResMap()
	s = base
	read := func(name string, milli bool, cur int64) (int64, error) {
		v, has := opt[name]
		if !has {
			return cur, nil
		}
		q, err := resource.ParseQuantity(v)
		if err != nil || q.Sign() < 0 {
			return 0, fmt.Errorf("%w: node pool %q: optional resource %s=%q is not a non-negative Kubernetes quantity",
				executor.ErrBadObject, np.GetName(), name, v)
		}
		if milli {
			return q.MilliValue(), nil
		}
		return q.Value(), nil
	}
	if s.milliCPU, err = read(OptResCPU, true, s.milliCPU); err != nil {
		return size{}, err
	}
	if s.memBytes, err = read(OptResMemory, false, s.memBytes); err != nil {
		return size{}, err
	}
	if s.pods, err = read(OptResPods, false, s.pods); err != nil {
		return size{}, err
	}
	if s.gpus, err = read(OptResGPU, false, s.gpus); err != nil {
		return size{}, err
	}
	if s.storage, err = read(OptResStorage, false, s.storage); err != nil {
		return size{}, err
	}
	if s.memBytes > 0 {
		s.memMB = s.memBytes >> 20
	}
	return s, nil
}

// partitionQuota adds to a ResourceQuota's hard limits the pods and
// storage of an exact partition.
func partitionQuota(hard corev1.ResourceList, sz size) {
	if sz.pods > 0 {
		hard[corev1.ResourcePods] = *resource.NewQuantity(sz.pods, resource.DecimalSI)
	}
	if sz.storage > 0 {
		hard[corev1.ResourceRequestsStorage] = *resource.NewQuantity(sz.storage, resource.BinarySI)
	}
}
