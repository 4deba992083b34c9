package executor

import (
	"context"
	"fmt"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
)

// ClusterCredentials are credentials scoped to one ClusterInst: whoever
// holds them may run workloads in that cluster and nothing else. They are
// secrets: never logged, handed only to the cluster's tenant.
type ClusterCredentials struct {
	// Kubeconfig is a kubeconfig (its content) of the cluster's API with
	// the scoped identity's token, its context set to the cluster.
	Kubeconfig string
	// Endpoint is the API server's address (https://host:port).
	Endpoint string
	// Namespace is where the identity may work.
	Namespace string
	// Subject names the identity the credentials authenticate as (for
	// Kubernetes system:serviceaccount:<namespace>:<name>); not a secret.
	Subject string
	// ExpiresAt is when the token stops working, however long the
	// identity lives.
	ExpiresAt time.Time
}

// ClusterCredentialsPlatform is the optional role of a platform that can
// issue and revoke credentials scoped to one ClusterInst, for a tenant
// who uses the cluster directly (a FLUIDOS buyer of a K8Slice with its
// kubeconfig). A platform without it gets ErrUnsupported from the
// Engine's methods.
type ClusterCredentialsPlatform interface {
	// IssueClusterCredentials makes (or adopts) the cluster's scoped
	// identity and returns a new token of it valid at least until until
	// (the platform may round up to its minimum lifetime, and the cluster
	// may cap it: ExpiresAt says). Tokens issued earlier keep working
	// until they expire or the identity is revoked.
	IssueClusterCredentials(ctx context.Context, cloudlet *edgeproto.Cloudlet, cluster *edgeproto.ClusterInst, until time.Time) (*ClusterCredentials, error)
	// RevokeClusterCredentials deletes the cluster's scoped identity, so
	// that every token issued for it stops working; revoking absent
	// credentials succeeds.
	RevokeClusterCredentials(ctx context.Context, cloudlet *edgeproto.Cloudlet, cluster *edgeproto.ClusterInst) error
}

// SupportsClusterCredentials reports whether the engine's platform issues
// scoped cluster credentials (ClusterCredentialsPlatform).
func (e *Engine) SupportsClusterCredentials() bool {
	_, ok := e.cfg.Platform.(ClusterCredentialsPlatform)
	return ok
}

// IssueClusterCredentials issues credentials scoped to the cluster of key,
// valid until at least until, through the platform. The cluster must be
// READY (else ErrClusterNotReady); a platform without the role fails with
// ErrUnsupported. It runs at once, beside the queued operations, bounded
// by the update timeout of a ClusterInst.
func (e *Engine) IssueClusterCredentials(ctx context.Context, key *edgeproto.ClusterKey, until time.Time) (*ClusterCredentials, error) {
	p, err := e.credentialsPlatform(key)
	if err != nil {
		return nil, err
	}
	ci, err := lookup(ctx, e.cfg.Objects.ClusterInsts, "cluster", key)
	if err != nil {
		return nil, err
	}
	if ci.GetState() != edgeproto.TrackedState_TRACKED_STATE_READY {
		return nil, fmt.Errorf("cluster %s is %s: %w", KeyString(key), ci.GetState(), ErrClusterNotReady)
	}
	cloudlet, err := lookup(ctx, e.cfg.Objects.Cloudlets, "cloudlet of cluster", ci.GetCloudletKey())
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, e.timeouts().UpdateClusterInst)
	defer cancel()
	creds, err := p.IssueClusterCredentials(ctx, cloudlet, ci, until)
	if err != nil {
		return nil, fmt.Errorf("issuing credentials of cluster %s: %w", KeyString(key), err)
	}
	e.log.InfoContext(ctx, "cluster credentials issued", "cluster", KeyString(key), "subject", creds.Subject, "expires", creds.ExpiresAt)
	return creds, nil
}

// RevokeClusterCredentials revokes every credential issued for the cluster
// of key through the platform. A cluster the host no longer has is
// revoked by its key alone (with its cloudlet's, which must be known);
// revoking what was never issued succeeds.
func (e *Engine) RevokeClusterCredentials(ctx context.Context, ci *edgeproto.ClusterInst) error {
	p, err := e.credentialsPlatform(ci.GetKey())
	if err != nil {
		return err
	}
	stub := func() *edgeproto.ClusterInst { return ci.Clone() }
	cur, err := dependency(ctx, e.cfg.Objects.ClusterInsts, "cluster", ci.GetKey(), stub)
	if err != nil {
		return err
	}
	cloudlet, err := dependency(ctx, e.cfg.Objects.Cloudlets, "cloudlet of cluster", cur.GetCloudletKey(),
		func() *edgeproto.Cloudlet { return &edgeproto.Cloudlet{Key: cur.GetCloudletKey().Clone()} })
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, e.timeouts().DeleteClusterInst)
	defer cancel()
	if err := p.RevokeClusterCredentials(ctx, cloudlet, cur); err != nil {
		return fmt.Errorf("revoking credentials of cluster %s: %w", KeyString(ci.GetKey()), err)
	}
	e.log.InfoContext(ctx, "cluster credentials revoked", "cluster", KeyString(ci.GetKey()))
	return nil
}

func (e *Engine) credentialsPlatform(key *edgeproto.ClusterKey) (ClusterCredentialsPlatform, error) {
	p, ok := e.cfg.Platform.(ClusterCredentialsPlatform)
	if !ok {
		return nil, fmt.Errorf("credentials of cluster %s: platform %q: %w", KeyString(key), e.features.PlatformType, ErrUnsupported)
	}
	return p, nil
}
