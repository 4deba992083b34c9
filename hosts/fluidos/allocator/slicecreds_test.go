package allocator_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/hosts/fluidos/allocator"
	"github.com/edgekit/edgekit/hosts/fluidos/provider"
	"github.com/edgekit/edgekit/platforms/fake"
)

// credsPlatform is the fake platform with the scoped-credentials role: it
// records what it issues and revokes, and whether the cluster was still
// there at the revocation.
type credsPlatform struct {
	*fake.Platform
	mu      sync.Mutex
	issued  []time.Time // the until of each issuance
	revoked []bool      // the cluster existed at each revocation
}

var _ executor.ClusterCredentialsPlatform = (*credsPlatform)(nil)

func (p *credsPlatform) IssueClusterCredentials(_ context.Context, _ *edgeproto.Cloudlet, ci *edgeproto.ClusterInst, until time.Time) (*executor.ClusterCredentials, error) {
	if _, ok := p.Cluster(executor.KeyString(ci.GetKey())); !ok {
		return nil, fmt.Errorf("cluster %s: %w", executor.KeyString(ci.GetKey()), executor.ErrNotFound)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.issued = append(p.issued, until)
	return &executor.ClusterCredentials{Kubeconfig: fmt.Sprintf("kubeconfig-%d", len(p.issued)), ExpiresAt: until}, nil
}

func (p *credsPlatform) RevokeClusterCredentials(_ context.Context, _ *edgeproto.Cloudlet, ci *edgeproto.ClusterInst) error {
	_, ok := p.Cluster(executor.KeyString(ci.GetKey()))
	p.mu.Lock()
	defer p.mu.Unlock()
	p.revoked = append(p.revoked, ok)
	return nil
}

func (p *credsPlatform) counts() (issued int, revoked []bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.issued), append([]bool(nil), p.revoked...)
}

// TestSliceKubeconfigLivesWithItsContract: on a platform that issues
// scoped cluster credentials, a slice's purchase is answered with its
// kubeconfig, and its allocation carries a kubeconfig
// whose token outlives the contract's end, issued once however often the
// allocation is checked; renewals that push the end past the token get a
// new one; a restart issues one more; the teardown revokes them while the
// cluster still exists, and the released allocation carries none.
func TestSliceKubeconfigLivesWithItsContract(t *testing.T) {
	t.Parallel()
	plat := &credsPlatform{Platform: fake.New(fake.Options{})}
	const lease = 2 * time.Second
	withCreds := func(a *allocator.Config, p *provider.Config) { a.Platform = plat; p.ContractLease = lease }
	e := newEnv(t, withCreds)
	ctx := ctxT(t)
	c := e.buy(provider.K8SliceFlavorID(seller), slice(1000, 1<<30, 4))
	// The purchase was answered once the slice was made, with its
	// kubeconfig (IssuesKubeconfig); the stored contract holds none.
	if got := c.GetPeeringTargetCredentials().GetKubeconfig(); got != "kubeconfig-1" {
		t.Errorf("the purchase answered kubeconfig %q, want the slice's first", got)
	}
	if stored, err := e.prov.Contract(ctx, c.GetId()); err != nil || stored.GetPeeringTargetCredentials().GetKubeconfig() != "" {
		t.Errorf("the stored contract: %v, holds the kubeconfig: %v", err, stored.GetPeeringTargetCredentials().GetKubeconfig() != "")
	}
	a := e.waitAllocation(c, "ACTIVE with a kubeconfig", func(a *fluidos.Allocation) bool {
		return a.GetStatus().GetState() == fluidos.AllocationState_ALLOCATION_STATE_ACTIVE && a.GetCredentials().GetKubeconfig() != ""
	})
	if a.GetCredentials().GetKubeconfig() != "kubeconfig-1" || a.GetCredentials().GetToken() == "" {
		t.Fatalf("credentials %v, want the first kubeconfig beside the slice's token", a.GetCredentials())
	}
	plat.mu.Lock()
	until := plat.issued[0]
	plat.mu.Unlock()
	if !until.After(a.GetExpirationTime().AsTime()) {
		t.Errorf("the token lasts until %v, not past the contract's end %v", until, a.GetExpirationTime().AsTime())
	}
	// Three more health checks: no new token.
	seen := a.GetStatus().GetLastHealthyTime().AsTime()
	for range 3 {
		a = e.waitAllocation(c, "checked again", func(a *fluidos.Allocation) bool {
			return a.GetStatus().GetLastHealthyTime().AsTime().After(seen)
		})
		seen = a.GetStatus().GetLastHealthyTime().AsTime()
	}
	if n, _ := plat.counts(); n != 1 || a.GetCredentials().GetKubeconfig() != "kubeconfig-1" {
		t.Fatalf("%d tokens issued after three checks (kubeconfig %q), want 1", n, a.GetCredentials().GetKubeconfig())
	}

	// The buyer renews: once the end passes the token's, a new one comes.
	deadline := time.Now().Add(30 * time.Second)
	for a.GetCredentials().GetKubeconfig() == "kubeconfig-1" {
		if time.Now().After(deadline) {
			t.Fatalf("no new kubeconfig after renewals past the token's end: %v", a.GetCredentials().GetKubeconfig())
		}
		if _, err := e.prov.Renew(ctx, "", c.GetId()); err != nil {
			t.Fatal(err)
		}
		a = e.waitAllocation(c, "checked after the renewal", func(a *fluidos.Allocation) bool {
			return a.GetStatus().GetLastHealthyTime().AsTime().After(seen)
		})
		seen = a.GetStatus().GetLastHealthyTime().AsTime()
	}
	n, _ := plat.counts()
	if a.GetCredentials().GetKubeconfig() != fmt.Sprintf("kubeconfig-%d", n) {
		t.Errorf("the allocation carries %q, want the last one issued (%d)", a.GetCredentials().GetKubeconfig(), n)
	}

	// A restart forgets the tokens' lives: one more is issued.
	e.restart(withCreds)
	a = e.waitAllocation(c, "a new kubeconfig after the restart", func(a *fluidos.Allocation) bool {
		return a.GetCredentials().GetKubeconfig() == fmt.Sprintf("kubeconfig-%d", n+1)
	})

	if _, err := e.prov.Release(ctx, "alice", c.GetId(), ""); err != nil {
		t.Fatal(err)
	}
	a = e.waitAllocation(c, "RELEASED", state(fluidos.AllocationState_ALLOCATION_STATE_RELEASED))
	if a.GetCredentials() != nil {
		t.Errorf("the released allocation carries credentials: %v", a.GetCredentials())
	}
	_, revoked := plat.counts()
	if len(revoked) == 0 || !revoked[0] {
		t.Errorf("revocations %v, want one while the cluster existed", revoked)
	}
}
