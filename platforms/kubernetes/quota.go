package kubernetes

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
)

// checkCloudletQuota refuses a cluster whose size, with the ResourceQuotas
// of the cloudlet's other namespaces, exceeds the cloudlet's resource
// quotas (vCPUs, RAM in MB), naming the resource. Two creates at once may
// both pass: the quotas of the namespaces are the record, not a lock.
func checkCloudletQuota(ctx context.Context, c *conn, cloudlet *edgeproto.Cloudlet, ns string, sz size) error {
	limits := map[string]uint64{}
	for _, q := range cloudlet.GetResourceQuotas() {
		if q.GetValue() > 0 {
			limits[q.GetName()] = q.GetValue()
		}
	}
	if len(limits) == 0 || sz.empty() {
		return nil
	}
	l, err := c.cs.CoreV1().ResourceQuotas("").List(ctx, metav1.ListOptions{LabelSelector: cloudletSelector(cloudlet.GetKey())})
	if err != nil {
		return apiErr(ctx, "listing", gvrQuota, "", "", err)
	}
	var milliCPU, memMB int64
	for _, q := range l.Items {
		if q.Namespace == ns || q.Name != quotaName {
			continue
		}
		if v, ok := q.Spec.Hard["requests."+corev1.ResourceCPU]; ok {
			milliCPU += v.MilliValue()
		}
		if v, ok := q.Spec.Hard["requests."+corev1.ResourceMemory]; ok {
			memMB += v.Value() >> 20
		}
	}
	check := func(name string, used, want, scale int64) error {
		limit, ok := limits[name]
		if !ok || want == 0 {
			return nil
		}
		if uint64(used+want) > limit*uint64(scale) {
			return fmt.Errorf("%w: %s: the cluster asks for %d, %d of the cloudlet's quota %d is left",
				executor.ErrInsufficientResources, name, want/scale, max(int64(limit)-used/scale, 0), limit)
		}
		return nil
	}
	if err := check(ResourceVCPUs, milliCPU, sz.milliCPU, 1000); err != nil {
		return err
	}
	return check(ResourceRAM, memMB, sz.memMB, 1)
}
