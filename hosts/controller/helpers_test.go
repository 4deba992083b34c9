package controller_test

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/hosts/controller/controllertest"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// clients are the API clients of one caller.
type clients struct {
	cloudlets edgeproto.CloudletServiceClient
	clusters  edgeproto.ClusterInstServiceClient
	appInsts  edgeproto.AppInstServiceClient
	flavors   edgeproto.FlavorServiceClient
	apps      edgeproto.AppServiceClient
	policies  edgeproto.TrustPolicyServiceClient
	tpes      edgeproto.TrustPolicyExceptionServiceClient
	pools     edgeproto.CloudletPoolServiceClient
	settings  edgeproto.SettingsServiceClient
}

func clientsOf(conn *grpc.ClientConn) *clients {
	return &clients{
		cloudlets: edgeproto.NewCloudletServiceClient(conn),
		clusters:  edgeproto.NewClusterInstServiceClient(conn),
		appInsts:  edgeproto.NewAppInstServiceClient(conn),
		flavors:   edgeproto.NewFlavorServiceClient(conn),
		apps:      edgeproto.NewAppServiceClient(conn),
		policies:  edgeproto.NewTrustPolicyServiceClient(conn),
		tpes:      edgeproto.NewTrustPolicyExceptionServiceClient(conn),
		pools:     edgeproto.NewCloudletPoolServiceClient(conn),
		settings:  edgeproto.NewSettingsServiceClient(conn),
	}
}

func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// progressStream is the receiving side of a Create/Update/Delete stream.
type progressStream[R any] interface {
	Recv() (*R, error)
}

// drain reads a progress stream to its end and returns the progress
// messages and the call's error.
func drain[R any, P interface {
	*R
	GetProgress() *edgeproto.Progress
}](s progressStream[R], err error) ([]*edgeproto.Progress, error) {
	if err != nil {
		return nil, err
	}
	var out []*edgeproto.Progress
	for {
		r, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, P(r).GetProgress())
	}
}

func wantCode(t *testing.T, err error, code codes.Code, what string) {
	t.Helper()
	if status.Code(err) != code {
		t.Fatalf("%s: got %v, want code %v", what, err, code)
	}
}

func lastState(t *testing.T, ps []*edgeproto.Progress) edgeproto.TrackedState {
	t.Helper()
	if len(ps) == 0 {
		t.Fatal("no progress received")
	}
	last := ps[len(ps)-1]
	if !last.Final {
		t.Fatalf("last progress %v is not final", last)
	}
	return last.State
}

// world is a controller with the fake host, a flavor, an operator's READY
// cloudlet and a developer's READY cluster and App.
type world struct {
	env      *controllertest.Env
	admin    *clients
	op, dev  *clients
	cloudlet *edgeproto.CloudletKey
	cluster  *edgeproto.ClusterKey
	app      *edgeproto.AppKey
}

func newWorld(t *testing.T) *world {
	t.Helper()
	env := controllertest.Start(t, controllertest.Options{Host: true})
	w := &world{
		env:      env,
		admin:    clientsOf(env.Conn(env.AdminToken())),
		op:       clientsOf(env.Conn(env.OrgToken("operator"))),
		dev:      clientsOf(env.Conn(env.OrgToken("developer"))),
		cloudlet: &edgeproto.CloudletKey{Organization: "operator", Name: "site1"},
		cluster:  &edgeproto.ClusterKey{Organization: "developer", Name: "c1"},
		app:      &edgeproto.AppKey{Organization: "developer", Name: "web", Version: "1"},
	}
	ctx := testCtx(t)
	if _, err := w.admin.flavors.CreateFlavor(ctx, &edgeproto.CreateFlavorRequest{Flavor: &edgeproto.Flavor{
		Key: &edgeproto.FlavorKey{Name: "fake.small"}, Vcpus: 1, RamMb: 1024, DiskGb: 10}}); err != nil {
		t.Fatal(err)
	}
	ps, err := drain(w.op.cloudlets.CreateCloudlet(ctx, &edgeproto.CreateCloudletRequest{Cloudlet: &edgeproto.Cloudlet{
		Key: w.cloudlet, PlatformType: "fake"}}))
	if err != nil || lastState(t, ps) != edgeproto.TrackedState_TRACKED_STATE_READY {
		t.Fatalf("create cloudlet: %v %v", ps, err)
	}
	ps, err = drain(w.dev.clusters.CreateClusterInst(ctx, &edgeproto.CreateClusterInstRequest{ClusterInst: &edgeproto.ClusterInst{
		Key: w.cluster, CloudletKey: w.cloudlet, FlavorName: "fake.small", Deployment: "docker"}}))
	if err != nil || lastState(t, ps) != edgeproto.TrackedState_TRACKED_STATE_READY {
		t.Fatalf("create cluster: %v %v", ps, err)
	}
	if _, err := w.dev.apps.CreateApp(ctx, &edgeproto.CreateAppRequest{App: &edgeproto.App{
		Key: w.app, Deployment: "docker", ImageType: edgeproto.ImageType_IMAGE_TYPE_DOCKER, ImagePath: "nginx",
		Ports: []*edgeproto.Port{{Proto: edgeproto.PortProtocol_PORT_PROTOCOL_TCP, InternalPort: 80}}}}); err != nil {
		t.Fatal(err)
	}
	return w
}

func (w *world) appInst(name string) *edgeproto.AppInst {
	return &edgeproto.AppInst{Key: &edgeproto.AppInstKey{Organization: "developer", Name: name},
		AppKey: w.app, ClusterKey: w.cluster}
}

// recvAll reads a Show stream to its end and returns the object each
// response holds (its field 1).
func recvAll[R proto.Message](s interface{ Recv() (R, error) }, err error) ([]proto.Message, error) {
	if err != nil {
		return nil, err
	}
	var out []proto.Message
	for {
		r, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		m := r.ProtoReflect()
		out = append(out, m.Get(m.Descriptor().Fields().ByNumber(1)).Message().Interface())
	}
}
