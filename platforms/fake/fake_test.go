package fake_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/platforms"
	"github.com/edgekit/edgekit/platforms/fake"
	"github.com/edgekit/edgekit/platforms/platformtest"
)

func TestConformance(t *testing.T) {
	platformtest.Run(t, func(*testing.T) executor.Platform { return fake.New(fake.Options{}) }, platformtest.Options{
		OverQuota: func() (*edgeproto.Cloudlet, *edgeproto.ClusterInst, string) {
			cl := &edgeproto.Cloudlet{Key: &edgeproto.CloudletKey{Organization: "op", Name: "small"},
				ResourceQuotas: []*edgeproto.ResourceQuota{{Name: fake.ResourceRAM, Value: 2048}}}
			ci := &edgeproto.ClusterInst{Key: &edgeproto.ClusterKey{Name: "big"}, CloudletKey: cl.Key.Clone(), FlavorName: "fake.medium"}
			return cl, ci, fake.ResourceRAM
		},
	})
}

func TestRegistered(t *testing.T) {
	p, err := platforms.New(fake.Name, platforms.Config{})
	if err != nil || p.Features().PlatformType != fake.Name {
		t.Fatalf("New(fake) = %v, %v", p, err)
	}
	_, err = platforms.New("nope", platforms.Config{})
	var ue *platforms.UnknownPlatformError
	if !errors.Is(err, platforms.ErrUnknownPlatform) || !errors.As(err, &ue) || !strings.Contains(err.Error(), "fake") {
		t.Fatalf("New(nope) = %v, want an error listing fake", err)
	}
}

var (
	cloudlet = &edgeproto.Cloudlet{Key: &edgeproto.CloudletKey{Organization: "op", Name: "s"},
		ResourceQuotas: []*edgeproto.ResourceQuota{{Name: fake.ResourceVCPUs, Value: 4}}}
	noProgress = executor.ProgressFunc(func(string) {})
)

func cluster(name, flavor string) *edgeproto.ClusterInst {
	return &edgeproto.ClusterInst{Key: &edgeproto.ClusterKey{Name: name}, CloudletKey: cloudlet.Key, FlavorName: flavor}
}

func TestResourceAccounting(t *testing.T) {
	p := fake.New(fake.Options{})
	res := executor.NewMemReservations()
	ctx := context.Background()
	if err := p.CreateCluster(ctx, cloudlet, cluster("a", "fake.medium"), res, noProgress); err != nil {
		t.Fatal(err)
	}
	if err := p.CreateCluster(ctx, cloudlet, cluster("b", "fake.medium"), res, noProgress); err != nil {
		t.Fatal(err)
	}
	err := p.CreateCluster(ctx, cloudlet, cluster("c", "fake.small"), res, noProgress)
	var re *fake.ResourceError
	if !errors.As(err, &re) || re.Resource != fake.ResourceVCPUs || re.Requested != 1 || re.Available != 0 {
		t.Fatalf("third cluster: %v", err)
	}
	if !strings.Contains(err.Error(), "vCPUs requested 1, available 0") {
		t.Errorf("message %q", err)
	}
	// Growing a cluster counts what it already uses.
	if err := p.UpdateCluster(ctx, cloudlet, cluster("a", "fake.large"), res, noProgress); !errors.As(err, &re) {
		t.Fatalf("update beyond quota: %v", err)
	}
	if err := p.DeleteCluster(ctx, cloudlet, cluster("b", ""), res, noProgress); err != nil {
		t.Fatal(err)
	}
	if got := p.Usage(executor.KeyString(cloudlet.Key))[fake.ResourceVCPUs]; got != 2 {
		t.Errorf("vCPUs used = %d, want 2", got)
	}
	info := &edgeproto.CloudletInfo{}
	if err := p.GatherCloudletInfo(ctx, cloudlet, info); err != nil {
		t.Fatal(err)
	}
	if r := info.ResourcesSnapshot.Info[0]; r.Name != fake.ResourceVCPUs || r.Used != 2 || r.Quota != 4 {
		t.Errorf("snapshot %v", r)
	}
}

func TestFaults(t *testing.T) {
	p := fake.New(fake.Options{})
	res := executor.NewMemReservations()
	ctx := context.Background()
	p.FailNext(fake.OpCreateCluster, 2)
	for i := range 2 {
		if err := p.CreateCluster(ctx, cloudlet, cluster("a", ""), res, noProgress); !errors.Is(err, fake.ErrInjected) {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if err := p.CreateCluster(ctx, cloudlet, cluster("a", ""), res, noProgress); err != nil {
		t.Fatalf("third call: %v", err)
	}
	key := executor.KeyString(cluster("b", ""))
	errMine := errors.New("mine")
	p.Inject(fake.Fault{Op: fake.OpCreateCluster, Key: key, Err: errMine, AfterWork: true})
	if err := p.CreateCluster(ctx, cloudlet, cluster("b", ""), res, noProgress); !errors.Is(err, errMine) {
		t.Fatalf("keyed fault: %v", err)
	}
	if _, ok := p.Cluster(key); !ok {
		t.Errorf("an after-work fault must leave the cluster for undo")
	}
	if err := p.CreateCluster(ctx, cloudlet, cluster("c", ""), res, noProgress); err != nil {
		t.Errorf("other keys are not affected: %v", err)
	}
	p.ClearFaults()
	if err := p.CreateCluster(ctx, cloudlet, cluster("b", ""), res, noProgress); err != nil {
		t.Fatal(err)
	}
	if s := p.Stats(key); s.Created != 1 || s.Adopted != 1 {
		t.Errorf("stats %+v", s)
	}
	if n := p.Calls(fake.OpCreateCluster, key); n != 2 {
		t.Errorf("calls = %d", n)
	}
}

func TestPauseAndLatencyHonourContext(t *testing.T) {
	p := fake.New(fake.Options{})
	res := executor.NewMemReservations()
	g := p.Pause(fake.OpCreateCluster, "")
	done := make(chan error, 1)
	go func() { done <- p.CreateCluster(context.Background(), cloudlet, cluster("a", ""), res, noProgress) }()
	<-g.Reached()
	select {
	case err := <-done:
		t.Fatalf("paused call returned early: %v", err)
	default:
	}
	g.Release()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	p.SetLatency(fake.OpDeleteCluster, time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	go cancel()
	if err := p.DeleteCluster(ctx, cloudlet, cluster("a", ""), res, noProgress); !errors.Is(err, context.Canceled) {
		t.Fatalf("latency ignored the context: %v", err)
	}
}

func TestAppInstPowerAndPorts(t *testing.T) {
	p := fake.New(fake.Options{})
	res := executor.NewMemReservations()
	ctx := context.Background()
	ci := cluster("a", "")
	if err := p.CreateCluster(ctx, cloudlet, ci, res, noProgress); err != nil {
		t.Fatal(err)
	}
	app := &edgeproto.App{Key: &edgeproto.AppKey{Name: "web"}, Ports: []*edgeproto.Port{{InternalPort: 80}, {InternalPort: 443}}}
	inst := &edgeproto.AppInst{Key: &edgeproto.AppInstKey{Name: "i"}, ClusterKey: ci.Key, CloudletKey: cloudlet.Key}
	rt, err := p.CreateAppInst(ctx, ci, app, inst, res, noProgress)
	if err != nil {
		t.Fatal(err)
	}
	if len(rt.Ports) != 2 || rt.Ports[0] != fake.FirstPublicPort || rt.Ports[1] != fake.FirstPublicPort+1 {
		t.Errorf("ports %v", rt.Ports)
	}
	inst.PowerState = edgeproto.PowerState_POWER_STATE_POWER_OFF_REQUESTED
	if _, err := p.UpdateAppInst(ctx, ci, app, inst, res, noProgress); err != nil {
		t.Fatal(err)
	}
	if st, _ := p.AppInst(executor.KeyString(inst)); st.Power != edgeproto.PowerState_POWER_STATE_POWER_OFF {
		t.Errorf("power %v", st.Power)
	}
	other := &edgeproto.AppInst{Key: &edgeproto.AppInstKey{Name: "j"}, ClusterKey: &edgeproto.ClusterKey{Name: "missing"}}
	if _, err := p.CreateAppInst(ctx, &edgeproto.ClusterInst{Key: other.ClusterKey}, app, other, res, noProgress); !errors.Is(err, executor.ErrNotFound) {
		t.Errorf("instance on a missing cluster: %v", err)
	}
}

// TestListInstsAndCrashes: a create that crashes half way is listed
// CREATING with its reservations held; creating again finishes it (an
// adoption), deleting removes it; a failing listing returns nothing.
func TestListInstsAndCrashes(t *testing.T) {
	p := fake.New(fake.Options{})
	res := executor.NewMemReservations()
	ctx := context.Background()
	ck := executor.KeyString(cloudlet.Key)
	list := func() *executor.Inventory {
		t.Helper()
		inv, err := p.ListInsts(ctx, cloudlet)
		if err != nil {
			t.Fatal(err)
		}
		return inv
	}
	if inv := list(); len(inv.Clusters)+len(inv.AppInsts) != 0 {
		t.Fatalf("empty platform lists %v", inv)
	}
	ci := cluster("a", "fake.small")
	p.Inject(fake.Fault{Op: fake.OpCreateCluster, Times: 1, Crash: true})
	if err := p.CreateCluster(ctx, cloudlet, ci.Clone(), res, noProgress); !errors.Is(err, fake.ErrInjected) {
		t.Fatalf("crashing create: %v", err)
	}
	inv := list()
	if len(inv.Clusters) != 1 || inv.Clusters[0].State != edgeproto.TrackedState_TRACKED_STATE_CREATING {
		t.Fatalf("after a crash: %v, want one CREATING cluster", inv.Clusters)
	}
	if held := res.Snapshot(ck)[executor.ReserveSubnet]; len(held) != 1 {
		t.Errorf("crashed create holds subnets %v, want one", held)
	}
	if err := p.CreateCluster(ctx, cloudlet, ci, res, noProgress); err != nil {
		t.Fatal(err)
	}
	inv = list()
	if len(inv.Clusters) != 1 || inv.Clusters[0].State != edgeproto.TrackedState_TRACKED_STATE_READY || inv.Clusters[0].Resources == nil {
		t.Fatalf("after creating again: %v, want one READY cluster with resources", inv.Clusters)
	}
	if s := p.Stats(executor.KeyString(ci)); s.Created != 0 || s.Adopted != 1 {
		t.Errorf("stats %+v, want the finished create counted as adopted", s)
	}

	app := &edgeproto.App{Key: &edgeproto.AppKey{Organization: "dev", Name: "web", Version: "1"},
		Ports: []*edgeproto.Port{{Proto: edgeproto.PortProtocol_PORT_PROTOCOL_TCP, InternalPort: 80}}}
	inst := &edgeproto.AppInst{Key: &edgeproto.AppInstKey{Name: "i", Organization: "dev"}, AppKey: app.Key,
		ClusterKey: ci.Key, CloudletKey: cloudlet.Key}
	p.Inject(fake.Fault{Op: fake.OpCreateAppInst, Times: 1, Crash: true})
	if _, err := p.CreateAppInst(ctx, ci, app, inst, res, noProgress); !errors.Is(err, fake.ErrInjected) {
		t.Fatalf("crashing create: %v", err)
	}
	inv = list()
	if len(inv.AppInsts) != 1 || inv.AppInsts[0].State != edgeproto.TrackedState_TRACKED_STATE_CREATING ||
		executor.KeyString(inv.AppInsts[0].ClusterKey) != executor.KeyString(ci.Key) {
		t.Fatalf("after a crash: %v, want one CREATING instance on cluster a", inv.AppInsts)
	}
	rt, err := p.CreateAppInst(ctx, ci, app, inst, res, noProgress)
	if err != nil {
		t.Fatal(err)
	}
	inv = list()
	if got := inv.AppInsts[0]; got.State != edgeproto.TrackedState_TRACKED_STATE_READY ||
		len(got.GetRuntimeInfo().GetPorts()) != 1 || got.GetRuntimeInfo().GetPorts()[0] != rt.Ports[0] ||
		got.PowerState != edgeproto.PowerState_POWER_STATE_POWER_ON {
		t.Fatalf("after creating again: %v", got)
	}
	other := &edgeproto.Cloudlet{Key: &edgeproto.CloudletKey{Organization: "op", Name: "other"}}
	if inv, err := p.ListInsts(ctx, other); err != nil || len(inv.Clusters)+len(inv.AppInsts) != 0 {
		t.Errorf("another cloudlet lists %v, %v", inv, err)
	}
	p.FailNext(fake.OpListInsts, 1)
	if inv, err := p.ListInsts(ctx, cloudlet); !errors.Is(err, fake.ErrInjected) || inv != nil {
		t.Errorf("failing listing = %v, %v", inv, err)
	}
	if err := p.DeleteAppInst(ctx, ci, app, inst, res, noProgress); err != nil {
		t.Fatal(err)
	}
	if err := p.DeleteCluster(ctx, cloudlet, ci, res, noProgress); err != nil {
		t.Fatal(err)
	}
	if inv := list(); len(inv.Clusters)+len(inv.AppInsts) != 0 {
		t.Errorf("after deleting everything: %v", inv)
	}
	if left := res.Snapshot(ck); len(left) != 0 {
		t.Errorf("reservations left: %v", left)
	}
}

// With NoTrustPolicy the platform refuses an exception (the engine asks it
// for its refusal) and records nothing.
func TestNoTrustPolicyRefusesExceptions(t *testing.T) {
	p := fake.New(fake.Options{NoTrustPolicy: true})
	ctx := context.Background()
	ci := cluster("a", "fake.small")
	if err := p.CreateCluster(ctx, cloudlet, ci, executor.NewMemReservations(), noProgress); err != nil {
		t.Fatal(err)
	}
	exc := &edgeproto.TrustPolicyException{Key: &edgeproto.TrustPolicyExceptionKey{Name: "dns"}}
	err := p.UpdateTrustPolicyException(ctx, cloudlet, exc, ci.Key, &edgeproto.AppInstKey{Organization: "dev", Name: "i1"})
	if !errors.Is(err, executor.ErrUnsupported) {
		t.Errorf("an exception with NoTrustPolicy: %v, want ErrUnsupported", err)
	}
	if p.HasTrustPolicyException(executor.KeyString(exc.Key), executor.KeyString(ci.Key)) {
		t.Error("the refused exception is recorded as applied")
	}
}
