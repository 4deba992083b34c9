package controller_test

import (
	"context"
	"fmt"
	"github.com/edgekit/edgekit/atrest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/hosts/controller"
	"github.com/edgekit/edgekit/hosts/controller/controllertest"
	"github.com/edgekit/edgekit/internal/etcd"
	"github.com/edgekit/edgekit/internal/store"
	"github.com/edgekit/edgekit/internal/testenv/freeport"
	"github.com/edgekit/edgekit/platforms/fake"
	rmv1 "github.com/edgekit/edgekit/proto/edgekit/rm/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// runController runs controller.Run until the returned stop is called.
func runController(t *testing.T, o controller.Options) (stop func()) {
	t.Helper()
	_, stop = startController(t, o)
	return stop
}

// startController runs controller.Run until the returned stop is called,
// and returns what Run reported ready.
func startController(t *testing.T, o controller.Options) (*controller.Running, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan *controller.Running, 1)
	o.Ready = func(r *controller.Running) { ready <- r }
	done := make(chan error, 1)
	go func() { done <- controller.Run(ctx, o) }()
	var run *controller.Running
	select {
	case run = <-ready:
	case err := <-done:
		cancel()
		t.Fatalf("controller did not start: %v", err)
	case <-time.After(60 * time.Second):
		cancel()
		t.Fatal("controller did not start within 60s")
	}
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("controller: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return run, stop
}

// A controller stopped in the middle of an operation and started again on
// the same data directory goes on: the object reaches READY, the platform
// created it once, nothing was lost.
func TestRestartMidOperation(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens")
	adminTok, _ := controller.NewToken()
	ccrmTok, _ := controller.NewToken()
	devTok, _ := controller.NewToken()
	if err := os.WriteFile(tokens, []byte(fmt.Sprintf("%s admin\n%s ccrm\n%s org:developer\n", adminTok, ccrmTok, devTok)), 0o600); err != nil {
		t.Fatal(err)
	}
	opts := controller.Options{DataDir: filepath.Join(dir, "data"), Region: "r", Listen: freeport.Addr(t), EtcdListen: freeport.Addr(t),
		TokensFile: tokens, StopTimeout: 2 * time.Second}
	stop := runController(t, opts)

	// The host reaches etcd and the controller by address, as a CCRM does.
	cli, err := etcd.NewClient(etcd.ClientConfig{Endpoints: []string{opts.EtcdListen}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	// It reads the cloudlets' encrypted secrets with the controller's key
	// file, as a CCRM given --encryption-key-file does.
	keys, err := atrest.OpenKeyFile(filepath.Join(opts.DataDir, atrest.DefaultKeyFileName))
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.New(cli, "r", store.WithEncryption(atrest.NewEnvelope(keys)))
	if err != nil {
		t.Fatal(err)
	}
	dial := func(tok string) *grpc.ClientConn {
		conn, err := grpc.NewClient(opts.Listen, grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithPerRPCCredentials(controllertest.BearerToken(tok)))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		return conn
	}
	platform := fake.New(fake.Options{})
	host, err := controllertest.NewHost(st, rmv1.NewReportServiceClient(dial(ccrmTok)), platform, nil)
	if err != nil {
		t.Fatal(err)
	}
	hctx, hcancel := context.WithCancel(context.Background())
	hdone := make(chan struct{})
	go func() { _ = host.Start(hctx); close(hdone) }()
	t.Cleanup(func() { hcancel(); <-hdone })

	ctx := testCtx(t)
	admin, dev := clientsOf(dial(adminTok)), clientsOf(dial(devTok))
	if _, err := admin.flavors.CreateFlavor(ctx, &edgeproto.CreateFlavorRequest{Flavor: &edgeproto.Flavor{Key: &edgeproto.FlavorKey{Name: "fake.small"}}}); err != nil {
		t.Fatal(err)
	}
	cl := &edgeproto.CloudletKey{Organization: "op", Name: "s"}
	if ps, err := drain(admin.cloudlets.CreateCloudlet(ctx, &edgeproto.CreateCloudletRequest{Cloudlet: &edgeproto.Cloudlet{Key: cl, PlatformType: "fake"}})); err != nil {
		t.Fatalf("cloudlet: %v %v", ps, err)
	}
	ck := &edgeproto.ClusterKey{Organization: "developer", Name: "c"}
	gate := platform.Pause(fake.OpCreateCluster, "name=c,organization=developer")
	ps, err := drain(dev.clusters.CreateClusterInst(ctx, &edgeproto.CreateClusterInstRequest{NoWait: true,
		ClusterInst: &edgeproto.ClusterInst{Key: ck, CloudletKey: cl, FlavorName: "fake.small"}}))
	if err != nil {
		t.Fatalf("cluster: %v %v", ps, err)
	}
	select {
	case <-gate.Reached():
	case <-ctx.Done():
		t.Fatal("the platform never started creating the cluster")
	}

	// Stop the controller while the platform works, start it again.
	stop()
	runController(t, opts)
	gate.Release()

	controllertest.WaitFor(t, 30*time.Second, "cluster READY after the restart", func() bool {
		got, err := recvAll(dev.clusters.ShowClusterInsts(ctx, &edgeproto.ShowClusterInstsRequest{}))
		return err == nil && len(got) == 1 && got[0].(*edgeproto.ClusterInst).State == edgeproto.TrackedState_TRACKED_STATE_READY
	})
	// The host may run the create again after the restart (on a loaded
	// machine its lease can lapse while etcd is down, and another claim
	// re-runs the operation): a second run must adopt, never create twice.
	if st := platform.Stats("name=c,organization=developer"); st.Created != 1 {
		t.Errorf("the platform created the cluster %d times (%d adopted), want 1", st.Created, st.Adopted)
	}
	if got, _ := recvAll(admin.flavors.ShowFlavors(ctx, &edgeproto.ShowFlavorsRequest{})); len(got) != 1 {
		t.Errorf("flavors after restart: %d, want 1", len(got))
	}
}
