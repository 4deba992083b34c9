package ccrm

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/protobuf/proto"
)

// Fence is what a claim's holder proves its claim with: the claim key and
// its create revision, the fencing token. Revisions only grow, so a newer
// claim of the same object always has a greater token.
type Fence struct {
	Key      string
	Revision int64
}

// Claim is one replica's exclusive right to work on one object: an etcd
// key bound to the replica's session lease. It ends when the replica
// releases it, hands it back, or loses its lease.
type Claim struct {
	// Kind and Key name the object.
	Kind, Key string
	// Fence is the claim's key and token.
	Fence Fence

	session *Session
	ended   atomic.Bool
	// released marks a claim the controller deleted with the report that
	// settled its object (rmv1.ReportInfoRequest.release_claim): there is
	// nothing left to release.
	released atomic.Bool
	// releaseWithReport marks a claim taken for one report (a resources
	// refresh, see resourcesGuard): every report under it asks the
	// controller to release it. Set before the claim is used.
	releaseWithReport bool
	// cloudlet is the object's cloudlet as read with the claim (see
	// claimedCloudlet); set before the operation starts, then only read.
	cloudlet *edgeproto.Cloudlet
	// orphan marks the claim of a reconciliation's removal of what the
	// region no longer has (see reconcileGuard): its reports have no
	// object to apply to and are not sent.
	orphan bool
}

// Valid reports whether the claim is certainly still held: not released
// nor handed back, and the session's lease certainly alive. A holder
// checks it before every platform call and report; the controller's check
// of the fence in the report's transaction is what makes it safe.
func (c *Claim) Valid() bool {
	return c != nil && c.session != nil && !c.ended.Load() && c.session.Alive()
}

// end marks the claim as no longer held by this replica.
func (c *Claim) end() { c.ended.Store(true) }

type claimKey struct{}

// WithClaim returns ctx carrying c: the context of the operation done
// under c, which the CCRM's senders and platform wrapper read.
func WithClaim(ctx context.Context, c *Claim) context.Context {
	if c != nil {
		// Platforms fence at their back end with the host-agnostic
		// executor.Fence (see executor.FenceFrom).
		ctx = executor.WithFence(ctx, executor.Fence{Key: c.Fence.Key, Token: c.Fence.Revision})
	}
	return context.WithValue(ctx, claimKey{}, c)
}

// ClaimFrom returns the claim an operation's context carries.
func ClaimFrom(ctx context.Context) (*Claim, bool) {
	c, ok := ctx.Value(claimKey{}).(*Claim)
	return c, ok && c != nil
}

// FenceFrom returns the fence of the claim an operation's context carries:
// a platform that can fence at its own back end passes it along and
// refuses work under a token older than the newest it has seen for the
// object.
func FenceFrom(ctx context.Context) (Fence, bool) {
	c, ok := ClaimFrom(ctx)
	if !ok {
		return Fence{}, false
	}
	return c.Fence, true
}

// claimedCloudlet serves an operation's lookup of its own cloudlet from
// the read made in the transaction that took its claim (a read under the
// claim, the one the replica chose the cloudlet's engine by), and every
// other lookup from get.
func claimedCloudlet(get executor.Getter[*edgeproto.CloudletKey, *edgeproto.Cloudlet]) executor.Getter[*edgeproto.CloudletKey, *edgeproto.Cloudlet] {
	return executor.GetterFunc[*edgeproto.CloudletKey, *edgeproto.Cloudlet](func(ctx context.Context, key *edgeproto.CloudletKey) (*edgeproto.Cloudlet, error) {
		if c, ok := ClaimFrom(ctx); ok && c.cloudlet != nil && proto.Equal(c.cloudlet.GetKey(), key) {
			return c.cloudlet.Clone(), nil
		}
		return get.Get(ctx, key)
	})
}

// tryClaim creates the claim key of an object bound to the session's
// lease, if no claim of the object exists, and reads the keys of reads in
// the same etcd transaction, after the claim's put: a read made under the
// claim at no round trip of its own. It returns the claim and a value per
// read key (nil for an absent key), or no claim (and no error) when
// another claim holds the object.
func tryClaim(ctx context.Context, cli *clientv3.Client, s *Session, path, kind, key, holder string, reads ...string) (*Claim, []*mvccpb.KeyValue, error) {
	ops := []clientv3.Op{clientv3.OpPut(path, holder, clientv3.WithLease(s.Lease()))}
	for _, k := range reads {
		ops = append(ops, clientv3.OpGet(k))
	}
	resp, err := cli.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(path), "=", 0)).
		Then(ops...).
		Commit()
	if err != nil {
		return nil, nil, fmt.Errorf("ccrm: claim %s %s: %w", kind, key, err)
	}
	if !resp.Succeeded {
		return nil, nil, nil
	}
	if len(resp.Responses) != len(ops) {
		return nil, nil, fmt.Errorf("ccrm: claim %s %s: %d answers to %d requests", kind, key, len(resp.Responses), len(ops))
	}
	kvs := make([]*mvccpb.KeyValue, len(reads))
	for i := range reads {
		if rr := resp.Responses[i+1].GetResponseRange(); rr != nil && len(rr.Kvs) > 0 {
			kvs[i] = rr.Kvs[0]
		}
	}
	// The put is the transaction's only write: the key's create revision
	// is the transaction's revision.
	return &Claim{Kind: kind, Key: key, Fence: Fence{Key: path, Revision: resp.Header.Revision}, session: s}, kvs, nil
}

// release deletes the claim key if it is still this claim's (same create
// revision), and marks the claim ended; a claim the controller deleted
// already (released) costs no request.
func release(ctx context.Context, cli *clientv3.Client, c *Claim) error {
	c.end()
	if c.released.Load() {
		return nil
	}
	_, err := cli.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(c.Fence.Key), "=", c.Fence.Revision)).
		Then(clientv3.OpDelete(c.Fence.Key)).
		Commit()
	if err != nil {
		return fmt.Errorf("ccrm: release claim %s %s: %w", c.Kind, c.Key, err)
	}
	return nil
}
