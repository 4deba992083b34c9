package crm_test

import (
	"flag"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/hosts/controller/controllertest"
	"github.com/edgekit/edgekit/hosts/controller/notify"
	"github.com/edgekit/edgekit/hosts/crm"
	inotify "github.com/edgekit/edgekit/internal/notify"
	"github.com/edgekit/edgekit/internal/store"
	"github.com/edgekit/edgekit/platforms/fake"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// With every sync slot taken and no room to wait, a CRM is turned away
// with a hint of when to come back; the CRM comes back then and is
// synchronised once the slot is free, so no CRM is lost.
func TestABusyControllerTurnsCRMsAwayWithAHint(t *testing.T) {
	t.Parallel()
	env := controllertest.Start(t, controllertest.Options{Notify: true, Logger: testLogger(),
		NotifyConfig: notify.Config{KeepaliveInterval: time.Hour, MaxSyncs: 1, MaxWaitingSyncs: -1}})
	ctx := testCtx(t)
	e := &edge{env: env, cloudlet: &edgeproto.CloudletKey{Organization: "operator", Name: "site1"}}
	e.key = env.CreateEdgeCloudlet(ctx, &edgeproto.Cloudlet{Key: e.cloudlet, PlatformType: fake.Name})
	site2 := &edgeproto.CloudletKey{Organization: "operator", Name: "site2"}
	key2 := env.CreateEdgeCloudlet(ctx, &edgeproto.Cloudlet{Key: site2, PlatformType: fake.Name})
	// site1's sync is far larger than a fixed 64 KiB flow-control window:
	// while its CRM does not read, its SyncEnd is not sent and the sync
	// holds the only slot.
	rules := make([]*edgeproto.SecurityRule, 100) // about 2.5 KB a policy
	for i := range rules {
		rules[i] = &edgeproto.SecurityRule{Protocol: "tcp", PortRangeMin: uint32(1000 + i), PortRangeMax: uint32(2000 + i), RemoteCidr: "10.0.0.0/8"}
	}
	policies := store.NewKind[*edgeproto.TrustPolicy](env.Store)
	for i := range 100 {
		if _, err := policies.Put(ctx, &edgeproto.TrustPolicy{Key: &edgeproto.TrustPolicyKey{Organization: "operator", Name: "p" + strconv.Itoa(i)},
			OutboundSecurityRules: rules}); err != nil {
			t.Fatal(err)
		}
	}
	st1 := e.rawConnect(t, e.cloudlet, e.key, grpc.WithInitialWindowSize(1<<16), grpc.WithInitialConnWindowSize(1<<16))
	if _, err := st1.Recv(); err != nil { // the SyncStart: the slot is taken
		t.Fatal(err)
	}

	st2 := e.rawConnect(t, site2, key2)
	_, err := st2.Recv()
	hint, ok := inotify.RetryAfter(err)
	if status.Code(err) != codes.Unavailable || !ok || hint <= 0 {
		t.Fatalf("a stream with the only sync slot taken ended with %v (hint %v), want Unavailable with a RetryInfo", err, hint)
	}

	// A CRM turned away comes back after the hint and is synchronised
	// once site1's CRM reads its sync.
	c := e.startCRM(t, env.Addr, fake.New(fake.Options{}), func(cfg *crm.Config) { cfg.Cloudlet, cfg.AccessKey = site2, key2 })
	readUntil(t, st1, isSyncEnd)
	select {
	case <-c.Synced():
	case <-ctx.Done():
		t.Fatal("site2's CRM never synchronised after the slot was freed")
	}
}

// stormSessions is the size of the CRM fleet TestEveryCRMComesBackAfterAControllerRestart
// restarts the controller under.
var stormSessions = flag.Int("crm.storm-sessions", 24, "CRMs connected when TestEveryCRMComesBackAfterAControllerRestart restarts the controller")

// When the controller restarts, every CRM reconnects at once; with room
// for only two syncs and two waiting, some are turned away with a hint
// (the notify server's refused{reason="busy"} counter, on a registry the
// restarted server shares with the first) and come back later. None is
// lost: every CRM is connected again, and every one serves a request made
// after the restart.
func TestEveryCRMComesBackAfterAControllerRestart(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	e := newEdge(t, func(o *controllertest.Options) {
		o.NotifyConfig = notify.Config{KeepaliveInterval: time.Hour, MaxSyncs: 2, MaxWaitingSyncs: 2, Registerer: reg}
	})
	ctx := testCtx(t)
	n := *stormSessions
	sites := make([]*edge, n)
	idx := make([]int, n)
	for i := range sites {
		sites[i], idx[i] = &edge{env: e.env, cloudlet: &edgeproto.CloudletKey{Organization: "operator", Name: "storm" + strconv.Itoa(i)}}, i
	}
	parallel(t, idx, func(i int) error {
		sites[i].key = e.env.CreateEdgeCloudlet(ctx, &edgeproto.Cloudlet{Key: sites[i].cloudlet, PlatformType: fake.Name})
		return nil
	})
	crms := make([]*runningCRM, n)
	for i, s := range sites {
		crms[i] = s.startCRM(t, e.env.Addr, fake.New(fake.Options{}))
	}
	for i, c := range crms {
		select {
		case <-c.Synced():
		case <-ctx.Done():
			t.Fatalf("the CRM of %s never synchronised", sites[i].cloudlet.GetName())
		}
	}
	for _, s := range sites {
		waitState[*edgeproto.Cloudlet](t, s, s.cloudlet, edgeproto.TrackedState_TRACKED_STATE_READY)
	}

	busyBefore := turnedAway(t, reg)
	e.env.Restart()
	controllertest.WaitFor(t, 60*time.Second, "every CRM connected to the restarted controller", func() bool {
		return e.env.Notify.Sessions() == n
	})
	busy := turnedAway(t, reg) - busyBefore
	if n > 4 && busy == 0 {
		t.Errorf("no CRM was turned away while %d reconnected to a controller with 2 sync slots and 2 waiting", n)
	}
	t.Logf("%d CRMs reconnected; the restarted controller turned CRMs away %d times", n, busy)
	// Each site's CRM creates a cluster asked for after the restart.
	parallel(t, sites, func(s *edge) error {
		cl := s.cluster("c-" + s.cloudlet.GetName())
		ps, err := controllertest.Drain(e.dev.clusters.CreateClusterInst(ctx, &edgeproto.CreateClusterInstRequest{ClusterInst: cl}))
		if err != nil {
			return fmt.Errorf("create a cluster on %s after the restart: %w", s.cloudlet.GetName(), err)
		}
		if got := controllertest.Final(ps); got != edgeproto.TrackedState_TRACKED_STATE_READY {
			return fmt.Errorf("a cluster on %s after the restart ended %v: %v", s.cloudlet.GetName(), got, ps)
		}
		return nil
	})
	if got := e.env.Notify.Sessions(); got != n {
		t.Fatalf("%d CRMs connected after the storm, want %d", got, n)
	}
}

// turnedAway is how many times the notify servers registered on reg
// turned a CRM away because too many syncs were under way.
func turnedAway(t *testing.T, reg *prometheus.Registry) int {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "edgekit_controller_notify_refused_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "reason" && l.GetValue() == "busy" {
					return int(m.GetCounter().GetValue())
				}
			}
		}
	}
	return 0
}
