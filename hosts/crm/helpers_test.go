package crm_test

import (
	"context"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/hosts/controller/controllertest"
	"github.com/edgekit/edgekit/hosts/crm"
	"github.com/edgekit/edgekit/internal/store"
	"github.com/edgekit/edgekit/platforms/fake"
	"google.golang.org/protobuf/proto"
)

func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func testLogger() *slog.Logger {
	if testing.Verbose() && os.Getenv("CRM_TEST_LOGS") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return nil
}

// edge is a controller serving notify, a flavor, and an operator's
// crm_on_edge cloudlet waiting for its CRM.
type edge struct {
	env      *controllertest.Env
	cloudlet *edgeproto.CloudletKey
	key      string // the cloudlet's access key
	admin    *clients
	op, dev  *clients
}

type clients struct {
	cloudlets edgeproto.CloudletServiceClient
	clusters  edgeproto.ClusterInstServiceClient
	apps      edgeproto.AppServiceClient
	appInsts  edgeproto.AppInstServiceClient
	flavors   edgeproto.FlavorServiceClient
	settings  edgeproto.SettingsServiceClient
}

func (e *edge) clientsOf(token string) *clients {
	conn := e.env.Conn(token)
	return &clients{
		cloudlets: edgeproto.NewCloudletServiceClient(conn),
		clusters:  edgeproto.NewClusterInstServiceClient(conn),
		apps:      edgeproto.NewAppServiceClient(conn),
		appInsts:  edgeproto.NewAppInstServiceClient(conn),
		flavors:   edgeproto.NewFlavorServiceClient(conn),
		settings:  edgeproto.NewSettingsServiceClient(conn),
	}
}

// edgeOpt adapts the controller of an edge.
type edgeOpt func(*controllertest.Options)

// shortKeepalive makes the controller send a keepalive after 200ms of
// silence, so that a CRM takes a silent stream for dead after 600ms: for
// the tests of dead streams only. Elsewhere the notify default (10s, dead
// after 30s) keeps a stall of a loaded machine from breaking the stream,
// which would put those tests on the reconnect path without meaning to.
func shortKeepalive(o *controllertest.Options) {
	o.NotifyConfig.KeepaliveInterval = 200 * time.Millisecond
}

func newEdge(t *testing.T, opts ...edgeOpt) *edge {
	t.Helper()
	co := controllertest.Options{Notify: true, Logger: testLogger()}
	for _, o := range opts {
		o(&co)
	}
	env := controllertest.Start(t, co)
	e := &edge{env: env, cloudlet: &edgeproto.CloudletKey{Organization: "operator", Name: "site1"}}
	e.admin, e.op, e.dev = e.clientsOf(env.AdminToken()), e.clientsOf(env.OrgToken("operator")), e.clientsOf(env.OrgToken("developer"))
	ctx := testCtx(t)
	if _, err := e.admin.flavors.CreateFlavor(ctx, &edgeproto.CreateFlavorRequest{Flavor: &edgeproto.Flavor{
		Key: &edgeproto.FlavorKey{Name: "fake.small"}, Vcpus: 1, RamMb: 1024, DiskGb: 10}}); err != nil {
		t.Fatal(err)
	}
	e.key = env.CreateEdgeCloudlet(ctx, &edgeproto.Cloudlet{Key: e.cloudlet, PlatformType: fake.Name})
	return e
}

// crmOpts adapt a CRM's configuration.
type crmOpts func(*crm.Config)

// runningCRM is a CRM started by a test.
type runningCRM struct {
	*crm.CRM
	stop func()
}

// startCRM starts a CRM for the edge's cloudlet on p against addr; it is
// stopped in t.Cleanup (or by stop).
func (e *edge) startCRM(t *testing.T, addr string, p executor.Platform, opts ...crmOpts) *runningCRM {
	t.Helper()
	cfg := crm.Config{Controller: addr, Cloudlet: e.cloudlet, AccessKey: e.key, Platform: p, Logger: testLogger(),
		ReconnectMin: 20 * time.Millisecond, ReconnectMax: 200 * time.Millisecond, StopTimeout: 10 * time.Second}
	for _, o := range opts {
		o(&cfg)
	}
	c, err := crm.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = c.Start(ctx) })
	var once sync.Once
	stop := func() { once.Do(func() { cancel(); wg.Wait() }) }
	t.Cleanup(stop)
	return &runningCRM{CRM: c, stop: stop}
}

// get reads an object of the store, nil when absent.
func get[T store.Object[T]](t *testing.T, e *edge, key proto.Message) T {
	t.Helper()
	obj, _, err := store.NewKind[T](e.env.Store).Get(context.Background(), executor.KeyString(key))
	if err != nil {
		var zero T
		return zero
	}
	return obj
}

// waitState waits until the object of key is in state want.
func waitState[T interface {
	store.Object[T]
	GetState() edgeproto.TrackedState
}](t *testing.T, e *edge, key proto.Message, want edgeproto.TrackedState) {
	t.Helper()
	controllertest.WaitFor(t, 20*time.Second, executor.KeyString(key)+" in "+want.String(), func() bool {
		o := get[T](t, e, key)
		return o.ProtoReflect().IsValid() && o.GetState() == want
	})
}

func (e *edge) cluster(name string) *edgeproto.ClusterInst {
	return &edgeproto.ClusterInst{Key: &edgeproto.ClusterKey{Organization: "developer", Name: name}, CloudletKey: e.cloudlet,
		FlavorName: "fake.small", Deployment: "docker"}
}

func appKey(name string) *edgeproto.AppKey {
	return &edgeproto.AppKey{Organization: "developer", Name: name, Version: "1"}
}

func (e *edge) app(name string) *edgeproto.App {
	return &edgeproto.App{Key: appKey(name), Deployment: "docker", ImageType: edgeproto.ImageType_IMAGE_TYPE_DOCKER,
		ImagePath: "nginx", Ports: []*edgeproto.Port{{Proto: edgeproto.PortProtocol_PORT_PROTOCOL_TCP, InternalPort: 80}}}
}

func (e *edge) appInst(name, app, cluster string) *edgeproto.AppInst {
	return &edgeproto.AppInst{Key: &edgeproto.AppInstKey{Organization: "developer", Name: name}, AppKey: appKey(app),
		ClusterKey: &edgeproto.ClusterKey{Organization: "developer", Name: cluster}}
}
