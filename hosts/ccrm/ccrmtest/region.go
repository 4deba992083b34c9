package ccrmtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime/pprof"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/hosts/ccrm"
	"github.com/edgekit/edgekit/hosts/ccrm/reservations"
	"github.com/edgekit/edgekit/hosts/controller/controllertest"
	"github.com/edgekit/edgekit/internal/store"
	"github.com/edgekit/edgekit/internal/testenv/etcdtest"
	"github.com/edgekit/edgekit/platforms/fake"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// RegionOptions shape a Region.
type RegionOptions struct {
	// Cloudlets is how many cloudlets of the remote fake platform to
	// create (READY, through crm_override); default 3.
	Cloudlets int
	// Latency of every platform call.
	Latency time.Duration
	// Members is the size of the etcd cluster (see controllertest).
	Members int
	// ServerOptions go to the controller's gRPC server.
	ServerOptions []grpc.ServerOption
	// Logger receives the controller's logs; nil discards them.
	Logger *slog.Logger
	// StoreDialOptions go to the etcd client of the controller's store
	// (see controllertest.Options).
	StoreDialOptions []grpc.DialOption
	// PlatformEtcd keeps the platform server's reservations in an etcd
	// of their own, run under the profiler label
	// component=platform-etcd (ComponentPlatformEtcd), instead of the
	// controller's: the controller's etcd then serves the region alone,
	// as it would with a real platform of its own, and a benchmark can
	// tell the two costs apart. PlatformEtcdDialOptions go to that etcd's
	// client.
	PlatformEtcd            bool
	PlatformEtcdDialOptions []grpc.DialOption
}

// ComponentPlatformEtcd is the value of the profiler label
// controllertest.ComponentLabel under which the platform server's own etcd
// (RegionOptions.PlatformEtcd) and its client run.
const ComponentPlatformEtcd = "platform-etcd"

// Region is a controller on embedded etcd, a platform server with one fake
// platform, a flavor, an App and cloudlets served by the CCRM: what CCRM
// replicas, in process or not, need to be tested against.
type Region struct {
	t testing.TB
	// Env is the controller's environment.
	Env *controllertest.Env
	// Server serves the fake platform to the replicas.
	Server *Server
	// Reservations are the region's reservations in etcd.
	Reservations *reservations.Reservations
	// Cloudlets are the cloudlets the CCRM serves.
	Cloudlets []*edgeproto.CloudletKey
	// App is the App every instance runs.
	App *edgeproto.AppKey

	Cloudlet edgeproto.CloudletServiceClient
	Cluster  edgeproto.ClusterInstServiceClient
	AppInst  edgeproto.AppInstServiceClient

	conflicts atomic.Int64
}

// Conflicts is how many requests of Lifecycle the controller refused
// because its store transaction kept conflicting with concurrent writes,
// and that were sent again.
func (r *Region) Conflicts() int64 { return r.conflicts.Load() }

// retryConflict sends a request again, a bounded number of times, while
// the controller refuses it because its transaction kept conflicting with
// concurrent writes: the request was not stored, as a user would retry it.
func (r *Region) retryConflict(ctx context.Context, call func() (*edgeproto.Progress, error)) (*edgeproto.Progress, error) {
	for attempt := 1; ; attempt++ {
		p, err := call()
		if err == nil || status.Code(err) != codes.Aborted || !strings.Contains(err.Error(), "conflict with concurrent writes") || attempt == 30 {
			return p, err
		}
		r.conflicts.Add(1)
		select {
		case <-time.After(time.Duration(attempt) * 20 * time.Millisecond):
		case <-ctx.Done():
			return p, err
		}
	}
}

// NewRegion starts a region for t; everything stops in t.Cleanup.
func NewRegion(t testing.TB, o RegionOptions) *Region {
	t.Helper()
	if o.Cloudlets == 0 {
		o.Cloudlets = 3
	}
	env := controllertest.Start(t, controllertest.Options{Members: o.Members, ServerOptions: o.ServerOptions, Logger: o.Logger,
		StoreDialOptions: o.StoreDialOptions})
	resCli := env.Store.Client()
	if o.PlatformEtcd {
		pprof.Do(context.Background(), pprof.Labels(controllertest.ComponentLabel, ComponentPlatformEtcd), func(context.Context) {
			srv := etcdtest.New(t)
			var err error
			resCli, err = clientv3.New(clientv3.Config{Endpoints: srv.Endpoints(), DialTimeout: 10 * time.Second, DialOptions: o.PlatformEtcdDialOptions})
			if err != nil {
				t.Fatal(err)
			}
		})
		t.Cleanup(func() { _ = resCli.Close() })
	}
	res, err := reservations.New(resCli, env.Store.Prefix()+reservations.Prefix, reservations.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := fake.New(fake.Options{Latency: o.Latency})
	srv, err := NewServer(p, res)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	conn := env.Conn(env.AdminToken())
	r := &Region{t: t, Env: env, Server: srv, Reservations: res,
		App:      &edgeproto.AppKey{Organization: "dev", Name: "web", Version: "1"},
		Cloudlet: edgeproto.NewCloudletServiceClient(conn),
		Cluster:  edgeproto.NewClusterInstServiceClient(conn),
		AppInst:  edgeproto.NewAppInstServiceClient(conn),
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := edgeproto.NewFlavorServiceClient(conn).CreateFlavor(ctx, &edgeproto.CreateFlavorRequest{Flavor: &edgeproto.Flavor{
		Key: &edgeproto.FlavorKey{Name: "fake.small"}, Vcpus: 1, RamMb: 1024, DiskGb: 10}}); err != nil {
		t.Fatal(err)
	}
	if _, err := edgeproto.NewAppServiceClient(conn).CreateApp(ctx, &edgeproto.CreateAppRequest{App: &edgeproto.App{
		Key: r.App, Deployment: "docker", ImageType: edgeproto.ImageType_IMAGE_TYPE_DOCKER, ImagePath: "nginx",
		Ports: []*edgeproto.Port{{Proto: edgeproto.PortProtocol_PORT_PROTOCOL_TCP, InternalPort: 80}}}}); err != nil {
		t.Fatal(err)
	}
	for i := range o.Cloudlets {
		k := &edgeproto.CloudletKey{Organization: "op", Name: fmt.Sprintf("site%d", i)}
		if _, err := Wait(r.Cloudlet.CreateCloudlet(ctx, &edgeproto.CreateCloudletRequest{Cloudlet: r.RemoteCloudlet(k)})); err != nil {
			t.Fatalf("cloudlet %d: %v", i, err)
		}
		r.Cloudlets = append(r.Cloudlets, k)
	}
	return r
}

// RemoteCloudlet is a cloudlet of the remote fake platform served by the
// region's Server, created READY without a resource manager.
func (r *Region) RemoteCloudlet(k *edgeproto.CloudletKey) *edgeproto.Cloudlet {
	return &edgeproto.Cloudlet{Key: k, PlatformType: RemoteType, EnvVars: map[string]string{PropURL: r.Server.URL()},
		CrmOverride: edgeproto.CRMOverride_CRM_OVERRIDE_IGNORE_CRM}
}

// ReplicaArgs are the arguments of a replica process of the region.
func (r *Region) ReplicaArgs(id string, ttl time.Duration, extra ...string) []string {
	return append([]string{
		"--etcd-endpoints", strings.Join(r.Env.EtcdEndpoints(), ","),
		"--controller", r.Env.Addr, "--region", r.Env.Store.Region(),
		"--replica-id", id, "--lease-ttl", ttl.String(), "--platforms", RemoteType,
		"--metrics-listen", "", "--drain-timeout", "2s",
	}, extra...)
}

// TokenEnv is the environment entry giving a replica process its token.
func (r *Region) TokenEnv() string { return ccrm.TokenEnv + "=" + r.Env.CCRMToken() }

// progressStream is the receiving side of a Create/Update/Delete call.
type progressStream[R any] interface {
	Recv() (*R, error)
}

// Wait reads a progress stream to its end and returns the last progress,
// or the call's error.
func Wait[R any, P interface {
	*R
	GetProgress() *edgeproto.Progress
}](s progressStream[R], err error) (*edgeproto.Progress, error) {
	if err != nil {
		return nil, err
	}
	var last *edgeproto.Progress
	for {
		r, err := s.Recv()
		if errors.Is(err, io.EOF) {
			if last == nil {
				return nil, errors.New("no progress")
			}
			return last, nil
		}
		if err != nil {
			return last, err
		}
		last = P(r).GetProgress()
	}
}

// Lifecycle runs one whole lifecycle through the API, each step waited
// for (a request the controller refused for conflicting writes is sent
// again, see Conflicts): create cluster c<i> on cloudlet i%n, update it, create instance
// a<i> of the App on it, update the instance, delete the instance, delete
// the cluster.
func (r *Region) Lifecycle(ctx context.Context, i int) error {
	ck := ClusterKey(i)
	ak := AppInstKey(i)
	cl := r.Cloudlets[i%len(r.Cloudlets)]
	want := func(step string, p *edgeproto.Progress, err error, s edgeproto.TrackedState) error {
		if err != nil {
			return fmt.Errorf("lifecycle %d: %s: %w", i, step, err)
		}
		if p.GetState() != s {
			return fmt.Errorf("lifecycle %d: %s ended in %v (%v)", i, step, p.GetState(), p.GetErrors())
		}
		return nil
	}
	ready, done := edgeproto.TrackedState_TRACKED_STATE_READY, edgeproto.TrackedState_TRACKED_STATE_DELETE_DONE
	p, err := r.createCluster(ctx, &edgeproto.ClusterInst{Key: ck, CloudletKey: cl, FlavorName: "fake.small", Deployment: "docker"})
	if err := want("create cluster", p, err, ready); err != nil {
		return err
	}
	p, err = r.retryConflict(ctx, func() (*edgeproto.Progress, error) {
		return Wait(r.Cluster.UpdateClusterInst(ctx, &edgeproto.UpdateClusterInstRequest{ClusterInst: &edgeproto.ClusterInst{
			Key: ck, KubernetesVersion: "1.31"}, Fields: []string{edgeproto.ClusterInstFieldKubernetesVersion}}))
	})
	if err := want("update cluster", p, err, ready); err != nil {
		return err
	}
	p, err = r.retryConflict(ctx, func() (*edgeproto.Progress, error) {
		return Wait(r.AppInst.CreateAppInst(ctx, &edgeproto.CreateAppInstRequest{AppInst: &edgeproto.AppInst{
			Key: ak, AppKey: r.App, ClusterKey: ck}}))
	})
	if err := want("create instance", p, err, ready); err != nil {
		return err
	}
	p, err = r.retryConflict(ctx, func() (*edgeproto.Progress, error) {
		return Wait(r.AppInst.UpdateAppInst(ctx, &edgeproto.UpdateAppInstRequest{AppInst: &edgeproto.AppInst{
			Key: ak, Annotations: map[string]string{"round": "2"}}, Fields: []string{edgeproto.AppInstFieldAnnotations}}))
	})
	if err := want("update instance", p, err, ready); err != nil {
		return err
	}
	p, err = r.retryConflict(ctx, func() (*edgeproto.Progress, error) {
		return Wait(r.AppInst.DeleteAppInst(ctx, &edgeproto.DeleteAppInstRequest{Key: ak}))
	})
	if err := want("delete instance", p, err, done); err != nil {
		return err
	}
	p, err = r.retryConflict(ctx, func() (*edgeproto.Progress, error) {
		return Wait(r.Cluster.DeleteClusterInst(ctx, &edgeproto.DeleteClusterInstRequest{Key: ck}))
	})
	return want("delete cluster", p, err, done)
}

// createCluster creates c and waits for the end of its creation. A create
// answered Unavailable (an etcd member stopped while the request was in
// flight: etcd cannot say whether the write was applied) is resolved the
// way a client should: the cluster is looked up in the store; a cluster
// that exists was created by that request, and its creation is followed
// through the store until it settles; one that does not is created again,
// a bounded number of times.
func (r *Region) createCluster(ctx context.Context, c *edgeproto.ClusterInst) (*edgeproto.Progress, error) {
	clusters := store.NewKind[*edgeproto.ClusterInst](r.Env.Store)
	key := store.KeyOf(c)
	for attempt := 1; ; attempt++ {
		p, err := r.retryConflict(ctx, func() (*edgeproto.Progress, error) {
			return Wait(r.Cluster.CreateClusterInst(ctx, &edgeproto.CreateClusterInstRequest{ClusterInst: c.Clone()}))
		})
		if status.Code(err) != codes.Unavailable || attempt == 5 {
			return p, err
		}
		got, rev, gerr := clusters.Get(ctx, key)
		switch {
		case errors.Is(gerr, store.ErrNotFound):
			continue
		case gerr != nil:
			return nil, fmt.Errorf("after %w: %w", err, gerr)
		}
		if !settled(got.GetState()) {
			wctx, cancel := context.WithCancel(ctx)
			for ev := range clusters.Watch(wctx, rev+1) {
				if ev.Key == key && ev.Type == store.EventPut {
					if got = ev.Object; settled(got.GetState()) {
						break
					}
				}
			}
			cancel()
		}
		if !settled(got.GetState()) {
			return nil, fmt.Errorf("after %w: cluster %s still %v when the time ran out", err, key, got.GetState())
		}
		return &edgeproto.Progress{State: got.GetState(), Errors: got.GetErrors()}, nil
	}
}

// settled reports whether an object in state s waits for no operation.
func settled(s edgeproto.TrackedState) bool {
	switch s {
	case edgeproto.TrackedState_TRACKED_STATE_READY, edgeproto.TrackedState_TRACKED_STATE_CREATE_ERROR:
		return true
	}
	return false
}

// ClusterKey is the key of lifecycle i's cluster.
func ClusterKey(i int) *edgeproto.ClusterKey {
	return &edgeproto.ClusterKey{Organization: "dev", Name: fmt.Sprintf("c%d", i)}
}

// AppInstKey is the key of lifecycle i's instance.
func AppInstKey(i int) *edgeproto.AppInstKey {
	return &edgeproto.AppInstKey{Organization: "dev", Name: fmt.Sprintf("a%d", i)}
}
