package controller_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/hosts/controller/controllertest"
	"github.com/edgekit/edgekit/internal/store"
	"google.golang.org/grpc"
)

// etcdCalls counts the etcd requests the controller's store sends, by the
// API method whose handler sent them (grpc.Method of the request's
// context) and etcd method.
type etcdCalls struct {
	mu sync.Mutex
	n  map[[2]string]int
}

func (e *etcdCalls) intercept(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	if api, ok := grpc.Method(ctx); ok {
		e.mu.Lock()
		e.n[[2]string{api, method}]++
		e.mu.Unlock()
	}
	return invoker(ctx, method, req, reply, cc, opts...)
}

func (e *etcdCalls) count(api, method string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.n[[2]string{api, method}]
}

const (
	etcdRange = "/etcdserverpb.KV/Range"
	etcdTxn   = "/etcdserverpb.KV/Txn"
)

// Once the controller's caches have caught up, a create, an update and a
// delete read the objects they check (the object itself, a cluster's
// cloudlet and flavor) from the caches: each costs etcd one request, its
// transaction's commit, which checks that what was read is current. A
// tracked object's request id still comes from a revision at or past
// what was read: it is not 0 and grows from one request to the next.
func TestChangesReadThroughCaches(t *testing.T) {
	t.Parallel()
	calls := &etcdCalls{n: map[[2]string]int{}}
	env := controllertest.Start(t, controllertest.Options{StoreInterceptor: calls.intercept})
	ctx := testCtx(t)
	admin := clientsOf(env.Conn(env.AdminToken()))
	dev := clientsOf(env.Conn(env.OrgToken("dev")))
	cl := &edgeproto.CloudletKey{Organization: "op", Name: "edge"}
	if _, err := admin.flavors.CreateFlavor(ctx, &edgeproto.CreateFlavorRequest{Flavor: &edgeproto.Flavor{Key: &edgeproto.FlavorKey{Name: "fake.small"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := drain(admin.cloudlets.CreateCloudlet(ctx, &edgeproto.CreateCloudletRequest{Cloudlet: &edgeproto.Cloudlet{
		Key: cl, PlatformType: "fake", CrmOverride: edgeproto.CRMOverride_CRM_OVERRIDE_IGNORE_CRM}})); err != nil {
		t.Fatal(err)
	}
	app := &edgeproto.AppKey{Organization: "dev", Name: "web", Version: "1"}
	if _, err := dev.apps.CreateApp(ctx, &edgeproto.CreateAppRequest{App: &edgeproto.App{Key: app, Deployment: "docker"}}); err != nil {
		t.Fatal(err)
	}
	// Show answers once the kind's cache has applied the store's current
	// revision: after these, the caches hold what was created above.
	caughtUp := func() {
		t.Helper()
		for _, show := range []func() error{
			func() error { _, err := recvAll(dev.apps.ShowApps(ctx, &edgeproto.ShowAppsRequest{})); return err },
			func() error {
				_, err := recvAll(dev.flavors.ShowFlavors(ctx, &edgeproto.ShowFlavorsRequest{}))
				return err
			},
			func() error {
				_, err := recvAll(dev.cloudlets.ShowCloudlets(ctx, &edgeproto.ShowCloudletsRequest{}))
				return err
			},
			func() error {
				_, err := recvAll(dev.clusters.ShowClusterInsts(ctx, &edgeproto.ShowClusterInstsRequest{}))
				return err
			},
			func() error {
				_, err := recvAll(dev.clusters.ShowClusterInstInfos(ctx, &edgeproto.ShowClusterInstInfosRequest{}))
				return err
			},
		} {
			if err := show(); err != nil {
				t.Fatal(err)
			}
		}
	}
	const (
		updateApp     = "/edgeproto.v1.AppService/UpdateApp"
		createCluster = "/edgeproto.v1.ClusterInstService/CreateClusterInst"
		updateCluster = "/edgeproto.v1.ClusterInstService/UpdateClusterInst"
		deleteApp     = "/edgeproto.v1.AppService/DeleteApp"
	)

	caughtUp()
	if _, err := dev.apps.UpdateApp(ctx, &edgeproto.UpdateAppRequest{App: &edgeproto.App{Key: app, ImagePath: "nginx:2"},
		Fields: []string{edgeproto.AppFieldImagePath}}); err != nil {
		t.Fatal(err)
	}
	if r, x := calls.count(updateApp, etcdRange), calls.count(updateApp, etcdTxn); r != 0 || x != 1 {
		t.Errorf("UpdateApp sent etcd %d reads and %d transactions, want 0 and 1", r, x)
	}

	ck := &edgeproto.ClusterKey{Organization: "dev", Name: "c"}
	if _, err := drain(dev.clusters.CreateClusterInst(ctx, &edgeproto.CreateClusterInstRequest{ClusterInst: &edgeproto.ClusterInst{
		Key: ck, CloudletKey: cl, FlavorName: "fake.small", CrmOverride: edgeproto.CRMOverride_CRM_OVERRIDE_IGNORE_CRM}})); err != nil {
		t.Fatal(err)
	}
	if r, x := calls.count(createCluster, etcdRange), calls.count(createCluster, etcdTxn); r != 0 || x != 1 {
		t.Errorf("CreateClusterInst sent etcd %d reads and %d transactions, want 0 and 1", r, x)
	}
	clusters := store.NewKind[*edgeproto.ClusterInst](env.Store)
	key := (&edgeproto.ClusterInst{Key: ck}).GetKeyString()
	created, _, err := clusters.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if created.RequestId == 0 {
		t.Fatalf("the cluster's create left request_id 0")
	}

	caughtUp()
	// Requested of a resource manager (none runs here): the update also
	// reads the cluster's Info, to reset its progress.
	if _, err := drain(dev.clusters.UpdateClusterInst(ctx, &edgeproto.UpdateClusterInstRequest{NoWait: true,
		ClusterInst: &edgeproto.ClusterInst{Key: ck, Reservable: true},
		Fields:      []string{edgeproto.ClusterInstFieldReservable}})); err != nil {
		t.Fatal(err)
	}
	if r, x := calls.count(updateCluster, etcdRange), calls.count(updateCluster, etcdTxn); r != 0 || x != 1 {
		t.Errorf("UpdateClusterInst sent etcd %d reads and %d transactions, want 0 and 1", r, x)
	}
	updated, _, err := clusters.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if updated.RequestId <= created.RequestId {
		t.Errorf("request_id went from %d at create to %d at update, want it to grow", created.RequestId, updated.RequestId)
	}

	caughtUp()
	if _, err := dev.apps.DeleteApp(ctx, &edgeproto.DeleteAppRequest{Key: app}); err != nil {
		t.Fatal(err)
	}
	if r := calls.count(deleteApp, etcdRange); r != 1 {
		// The App's own read comes from the cache; the check that no
		// instance uses it lists its ref keys on etcd.
		t.Errorf("DeleteApp sent etcd %d reads, want 1 (the list of its dependents)", r)
	}
}

// watchGate holds what the controller's etcd watches receive while it is
// closed: the controller's caches then learn nothing from etcd.
type watchGate struct {
	mu     sync.Mutex
	open   chan struct{} // closed while the gate is open
	closed bool
}

func newWatchGate() *watchGate {
	g := &watchGate{open: make(chan struct{})}
	close(g.open)
	return g
}

// hold closes the gate; release opens it again.
func (g *watchGate) hold() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.closed {
		g.closed = true
		g.open = make(chan struct{})
	}
}

func (g *watchGate) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		g.closed = false
		close(g.open)
	}
}

func (g *watchGate) wait(ctx context.Context) {
	g.mu.Lock()
	open := g.open
	g.mu.Unlock()
	select {
	case <-open:
	case <-ctx.Done():
	}
}

func (g *watchGate) intercept(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	cs, err := streamer(ctx, desc, cc, method, opts...)
	if err != nil || method != "/etcdserverpb.Watch/Watch" {
		return cs, err
	}
	return &gatedStream{ClientStream: cs, g: g}, nil
}

type gatedStream struct {
	grpc.ClientStream
	g *watchGate
}

func (s *gatedStream) RecvMsg(m any) error {
	err := s.ClientStream.RecvMsg(m)
	s.g.wait(s.Context())
	return err
}

// Back-to-back updates of one App read it from the controller's cache,
// each finding the copy the previous one wrote (the store hands a
// committed transaction's writes to its caches at once), even while the
// cache's watch delivers nothing: no update reads etcd, each is one
// transaction. Before, an update that came before the watch delivered the
// previous one's write read a stale copy, failed its commit and ran again
// reading etcd.
func TestBackToBackUpdatesReadNoEtcd(t *testing.T) {
	t.Parallel()
	calls := &etcdCalls{n: map[[2]string]int{}}
	gate := newWatchGate()
	env := controllertest.Start(t, controllertest.Options{StoreInterceptor: calls.intercept, StoreStreamInterceptor: gate.intercept})
	t.Cleanup(gate.release)
	ctx := testCtx(t)
	dev := clientsOf(env.Conn(env.OrgToken("dev")))
	app := &edgeproto.AppKey{Organization: "dev", Name: "web", Version: "1"}
	if _, err := dev.apps.CreateApp(ctx, &edgeproto.CreateAppRequest{App: &edgeproto.App{Key: app, Deployment: "docker"}}); err != nil {
		t.Fatal(err)
	}
	// Show answers once the Apps' cache has the create.
	if _, err := recvAll(dev.apps.ShowApps(ctx, &edgeproto.ShowAppsRequest{})); err != nil {
		t.Fatal(err)
	}
	gate.hold()
	const updateApp = "/edgeproto.v1.AppService/UpdateApp"
	const n = 10
	for i := range n {
		if _, err := dev.apps.UpdateApp(ctx, &edgeproto.UpdateAppRequest{App: &edgeproto.App{Key: app, ImagePath: fmt.Sprintf("nginx:%d", i)},
			Fields: []string{edgeproto.AppFieldImagePath}}); err != nil {
			t.Fatal(err)
		}
	}
	if r, x := calls.count(updateApp, etcdRange), calls.count(updateApp, etcdTxn); r != 0 || x != n {
		t.Errorf("%d updates sent etcd %d reads and %d transactions, want 0 and %d", n, r, x, n)
	}
	gate.release()
	got, _, err := store.NewKind[*edgeproto.App](env.Store).Get(ctx, (&edgeproto.App{Key: app}).GetKeyString())
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("nginx:%d", n-1); got.GetImagePath() != want {
		t.Errorf("stored image path %q, want %q", got.GetImagePath(), want)
	}
}
