package allocator

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"sync"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/internal/quantity"
	"github.com/edgekit/edgekit/platforms/local"
)

// provisionSlice makes a K8Slice: a cluster sized to the partition sold
// (its node pool states the CPU, memory and pods, which the platform
// enforces as the cluster's quota), and a token scoped to it, with which
// the buyer runs instances on it through the slice routes.
func (a *Allocator) provisionSlice(ctx context.Context, al *fluidos.Allocation, c *fluidos.Contract) error {
	k := c.GetFlavor().GetK8Slice().GetCharacteristics()
	size := fmt.Sprintf("%s CPU, %s memory, %d pods", quantity.FormatCPU(k.GetCpu()), quantity.FormatBytes(k.GetMemory()), k.GetPods())
	if al.GetStatus().GetState() == fluidos.AllocationState_ALLOCATION_STATE_INACTIVE {
		if _, err := a.phase(ctx, al.GetId(), fluidos.AllocationState_ALLOCATION_STATE_PROVISIONING, "creating the slice's cluster: "+size); err != nil {
			return err
		}
	}
	cluster, err := ensureReady(ctx, a, a.clusterKind(), a.ownCluster(al, slicePools(k)))
	if err != nil {
		return err
	}
	token := al.GetCredentials().GetToken()
	if token == "" {
		token = newToken()
	}
	creds := &fluidos.PeeringTargetCredentials{
		ClusterId: al.GetId(), ClusterName: cluster.GetKey().GetName(), Endpoint: a.cfg.Self.GetIp(), Token: token,
	}
	note, err := a.sliceKubeconfig(ctx, al, cluster, al.GetCredentials(), creds)
	if err != nil {
		return err
	}
	res := &fluidos.AllocationResources{Cluster: cluster.GetKeyString()}
	return a.activate(ctx, al, creds, res, fmt.Sprintf("slice ready (%s): run instances on it at %s with its token%s", size, creds.GetEndpoint(), note))
}

// slicePools size a slice's cluster: one node of the partition, its exact
// CPU, memory and pods in the optional resources the local platform reads
// as the cluster's quota (the Kubernetes platform reads them too, and its
// GPUs and storage), and whole cores, MiB and GiB for platforms that read
// those.
func slicePools(k *fluidos.K8SliceCharacteristics) []*edgeproto.NodePool {
	pools := []*edgeproto.NodePool{{
		Name: "slice", NumNodes: 1,
		NodeResources: &edgeproto.NodeResources{
			Vcpus:  uint64((max(k.GetCpu(), 0) + 999) / 1000),
			RamMb:  uint64(max(k.GetMemory(), 0) >> 20),
			DiskGb: uint64(max(k.GetStorage(), 0) >> 30),
			OptResMap: map[string]string{
				local.OptResCPU:    quantity.FormatCPU(k.GetCpu()),
				local.OptResMemory: quantity.FormatBytes(k.GetMemory()),
				local.OptResPods:   strconv.FormatInt(k.GetPods(), 10),
			},
		},
	}}
	opt := pools[0].NodeResources.OptResMap
	if g := k.GetGpu().GetCores(); g > 0 {
		opt[optResGPU] = strconv.FormatInt(g, 10)
	}
	if st := k.GetStorage(); st > 0 {
		opt[optResStorage] = strconv.FormatInt(st, 10)
	}
	return pools
}

// newToken is 32 random bytes, in hex.
func newToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}

// sliceLock serialises a slice's requests with the start of its teardown.
func (a *Allocator) sliceLock(id string) *sync.Mutex {
	a.mu.Lock()
	defer a.mu.Unlock()
	mu := a.slices[id]
	if mu == nil {
		mu = &sync.Mutex{}
		a.slices[id] = mu
	}
	return mu
}
