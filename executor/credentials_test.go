package executor_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/platforms/fake"
)

// credsFake is the fake platform with the scoped-credentials role; it
// records the objects it was handed.
type credsFake struct {
	*fake.Platform
	cloudlet *edgeproto.Cloudlet
	cluster  *edgeproto.ClusterInst
	until    time.Time
	revoked  int
}

func (p *credsFake) IssueClusterCredentials(_ context.Context, cl *edgeproto.Cloudlet, ci *edgeproto.ClusterInst, until time.Time) (*executor.ClusterCredentials, error) {
	p.cloudlet, p.cluster, p.until = cl, ci, until
	return &executor.ClusterCredentials{Kubeconfig: "kc", Subject: "tenant", ExpiresAt: until}, nil
}

func (p *credsFake) RevokeClusterCredentials(_ context.Context, cl *edgeproto.Cloudlet, ci *edgeproto.ClusterInst) error {
	p.cloudlet, p.cluster = cl, ci
	p.revoked++
	return nil
}

// TestClusterCredentialsThroughTheEngine: the engine hands the platform
// the cluster and its cloudlet as the host has them; it refuses a
// cluster that is not READY or unknown, and a platform without the role
// (ErrUnsupported); revoking a cluster the host no longer has proceeds
// with the key given.
func TestClusterCredentialsThroughTheEngine(t *testing.T) {
	w := newWorld()
	p := &credsFake{Platform: fake.New(fake.Options{})}
	eng, err := executor.New(w.config(p))
	if err != nil {
		t.Fatal(err)
	}
	ctx := waitCtx(t)
	if !eng.SupportsClusterCredentials() {
		t.Fatal("the engine does not see the platform's credentials role")
	}
	w.cloudlets.Put(cloudlet(edgeproto.TrackedState_TRACKED_STATE_READY))
	w.clusters.Put(cluster("c1", edgeproto.TrackedState_TRACKED_STATE_READY))
	w.clusters.Put(cluster("c2", edgeproto.TrackedState_TRACKED_STATE_CREATING))

	until := time.Now().Add(time.Hour)
	got, err := eng.IssueClusterCredentials(ctx, clusterKey("c1"), until)
	if err != nil || got.Kubeconfig != "kc" || !p.until.Equal(until) {
		t.Fatalf("IssueClusterCredentials: %v, %v (until %v)", got, err, p.until)
	}
	if p.cloudlet.GetAccessVars()["password"] != "s3cret-access" || p.cluster.GetFlavorName() != "fake.medium" {
		t.Errorf("the platform got cloudlet %v and cluster %v, want the host's", p.cloudlet.GetKey(), p.cluster)
	}
	if _, err := eng.IssueClusterCredentials(ctx, clusterKey("c2"), until); !errors.Is(err, executor.ErrClusterNotReady) {
		t.Errorf("a CREATING cluster: %v, want ErrClusterNotReady", err)
	}
	if _, err := eng.IssueClusterCredentials(ctx, clusterKey("none"), until); !errors.Is(err, executor.ErrNotFound) {
		t.Errorf("an unknown cluster: %v, want ErrNotFound", err)
	}

	gone := cluster("gone", edgeproto.TrackedState_TRACKED_STATE_READY)
	if err := eng.RevokeClusterCredentials(ctx, gone); err != nil || p.revoked != 1 || p.cluster.GetKey().GetName() != "gone" ||
		p.cloudlet.GetAccessVars()["password"] != "s3cret-access" {
		t.Fatalf("revoking a cluster the host no longer has: %v (revoked %d, cluster %v)", err, p.revoked, p.cluster.GetKey())
	}

	plain, err := executor.New(w.config(fake.New(fake.Options{})))
	if err != nil {
		t.Fatal(err)
	}
	if plain.SupportsClusterCredentials() {
		t.Error("the plain fake platform claims the credentials role")
	}
	if _, err := plain.IssueClusterCredentials(ctx, clusterKey("c1"), until); !errors.Is(err, executor.ErrUnsupported) {
		t.Errorf("issuing on a platform without the role: %v, want ErrUnsupported", err)
	}
	if err := plain.RevokeClusterCredentials(ctx, gone); !errors.Is(err, executor.ErrUnsupported) {
		t.Errorf("revoking on a platform without the role: %v, want ErrUnsupported", err)
	}
}
