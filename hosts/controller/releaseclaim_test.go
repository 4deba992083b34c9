package controller_test

import (
	"testing"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/hosts/controller"
	rmv1 "github.com/edgekit/edgekit/proto/edgekit/rm/v1"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// A CCRM's report that settles its object, sent with release_claim,
// deletes the claim in the report's own transaction (the claimant is told,
// and sends no release of its own); a report that does not settle the
// object, or that comes under a stale token, leaves the claim alone.
func TestSettlingReportReleasesTheClaim(t *testing.T) {
	t.Parallel()
	env, ck, _ := noHost(t, false)
	ctx := testCtx(t)
	cli := env.Store.Client()
	reports := rmv1.NewReportServiceClient(env.Conn(env.CCRMToken()))
	key := (&edgeproto.ClusterInst{Key: ck}).GetKeyString()
	claim := controller.ClaimKey(env.Store.Prefix(), "ClusterInst", key)
	put, err := cli.Put(ctx, claim, "replica-1")
	if err != nil {
		t.Fatal(err)
	}
	token := put.Header.Revision
	report := func(s edgeproto.TrackedState, rev int64) *rmv1.ReportInfoResponse {
		t.Helper()
		resp, err := reports.ReportInfo(ctx, &rmv1.ReportInfoRequest{
			Info:   &rmv1.ReportInfoRequest_ClusterInstInfo{ClusterInstInfo: &edgeproto.ClusterInstInfo{Key: ck, State: s}},
			Fields: []string{edgeproto.ClusterInstInfoFieldKey, edgeproto.ClusterInstInfoFieldState},
			Fence:  &rmv1.Fence{Key: claim, Revision: rev}, ReleaseClaim: true})
		if err != nil {
			t.Fatalf("report %v: %v", s, err)
		}
		return resp
	}
	claimHeld := func() bool {
		t.Helper()
		resp, err := cli.Get(ctx, claim)
		if err != nil {
			t.Fatal(err)
		}
		return len(resp.Kvs) == 1 && resp.Kvs[0].CreateRevision == token
	}
	if resp := report(edgeproto.TrackedState_TRACKED_STATE_CREATING, token); !resp.GetApplied() || resp.GetClaimReleased() || !claimHeld() {
		t.Fatalf("CREATING: %v, claim held %v: want applied, the claim kept", resp, claimHeld())
	}
	if resp := report(edgeproto.TrackedState_TRACKED_STATE_READY, token+1000); resp.GetApplied() || resp.GetClaimReleased() || !claimHeld() {
		t.Fatalf("READY under another token: %v, claim held %v: want not applied, the claim kept", resp, claimHeld())
	}
	if resp := report(edgeproto.TrackedState_TRACKED_STATE_READY, token); !resp.GetApplied() || !resp.GetClaimReleased() || claimHeld() {
		t.Fatalf("READY: %v, claim held %v: want applied, the claim released", resp, claimHeld())
	}
	if got := clusterState(t, env, ck); got != edgeproto.TrackedState_TRACKED_STATE_READY {
		t.Fatalf("cluster %v, want READY", got)
	}
	// One transaction: the claim was there just before the Info's write.
	info, err := cli.Get(ctx, env.Store.Prefix(), clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		t.Fatal(err)
	}
	var infoRev int64
	for _, kv := range info.Kvs {
		if string(kv.Key) != claim && kv.ModRevision > infoRev {
			infoRev = kv.ModRevision
		}
	}
	before, err := cli.Get(ctx, claim, clientv3.WithRev(infoRev-1))
	if err != nil {
		t.Fatal(err)
	}
	if len(before.Kvs) != 1 {
		t.Fatalf("the claim was gone before the report's write at revision %d", infoRev)
	}
	// A claim taken for one report that changes no state of the object
	// at rest (a resources snapshot) goes with it too.
	if put, err = cli.Put(ctx, claim, "replica-1"); err != nil {
		t.Fatal(err)
	}
	token = put.Header.Revision
	resp, err := reports.ReportInfo(ctx, &rmv1.ReportInfoRequest{
		Info:   &rmv1.ReportInfoRequest_ClusterInstInfo{ClusterInstInfo: &edgeproto.ClusterInstInfo{Key: ck, Resources: &edgeproto.InfraResources{}}},
		Fields: []string{edgeproto.ClusterInstInfoFieldKey, edgeproto.ClusterInstInfoFieldResources},
		Fence:  &rmv1.Fence{Key: claim, Revision: token}, ReleaseClaim: true})
	if err != nil || !resp.GetApplied() || !resp.GetClaimReleased() || claimHeld() {
		t.Fatalf("a report without a state on a READY object: %v %v, claim held %v: want applied, the claim released", resp, err, claimHeld())
	}
}
