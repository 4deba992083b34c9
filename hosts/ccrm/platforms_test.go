package ccrm_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/hosts/ccrm"
	"github.com/edgekit/edgekit/hosts/ccrm/ccrmtest"
	"github.com/edgekit/edgekit/hosts/controller/controllertest"
	"github.com/edgekit/edgekit/platforms/fake"
	rmv1 "github.com/edgekit/edgekit/proto/edgekit/rm/v1"
	"google.golang.org/protobuf/types/known/durationpb"
)

// startReplica runs an in-process replica of the region until the test
// ends.
func startReplica(t *testing.T, r *ccrmtest.Region, cfg ccrm.Config) *ccrm.Replica {
	t.Helper()
	cfg.Store = r.Env.Store
	cfg.Reports = rmv1.NewReportServiceClient(r.Env.Conn(r.Env.CCRMToken()))
	if cfg.LeaseTTL == 0 {
		cfg.LeaseTTL = 2 * time.Second
	}
	cfg.DrainTimeout = time.Second
	rep, err := ccrm.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = rep.Start(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return rep
}

// One replica serves cloudlets of several platform types, each cloudlet on
// the platform its platform_type names; when a cloudlet changes, its
// platform is built again from the new cloudlet.
func TestOneReplicaServesSeveralPlatforms(t *testing.T) {
	t.Parallel()
	r := ccrmtest.NewRegion(t, ccrmtest.RegionOptions{Cloudlets: 1})
	other, err := ccrmtest.NewServer(fake.New(fake.Options{}), r.Reservations)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = other.Close() })
	startReplica(t, r, ccrm.Config{ReplicaID: "multi"})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	// A cloudlet of the in-process fake platform, brought up by the replica.
	local := &edgeproto.CloudletKey{Organization: "op", Name: "plain"}
	p, err := ccrmtest.Wait(r.Cloudlet.CreateCloudlet(ctx, &edgeproto.CreateCloudletRequest{Cloudlet: &edgeproto.Cloudlet{
		Key: local, PlatformType: fake.Name}}))
	if err != nil || p.State != edgeproto.TrackedState_TRACKED_STATE_READY {
		t.Fatalf("create fake cloudlet: %v %v", p, err)
	}
	cluster := func(name string, cl *edgeproto.CloudletKey) string {
		t.Helper()
		ck := &edgeproto.ClusterKey{Organization: "dev", Name: name}
		p, err := ccrmtest.Wait(r.Cluster.CreateClusterInst(ctx, &edgeproto.CreateClusterInstRequest{ClusterInst: &edgeproto.ClusterInst{
			Key: ck, CloudletKey: cl, FlavorName: "fake.small", Deployment: "docker"}}))
		if err != nil || p.State != edgeproto.TrackedState_TRACKED_STATE_READY {
			t.Fatalf("cluster %s: %v %v", name, p, err)
		}
		return executor.KeyString(ck)
	}
	onRemote := cluster("on-remote", r.Cloudlets[0])
	onFake := cluster("on-fake", local)
	if st := r.Server.Platform.Stats(onRemote); st.Created != 1 {
		t.Errorf("cluster of the fake-remote cloudlet: server stats %+v, want one create", st)
	}
	if st := r.Server.Platform.Stats(onFake); st.Created != 0 {
		t.Errorf("cluster of the fake cloudlet reached the remote platform: %+v", st)
	}

	// The remote cloudlet moves to another server: its platform is rebuilt.
	moved := r.RemoteCloudlet(r.Cloudlets[0])
	moved.EnvVars[ccrmtest.PropURL] = other.URL()
	p, err = ccrmtest.Wait(r.Cloudlet.UpdateCloudlet(ctx, &edgeproto.UpdateCloudletRequest{Cloudlet: moved,
		Fields: []string{edgeproto.CloudletFieldEnvVars}}))
	if err != nil || p.State != edgeproto.TrackedState_TRACKED_STATE_READY {
		t.Fatalf("update cloudlet: %v %v", p, err)
	}
	after := cluster("after-move", r.Cloudlets[0])
	if st := other.Platform.Stats(after); st.Created != 1 {
		t.Errorf("cluster created after the cloudlet changed: new server stats %+v, want one create", st)
	}
	if st := r.Server.Platform.Stats(after); st.Created != 0 {
		t.Errorf("cluster created after the cloudlet changed reached the old platform: %+v", st)
	}
}

// A replica serves only the platform types it is given: a cloudlet of
// another type is left to other replicas.
func TestReplicaServesOnlyItsPlatforms(t *testing.T) {
	t.Parallel()
	r := ccrmtest.NewRegion(t, ccrmtest.RegionOptions{Cloudlets: 1})
	fakeOnly := startReplica(t, r, ccrm.Config{ReplicaID: "fake-only", Platforms: []string{fake.Name}})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ck := &edgeproto.ClusterKey{Organization: "dev", Name: "c"}
	if _, err := ccrmtest.Wait(r.Cluster.CreateClusterInst(ctx, &edgeproto.CreateClusterInstRequest{NoWait: true, ClusterInst: &edgeproto.ClusterInst{
		Key: ck, CloudletKey: r.Cloudlets[0], FlavorName: "fake.small", Deployment: "docker"}})); err != nil {
		t.Fatal(err)
	}
	// A replica of the remote type does the work; the fake-only one never
	// claimed it.
	startReplica(t, r, ccrm.Config{ReplicaID: "remote", Platforms: []string{ccrmtest.RemoteType}})
	controllertest.WaitFor(t, 30*time.Second, "cluster READY", func() bool {
		return r.Server.Platform.Stats(executor.KeyString(ck)).Created == 1
	})
	if n := fakeOnly.Taken(); n != 0 {
		t.Errorf("the fake-only replica took %d claims", n)
	}
	if _, err := ccrm.New(ccrm.Config{Store: r.Env.Store, Reports: rmv1.NewReportServiceClient(r.Env.Conn("")), ReplicaID: "x",
		Platforms: []string{"no-such-platform"}}); err == nil {
		t.Error("an unknown platform type was accepted")
	}
}

// A replica follows the region's Settings: a create timeout shorter than
// the platform's latency makes the create fail with a timeout.
func TestReplicaFollowsSettings(t *testing.T) {
	t.Parallel()
	r := ccrmtest.NewRegion(t, ccrmtest.RegionOptions{Cloudlets: 1, Latency: 300 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	startReplica(t, r, ccrm.Config{ReplicaID: "s"})
	settings := edgeproto.NewSettingsServiceClient(r.Env.Conn(r.Env.AdminToken()))
	if _, err := settings.UpdateSettings(ctx, &edgeproto.UpdateSettingsRequest{Settings: &edgeproto.Settings{
		CreateClusterInstTimeout: durationpb.New(50 * time.Millisecond)}, Fields: []string{edgeproto.SettingsFieldCreateClusterInstTimeout}}); err != nil {
		t.Fatal(err)
	}
	// The replica sees the change through its watch: retry until a create
	// runs under it (the first may start before the watch delivered it).
	controllertest.WaitFor(t, 30*time.Second, "a create to time out", func() bool {
		ck := &edgeproto.ClusterKey{Organization: "dev", Name: fmt.Sprintf("t%d", time.Now().UnixNano())}
		p, _ := ccrmtest.Wait(r.Cluster.CreateClusterInst(ctx, &edgeproto.CreateClusterInstRequest{ClusterInst: &edgeproto.ClusterInst{
			Key: ck, CloudletKey: r.Cloudlets[0], FlavorName: "fake.small", Deployment: "docker"}}))
		return p.GetState() == edgeproto.TrackedState_TRACKED_STATE_CREATE_ERROR && strings.Contains(strings.Join(p.GetErrors(), " "), "timed out")
	})
}
