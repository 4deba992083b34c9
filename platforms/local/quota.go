package local

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/internal/quantity"
)

// Annotations of an App that state what each of its instances requests of
// its cluster's quota, as Kubernetes quantities.
const (
	// AnnotationCPU is the CPU an instance requests ("250m", "1").
	AnnotationCPU = "resources.edgekit.io/cpu"
	// AnnotationMemory is the memory an instance requests ("128Mi").
	AnnotationMemory = "resources.edgekit.io/memory"
)

// Optional resources of a node pool (NodeResources.opt_res_map) that size
// a cluster's quota, as Kubernetes quantities. Without them a pool's CPU
// is vcpus cores and its memory ram_mb MiB; pods are limited only when a
// pool names them.
const (
	OptResCPU    = "cpu"
	OptResMemory = "memory"
	OptResPods   = "pods"
)

// quota is what the instances of a cluster may request together: CPU in
// millicores, memory in bytes, and how many instances may exist. 0 is no
// limit.
type quota struct {
	CPU    int64 `json:"cpu_millis,omitempty"`
	Memory int64 `json:"memory_bytes,omitempty"`
	Pods   int64 `json:"pods,omitempty"`
}

func (q *quota) limited() bool { return q != nil && (q.CPU > 0 || q.Memory > 0 || q.Pods > 0) }

// clusterQuota is the quota a cluster's node pools state: the sum over the
// pools of num_nodes (at least 1) times each node's resources. A cluster
// without node pools has none (nil).
func clusterQuota(c *edgeproto.ClusterInst) (*quota, error) {
	var q quota
	for _, np := range c.GetNodePools() {
		n := max(int64(np.GetNumNodes()), 1)
		nr := np.GetNodeResources()
		opt := nr.GetOptResMap()
		cpu, err := optQuantity(np.GetName(), opt, OptResCPU, quantity.CPU, int64(min(nr.GetVcpus(), 1<<40))*1000)
		if err != nil {
			return nil, err
		}
		mem, err := optQuantity(np.GetName(), opt, OptResMemory, quantity.Bytes, int64(min(nr.GetRamMb(), 1<<40))<<20)
		if err != nil {
			return nil, err
		}
		pods, err := optQuantity(np.GetName(), opt, OptResPods, quantity.Count, 0)
		if err != nil {
			return nil, err
		}
		q.CPU += n * cpu
		q.Memory += n * mem
		q.Pods += n * pods
	}
	if !q.limited() {
		return nil, nil
	}
	return &q, nil
}

// optQuantity reads a node pool's optional resource name with parse, or
// returns def when the pool does not name it.
func optQuantity(pool string, opt map[string]string, name string, parse func(string) (int64, error), def int64) (int64, error) {
	s, ok := opt[name]
	if !ok {
		return def, nil
	}
	v, err := parse(s)
	if err != nil {
		return 0, fmt.Errorf("%w: node pool %q: %s %q: %w", ErrInvalidObject, pool, name, s, err)
	}
	return v, nil
}

// requests is what one instance asks of its cluster's quota.
type requests struct{ CPU, Memory int64 }

// appRequests reads the requests an App's annotations state.
func appRequests(app *edgeproto.App) (requests, error) {
	var r requests
	ann := app.GetAnnotations()
	for _, a := range []struct {
		name  string
		parse func(string) (int64, error)
		into  *int64
	}{{AnnotationCPU, quantity.CPU, &r.CPU}, {AnnotationMemory, quantity.Bytes, &r.Memory}} {
		s, ok := ann[a.name]
		if !ok {
			continue
		}
		v, err := a.parse(s)
		if err != nil {
			return requests{}, fmt.Errorf("%w: annotation %s %q: %w", ErrInvalidObject, a.name, s, err)
		}
		*a.into = v
	}
	return r, nil
}

// QuotaError says that an application instance does not fit in what its
// cluster's quota leaves. It matches ErrQuotaExceeded.
type QuotaError struct {
	// Instance and Cluster name the instance and its cluster.
	Instance, Cluster string
	// Resource is "cpu", "memory" or "pods".
	Resource string
	// Requested is what the instance asks, Used what the cluster's other
	// instances hold and Limit the quota (millicores, bytes or a count).
	Requested, Used, Limit int64
}

// Error says what does not fit, in quantities.
func (e *QuotaError) Error() string {
	f := quantity.FormatCount
	switch e.Resource {
	case OptResCPU:
		f = quantity.FormatCPU
	case OptResMemory:
		f = quantity.FormatBytes
	}
	return fmt.Sprintf("%v: application instance %s asks %s %s of cluster %s, which has %s of %s in use",
		ErrQuotaExceeded, e.Instance, f(e.Requested), e.Resource, e.Cluster, f(e.Used), f(e.Limit))
}

// Is matches ErrQuotaExceeded and what it wraps.
func (e *QuotaError) Is(target error) bool { return errors.Is(ErrQuotaExceeded, target) }

// admit checks that inst, asking req, fits in what the quota of its
// cluster leaves once the records of the cluster's other instances are
// counted. It returns a release function that the caller calls once the
// instance's record (holding req) is written: until then no other
// instance of the cluster is admitted, so two creates never both take the
// last share. An unreadable record of another instance fails the check
// (what it holds cannot be counted).
func (p *Platform) admit(ctx context.Context, op appOp, req requests) (func(), error) {
	q := op.quota
	if !q.limited() {
		return func() {}, nil
	}
	for _, need := range []struct {
		name      string
		limit, in int64
		anno      string
	}{{OptResCPU, q.CPU, req.CPU, AnnotationCPU}, {OptResMemory, q.Memory, req.Memory, AnnotationMemory}} {
		if need.limit > 0 && need.in <= 0 {
			return nil, fmt.Errorf("%w: cluster %s has a %s quota: the app of %s must request %s (annotation %s)",
				ErrInvalidObject, op.clusterID, need.name, op.key, need.name, need.anno)
		}
	}
	release, err := p.locks.lock(ctx, op.cluster.mark+"#quota", true)
	if err != nil {
		return nil, err
	}
	used, count, err := p.clusterUse(op)
	if err != nil {
		release()
		return nil, err
	}
	for _, c := range []struct {
		name             string
		limit, in, inUse int64
	}{{OptResCPU, q.CPU, req.CPU, used.CPU}, {OptResMemory, q.Memory, req.Memory, used.Memory}, {OptResPods, q.Pods, 1, count}} {
		if c.limit > 0 && c.inUse+c.in > c.limit {
			release()
			return nil, &QuotaError{Instance: op.key, Cluster: op.clusterID, Resource: c.name, Requested: c.in, Used: c.inUse, Limit: c.limit}
		}
	}
	return release, nil
}

// clusterUse sums the requests recorded by the instances of op's cluster
// other than op's, and counts them.
func (p *Platform) clusterUse(op appOp) (requests, int64, error) {
	dir := filepath.Join(op.cluster.dir, appsDir)
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return requests{}, 0, nil
	}
	if err != nil {
		return requests{}, 0, p.stateErr("listing", err)
	}
	var used requests
	var n int64
	for _, e := range ents {
		if !e.IsDir() || filepath.Join(dir, e.Name()) == op.loc.dir {
			continue
		}
		var rec appRecord
		ok, err := p.readRecord(filepath.Join(dir, e.Name(), appStateFile), &rec)
		if err != nil {
			return requests{}, 0, fmt.Errorf("counting the quota of cluster %s: %w", op.clusterID, err)
		}
		if !ok {
			continue // a create that stopped before its first record: nothing runs
		}
		used.CPU += rec.CPU
		used.Memory += rec.Memory
		n++
	}
	return used, n, nil
}

// String renders a quota for logs ("none" when there is none).
func (q *quota) String() string {
	if !q.limited() {
		return "none"
	}
	return fmt.Sprintf("cpu %s, memory %s, pods %d", quantity.FormatCPU(q.CPU), quantity.FormatBytes(q.Memory), q.Pods)
}

func sameQuota(a, b *quota) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}
