package provider

import (
	"context"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/protobuf/proto"

	"github.com/edgekit/edgekit/fluidos"
)

// DefaultKubeconfigWait is Config.KubeconfigWait's default: below the
// purchase timeout of edgekit's buyer (30 s), well above the seconds a
// namespace, its quota and policies, a ServiceAccount and a token take.
const DefaultKubeconfigWait = 20 * time.Second

// KubeconfigIssuer is an Allocator whose allocation of some contracts
// hands their buyer a kubeconfig (a K8Slice on a Kubernetes cloudlet: a
// ServiceAccount of the slice's namespace). The provider then answers the
// purchase of such a contract once that kubeconfig exists, with it in the
// contract's peeringTargetCredentials.kubeconfig: a reference buyer reads
// it there, from the purchase answer, and has no other route to it.
type KubeconfigIssuer interface {
	// IssuesKubeconfig reports whether the allocation of a contract of
	// flavor f (as sold) gives its buyer a kubeconfig.
	IssuesKubeconfig(f *fluidos.Flavor) bool
}

// withKubeconfig returns the contract c as answered to the buyer of a
// purchase: when the allocator issues a kubeconfig for it, a copy
// carrying the allocation's kubeconfig, once the allocation has one
// (waiting at most KubeconfigWait for its provisioning). The kubeconfig
// lives in the allocation only (sealed at rest like every secret, dropped
// when it ends): the stored contract never holds it, so that a renewed
// token is what a repeated purchase answers and no other view of the
// contract can show it. c itself is never changed.
func (p *Provider) withKubeconfig(ctx context.Context, c *fluidos.Contract) *fluidos.Contract {
	ki, ok := p.cfg.Allocator.(KubeconfigIssuer)
	if !ok || !ki.IssuesKubeconfig(c.GetFlavor()) {
		return c
	}
	id := AllocationID(c.GetId())
	kc, why := p.allocationKubeconfig(ctx, id)
	if kc == "" {
		p.log.WarnContext(ctx, "purchase answered without the slice's kubeconfig: the buyer reads it from the allocation", "contract", c.GetId(), "reason", why)
		return c
	}
	out := proto.Clone(c).(*fluidos.Contract)
	if out.PeeringTargetCredentials == nil {
		out.PeeringTargetCredentials = &fluidos.PeeringTargetCredentials{}
	}
	out.PeeringTargetCredentials.Kubeconfig = kc
	return out
}

// allocationKubeconfig waits, at most KubeconfigWait and while ctx lasts,
// until allocation id has a kubeconfig, and returns it; "" and why
// (never a secret) when it has none in time or ends without one.
func (p *Provider) allocationKubeconfig(ctx context.Context, id string) (kubeconfig, why string) {
	ctx, cancel := context.WithTimeout(ctx, p.cfg.KubeconfigWait)
	defer cancel()
	a, rev, err := p.allocations.Get(ctx, id)
	if err != nil {
		return "", "reading the allocation: " + err.Error()
	}
	if kc, why, done := kubeconfigOf(a); done {
		return kc, why
	}
	// Every change of the allocation from the one read, until it has a
	// kubeconfig or ends.
	wch := p.cfg.Store.Client().Watch(clientv3.WithRequireLeader(ctx), p.allocations.Path(id), clientv3.WithRev(rev+1))
	for resp := range wch {
		if err := resp.Err(); err != nil {
			return "", "watching the allocation: " + err.Error()
		}
		for _, ev := range resp.Events {
			if ev.Type == clientv3.EventTypeDelete {
				return "", "the allocation was deleted"
			}
			a, err := p.allocations.Decode(id, ev.Kv.Value)
			if err != nil {
				return "", "reading the allocation: " + err.Error()
			}
			if kc, why, done := kubeconfigOf(a); done {
				return kc, why
			}
		}
	}
	if ctx.Err() != nil {
		return "", "not provisioned within " + p.cfg.KubeconfigWait.String()
	}
	return "", "the watch of the allocation ended"
}

// kubeconfigOf is the kubeconfig of an allocation that has one; done
// tells that waiting longer is vain (it has one, or is released or
// failing, with why).
func kubeconfigOf(a *fluidos.Allocation) (kubeconfig, why string, done bool) {
	switch {
	case a.GetReleaseRequested() || Ended(a):
		return "", "the allocation is " + a.GetStatus().GetState().String() + ": " + a.GetStatus().GetMessage(), true
	case a.GetCredentials().GetKubeconfig() != "":
		return a.GetCredentials().GetKubeconfig(), "", true
	}
	return "", "", false
}
