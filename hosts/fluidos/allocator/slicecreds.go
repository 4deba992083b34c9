package allocator

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/hosts/fluidos/provider"
)

// Optional resources of a slice's node pool that the local platform does
// not read and the Kubernetes platform puts into the namespace's quota
// (platforms/kubernetes OptResGPU and OptResStorage).
const (
	optResGPU     = "gpu"
	optResStorage = "storage"
)

// sliceTokens remembers, by allocation, when the token of the kubeconfig
// handed to the buyer was issued and until when it works. It is memory
// only: after a restart the allocator issues a new token once (the
// earlier ones keep working until they expire or the release revokes
// them).
type sliceTokens struct {
	mu sync.Mutex
	m  map[string]tokenLife
}

type tokenLife struct{ issued, expires time.Time }

// due tells whether the token of a slice whose contract ends at end must
// be replaced: none is known, or it expires before end and half its life
// is gone (so that a cluster that caps token lifetimes below the
// contract's gets a new token every half lifetime, not at every check).
func (l tokenLife) due(now, end time.Time) bool {
	if l.expires.IsZero() {
		return true
	}
	return l.expires.Before(end) && l.expires.Sub(now) < l.expires.Sub(l.issued)/2
}

func (s *sliceTokens) get(id string) tokenLife {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[id]
}

func (s *sliceTokens) set(id string, l tokenLife) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]tokenLife{}
	}
	s.m[id] = l
}

func (s *sliceTokens) forget(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, id)
}

// clusterDeployment is the deployment of the clusters the allocator makes:
// "kubernetes" on a platform whose cloudlet is one Kubernetes cluster (a
// namespace), "process" elsewhere (the local platform).
func (a *Allocator) clusterDeployment() string {
	if a.cfg.Platform.Features().IsSingleKubernetesCluster {
		return "kubernetes"
	}
	return "process"
}

// sliceKubeconfig sets creds.Kubeconfig to a kubeconfig scoped to the
// slice's cluster when the platform issues such credentials (a Kubernetes
// cloudlet: a ServiceAccount of the slice's namespace), through the
// engine. The one the allocation carries (prev) is kept while its token
// outlives the contract; a new token is issued when renewals pushed the
// contract's end past it (see tokenLife.due), and once after a restart.
// It returns a note for the buyer ("" when the platform issues none).
func (a *Allocator) sliceKubeconfig(ctx context.Context, al *fluidos.Allocation, cluster *edgeproto.ClusterInst, prev, creds *fluidos.PeeringTargetCredentials) (string, error) {
	if !a.eng.SupportsClusterCredentials() {
		return "", nil
	}
	now, end := time.Now(), al.GetExpirationTime().AsTime()
	if prev.GetKubeconfig() != "" && !a.tokens.get(al.GetId()).due(now, end) {
		creds.Kubeconfig = prev.GetKubeconfig()
		return "; its kubeconfig (credentials) works in the slice's namespace", nil
	}
	// Twice the time left: renewals keep the contract going for a while
	// before the next token is needed (the platform may round the lifetime
	// up: ten minutes at least on Kubernetes). The release that follows
	// the end revokes it anyway.
	cc, err := a.eng.IssueClusterCredentials(ctx, cluster.GetKey(), end.Add(max(end.Sub(now), 0)))
	if err != nil {
		return "", fmt.Errorf("issuing the slice's kubeconfig: %w", err)
	}
	a.tokens.set(al.GetId(), tokenLife{issued: now, expires: cc.ExpiresAt})
	creds.Kubeconfig = cc.Kubeconfig
	return "; its kubeconfig (credentials) works in the slice's namespace", nil
}

// revokeSlice revokes every kubeconfig issued for an allocation's slice,
// through the engine, before its cluster is deleted: its tokens stop
// working at once, whatever the namespace's deletion takes.
func (a *Allocator) revokeSlice(ctx context.Context, al *fluidos.Allocation) error {
	if al.GetFlavorType() != fluidos.FlavorType_FLAVOR_TYPE_K8SLICE || !a.eng.SupportsClusterCredentials() {
		return nil
	}
	ci := clusterKey(al)
	ci.CloudletKey = a.cloudlet.GetKey()
	if err := a.eng.RevokeClusterCredentials(ctx, ci); err != nil {
		return fmt.Errorf("revoking the slice's kubeconfig: %w", err)
	}
	a.tokens.forget(al.GetId())
	return nil
}

var _ provider.KubeconfigIssuer = (*Allocator)(nil)

// IssuesKubeconfig reports whether the allocation of a contract of flavor
// f gives its buyer a kubeconfig: a K8Slice, on a platform that issues
// credentials scoped to a cluster (a Kubernetes cloudlet). It implements
// provider.KubeconfigIssuer: the purchase of such a slice is answered with
// its kubeconfig, so the slice is made (namespace, quota, policies,
// ServiceAccount, token) between the purchase and its answer.
func (a *Allocator) IssuesKubeconfig(f *fluidos.Flavor) bool {
	return fluidos.FlavorTypeOf(f) == fluidos.FlavorType_FLAVOR_TYPE_K8SLICE && a.eng.SupportsClusterCredentials()
}
