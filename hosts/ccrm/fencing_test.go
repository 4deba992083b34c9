package ccrm_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/hosts/ccrm"
	"github.com/edgekit/edgekit/hosts/ccrm/ccrmtest"
	"github.com/edgekit/edgekit/hosts/controller"
	"github.com/edgekit/edgekit/hosts/controller/controllertest"
	"github.com/edgekit/edgekit/internal/store"
	"github.com/edgekit/edgekit/platforms/fake"
)

// A replica stopped with SIGSTOP in the middle of a create, for longer than
// its lease, loses its claim: another replica takes the create over and
// finishes it, and when the first resumes nothing it does reaches the
// controller or the platform: the object stays READY, created once.
func TestPausedHolderIsFenced(t *testing.T) {
	t.Parallel()
	r := ccrmtest.NewRegion(t, ccrmtest.RegionOptions{Cloudlets: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	ck := &edgeproto.ClusterKey{Organization: "dev", Name: "paused"}
	key := executor.KeyString(ck)
	claimKey := controller.ClaimKey(r.Env.Store.Prefix(), "ClusterInst", key)
	gate := r.Server.Platform.Pause(fake.OpCreateCluster, key)
	defer gate.Release()

	a := ccrmtest.StartReplica(t, "a", r.ReplicaArgs("a", 2*time.Second), r.TokenEnv())
	if _, err := ccrmtest.Wait(r.Cluster.CreateClusterInst(ctx, &edgeproto.CreateClusterInstRequest{NoWait: true, ClusterInst: &edgeproto.ClusterInst{
		Key: ck, CloudletKey: r.Cloudlets[0], FlavorName: "fake.small", Deployment: "docker"}})); err != nil {
		t.Fatal(err)
	}
	select {
	case <-gate.Reached():
	case <-ctx.Done():
		t.Fatal("replica a never called the platform")
	}
	cli := r.Env.Store.Client()
	claimOf := func() (holder string, rev int64) {
		resp, err := cli.Get(ctx, claimKey)
		if err != nil || len(resp.Kvs) == 0 {
			return "", 0
		}
		return string(resp.Kvs[0].Value), resp.Kvs[0].CreateRevision
	}
	holder, revA := claimOf()
	if holder != "a" {
		t.Fatalf("claim held by %q, want a", holder)
	}
	a.Pause()
	defer a.Resume()
	ccrmtest.StartReplica(t, "b", r.ReplicaArgs("b", 2*time.Second), r.TokenEnv())
	controllertest.WaitFor(t, 30*time.Second, "replica b to take the claim over", func() bool {
		h, rev := claimOf()
		return h == "b" && rev > revA
	})
	gate.Release()
	clusters := store.NewKind[*edgeproto.ClusterInst](r.Env.Store)
	ready := func() bool {
		ci, _, err := clusters.Get(ctx, key)
		return err == nil && ci.State == edgeproto.TrackedState_TRACKED_STATE_READY
	}
	controllertest.WaitFor(t, 30*time.Second, "cluster READY by b", ready)
	infos := store.NewKind[*edgeproto.ClusterInstInfo](r.Env.Store)
	before, infoRev, err := infos.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}

	// a resumes: its lease is gone; it must not report nor call the platform.
	a.Resume()
	controllertest.WaitFor(t, 30*time.Second, "replica a to notice its lost lease", func() bool {
		return strings.Contains(a.Log(), "lease lost")
	})
	// a keeps serving under a new lease: a new cluster gets done (by a or b).
	if _, err := ccrmtest.Wait(r.Cluster.CreateClusterInst(ctx, &edgeproto.CreateClusterInstRequest{ClusterInst: &edgeproto.ClusterInst{
		Key: &edgeproto.ClusterKey{Organization: "dev", Name: "after"}, CloudletKey: r.Cloudlets[0], FlavorName: "fake.small", Deployment: "docker"}})); err != nil {
		t.Fatal(err)
	}
	if !ready() {
		t.Error("the cluster left READY after the paused replica resumed")
	}
	after, infoRev2, err := infos.Get(ctx, key)
	if err != nil || infoRev2 != infoRev || after.State != before.State {
		t.Errorf("the paused replica's report changed the Info (rev %d -> %d, %v, %v)", infoRev, infoRev2, after.GetState(), err)
	}
	if st := r.Server.Platform.Stats(key); st.Created != 1 {
		t.Errorf("platform stats %+v, want exactly one create", st)
	}
	if _, unclaimed := r.Server.Fenced(); unclaimed != 0 {
		t.Errorf("%d platform calls came without a claim", unclaimed)
	}
}

// The platform server refuses a call made under an older claim than the
// newest it saw for the object: a back end fencing by token.
func TestPlatformServerFencesOlderTokens(t *testing.T) {
	t.Parallel()
	srv, err := ccrmtest.NewServer(fake.New(fake.Options{}), executor.NewMemReservations())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	r := ccrmtest.NewRemote(srv.URL())
	cl := &edgeproto.Cloudlet{Key: &edgeproto.CloudletKey{Organization: "op", Name: "s"}}
	ci := &edgeproto.ClusterInst{Key: &edgeproto.ClusterKey{Organization: "dev", Name: "c"}, CloudletKey: cl.Key, FlavorName: "fake.small"}
	under := func(rev int64) context.Context {
		return ccrm.WithClaim(context.Background(), &ccrm.Claim{Fence: ccrm.Fence{Key: "claim", Revision: rev}})
	}
	if err := r.CreateCluster(under(5), cl, ci, nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := r.DeleteCluster(under(3), cl, ci, nil, nil); !errors.Is(err, ccrmtest.ErrFenced) {
		t.Fatalf("a call under an older claim: %v, want ErrFenced", err)
	}
	if _, ok := srv.Platform.Cluster(executor.KeyString(ci)); !ok {
		t.Fatal("a fenced delete removed the cluster")
	}
	if err := r.DeleteCluster(context.Background(), cl, ci, nil, nil); err == nil {
		t.Fatal("a call without a claim was accepted")
	}
	if err := r.DeleteCluster(under(7), cl, ci, nil, nil); err != nil {
		t.Fatalf("a call under a newer claim: %v", err)
	}
	if stale, unclaimed := srv.Fenced(); stale != 1 || unclaimed != 1 {
		t.Errorf("fenced %d stale and %d unclaimed calls, want 1 and 1", stale, unclaimed)
	}
}
