package kubernetes

import (
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
)

var (
	gvrNode = schema.GroupVersionResource{Version: "v1", Resource: "nodes"}
	gvrPod  = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
)

// flavorPrefix starts the name of every flavor the platform offers: one
// per node shape, "k8s.node.<vcpus>c.<ram MB>m[.<gpus>g]", so that a name
// alone says what it asks for and needs no state to resolve.
const flavorPrefix = "k8s.node."

// nodeFlavor is the flavor of a node's allocatable resources.
func nodeFlavor(alloc corev1.ResourceList) *edgeproto.FlavorInfo {
	f := &edgeproto.FlavorInfo{
		Vcpus: uint64(max(alloc.Cpu().MilliValue(), 0)) / 1000,
		RamMb: mb(alloc.Memory()),
		Gpus:  uint32(gpus(alloc)),
	}
	if d, ok := alloc[corev1.ResourceEphemeralStorage]; ok {
		f.DiskGb = uint64(max(d.Value(), 0)) / (1 << 30)
	}
	f.Name = fmt.Sprintf("%s%dc.%dm", flavorPrefix, f.Vcpus, f.RamMb)
	if f.Gpus > 0 {
		f.Name += fmt.Sprintf(".%dg", f.Gpus)
	}
	return f
}

// size is what a flavor or a node pool asks for.
type size struct {
	milliCPU int64
	memMB    int64
	gpus     int64
	// Set only by a node pool's exact partition (see poolPartition):
	// memory in bytes (memMB rounds it down), pods, and storage in bytes.
	memBytes, pods, storage int64
}

func (s size) empty() bool {
	return s.milliCPU == 0 && s.memMB == 0 && s.gpus == 0 && s.memBytes == 0 && s.pods == 0 && s.storage == 0
}

func (s size) list() corev1.ResourceList {
	l := corev1.ResourceList{}
	if s.milliCPU > 0 {
		l[corev1.ResourceCPU] = *resource.NewMilliQuantity(s.milliCPU, resource.DecimalSI)
	}
	if s.memBytes > 0 {
		l[corev1.ResourceMemory] = *resource.NewQuantity(s.memBytes, resource.BinarySI)
	} else if s.memMB > 0 {
		l[corev1.ResourceMemory] = *resource.NewQuantity(s.memMB<<20, resource.BinarySI)
	}
	return l
}

// parseFlavor reads a flavor name the platform offers; "" is no flavor.
func parseFlavor(name string) (size, error) {
	if name == "" {
		return size{}, nil
	}
	bad := fmt.Errorf("%w: flavor %q is not one this platform offers (names are %s<vcpus>c.<ram MB>m[.<gpus>g], see the cloudlet's flavors)",
		executor.ErrBadObject, name, flavorPrefix)
	rest, ok := strings.CutPrefix(name, flavorPrefix)
	if !ok {
		return size{}, bad
	}
	parts := strings.Split(rest, ".")
	if len(parts) < 2 || len(parts) > 3 {
		return size{}, bad
	}
	num := func(s, suffix string) (int64, bool) {
		v, ok := strings.CutSuffix(s, suffix)
		if !ok {
			return 0, false
		}
		n, err := strconv.ParseInt(v, 10, 32)
		return n, err == nil && n >= 0
	}
	var s size
	cpu, ok1 := num(parts[0], "c")
	mem, ok2 := num(parts[1], "m")
	if !ok1 || !ok2 {
		return size{}, bad
	}
	s.milliCPU, s.memMB = cpu*1000, mem
	if len(parts) == 3 {
		g, ok := num(parts[2], "g")
		if !ok {
			return size{}, bad
		}
		s.gpus = g
	}
	return s, nil
}

// clusterSize is the quota of a cluster: the sum of its node pools, or one
// node of its flavor when it has no pools.
func clusterSize(ci *edgeproto.ClusterInst) (size, error) {
	if len(ci.GetNodePools()) == 0 {
		return parseFlavor(ci.GetFlavorName())
	}
	var s size
	for _, np := range ci.GetNodePools() {
		r := np.GetNodeResources()
		n := int64(np.GetNumNodes())
		if n == 0 {
			n = 1
		}
		ns := size{milliCPU: int64(r.GetVcpus()) * 1000, memMB: int64(r.GetRamMb())}
		if f := r.GetInfraNodeFlavor(); f != "" && ns.empty() {
			fs, err := parseFlavor(f)
			if err != nil {
				return size{}, fmt.Errorf("node pool %q: %w", np.GetName(), err)
			}
			ns = fs
		}
		ns, err := poolPartition(np, ns)
		if err != nil {
			return size{}, err
		}
		s.milliCPU += n * ns.milliCPU
		s.memMB += n * ns.memMB
		s.gpus += n * ns.gpus
		s.memBytes += n * ns.memBytes
		s.pods += n * ns.pods
		s.storage += n * ns.storage
	}
	return s, nil
}
