// Package platformtest is the conformance suite every platform passes: Run
// exercises a Platform through create, adopt (create again), update,
// delete, delete of what is absent, update of what was never created,
// delete of keys nothing could have been created for, undo after an
// interrupted create, parallel work, reservation hygiene, listing (for
// platforms implementing executor.InventoryPlatform) and, where the
// platform accounts for them, resource quotas.
//
// The suite assumes nothing about timing: every call runs under a deadline
// (Options.CallTimeout) and never sleeps; what it creates is deleted in
// t.Cleanup even when a check fails. It works for real-process platforms
// as well as in-memory ones.
package platformtest

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
)

// Options adapt the suite to a platform. The zero value suits a platform
// that runs any App with one TCP port on a cluster without flavor.
type Options struct {
	// Cloudlet returns the cloudlet to work on; nil uses a cloudlet named
	// "conformance" of organization "platformtest".
	Cloudlet func() *edgeproto.Cloudlet
	// Cluster returns a cluster on cloudlet named name; nil uses a docker
	// cluster without flavor.
	Cluster func(cloudlet *edgeproto.Cloudlet, name string) *edgeproto.ClusterInst
	// App returns the App to deploy; nil uses a docker image listening on
	// one TCP port. A real-process platform sets a command here.
	App func() *edgeproto.App
	// OverQuota, when set, returns a cloudlet with quotas and a cluster
	// that does not fit in them: creating it must fail with an error
	// matching executor.ErrInsufficientResources that names the resource.
	// Leave it nil for a platform without resource accounting.
	OverQuota func() (cloudlet *edgeproto.Cloudlet, cluster *edgeproto.ClusterInst, resource string)
	// CallTimeout bounds every platform call; 0 means 2 minutes.
	CallTimeout time.Duration
	// Parallel is how many clusters the parallel test creates at once; 0
	// means 4.
	Parallel int
}

func (o *Options) defaults() {
	if o.Cloudlet == nil {
		o.Cloudlet = func() *edgeproto.Cloudlet {
			return &edgeproto.Cloudlet{Key: &edgeproto.CloudletKey{Organization: "platformtest", Name: "conformance"}}
		}
	}
	if o.Cluster == nil {
		o.Cluster = func(c *edgeproto.Cloudlet, name string) *edgeproto.ClusterInst {
			return &edgeproto.ClusterInst{Key: &edgeproto.ClusterKey{Name: name, Organization: "platformtest"},
				CloudletKey: c.GetKey().Clone(), Deployment: "docker", IpAccess: edgeproto.IpAccess_IP_ACCESS_SHARED}
		}
	}
	if o.App == nil {
		o.App = func() *edgeproto.App {
			return &edgeproto.App{Key: &edgeproto.AppKey{Organization: "platformtest", Name: "app", Version: "1"},
				ImageType: edgeproto.ImageType_IMAGE_TYPE_DOCKER, Deployment: "docker",
				Ports: []*edgeproto.Port{{Proto: edgeproto.PortProtocol_PORT_PROTOCOL_TCP, InternalPort: 8080}}}
		}
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = 2 * time.Minute
	}
	if o.Parallel <= 0 {
		o.Parallel = 4
	}
}

// Run runs the suite. newPlatform is called once per subtest and must
// return a platform with nothing on it (a fresh one, or one whose leftovers
// t.Cleanup removes).
func Run(t *testing.T, newPlatform func(t *testing.T) executor.Platform, opts Options) {
	opts.defaults()
	tests := []struct {
		name string
		fn   func(*suite)
	}{
		{"Cloudlet", (*suite).cloudlet},
		{"ClusterLifecycle", (*suite).clusterLifecycle},
		{"AppInstLifecycle", (*suite).appInstLifecycle},
		{"DeleteAbsent", (*suite).deleteAbsent},
		{"UpdateAbsent", (*suite).updateAbsent},
		{"DeleteNeverCreatable", (*suite).deleteNeverCreatable},
		{"UndoInterruptedCreate", (*suite).undoInterrupted},
		{"ParallelClusters", (*suite).parallel},
		{"Listing", (*suite).listing},
	}
	// Resource accounting is an optional capability: only platforms that
	// declare it (Options.OverQuota) are held to it.
	if opts.OverQuota != nil {
		tests = append(tests, struct {
			name string
			fn   func(*suite)
		}{"ResourceAccounting", (*suite).resources})
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &suite{t: t, p: newPlatform(t), opts: opts, res: executor.NewMemReservations()}
			s.cl = opts.Cloudlet()
			tc.fn(s)
		})
	}
}

type suite struct {
	t    *testing.T
	p    executor.Platform
	opts Options
	res  *executor.MemReservations
	cl   *edgeproto.Cloudlet
}

// progress records the steps of a call; it is safe from any goroutine.
type progress struct {
	mu    sync.Mutex
	steps []string
}

func (p *progress) Step(msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.steps = append(p.steps, msg)
}

func (s *suite) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), s.opts.CallTimeout)
}

// call runs fn under a fresh deadline and fails the test on error.
func (s *suite) call(what string, fn func(ctx context.Context) error) {
	s.t.Helper()
	ctx, cancel := s.ctx()
	defer cancel()
	if err := fn(ctx); err != nil {
		s.t.Fatalf("%s: %v", what, err)
	}
}

func (s *suite) initCloudlet() {
	s.t.Helper()
	s.call("InitCloudlet", func(ctx context.Context) error { return s.p.InitCloudlet(ctx, s.cl, s.res, &progress{}) })
	s.t.Cleanup(func() {
		ctx, cancel := s.ctx()
		defer cancel()
		if err := s.p.CleanupCloudlet(ctx, s.cl, &progress{}); err != nil {
			s.t.Errorf("cleanup: CleanupCloudlet: %v", err)
		}
	})
}

// createCluster creates a cluster and registers its deletion.
func (s *suite) createCluster(name string) *edgeproto.ClusterInst {
	s.t.Helper()
	ci := s.opts.Cluster(s.cl, name)
	s.t.Cleanup(func() {
		ctx, cancel := s.ctx()
		defer cancel()
		if err := s.p.DeleteCluster(ctx, s.cl, ci.Clone(), s.res, &progress{}); err != nil {
			s.t.Errorf("cleanup: DeleteCluster %s: %v", name, err)
		}
	})
	s.call("CreateCluster "+name, func(ctx context.Context) error { return s.p.CreateCluster(ctx, s.cl, ci, s.res, &progress{}) })
	return ci
}

// noReservations fails when owner still holds anything on the cloudlet.
func (s *suite) noReservations(owner string) {
	s.t.Helper()
	for kind, vals := range s.res.Snapshot(executor.CloudletName(s.cl.GetKey())) {
		for v, o := range vals {
			if o == owner {
				s.t.Errorf("%s still holds %s %s", owner, kind, v)
			}
		}
	}
}

func (s *suite) cloudlet() {
	for i := range 2 { // InitCloudlet is idempotent
		s.call("InitCloudlet #"+strconv.Itoa(i+1), func(ctx context.Context) error {
			return s.p.InitCloudlet(ctx, s.cl, s.res, &progress{})
		})
	}
	info := &edgeproto.CloudletInfo{Key: s.cl.GetKey().Clone()}
	s.call("GatherCloudletInfo", func(ctx context.Context) error { return s.p.GatherCloudletInfo(ctx, s.cl, info) })
	if len(info.Flavors) == 0 && info.ResourcesSnapshot == nil && len(info.NodeInfos) == 0 && len(info.Properties) == 0 {
		s.t.Errorf("GatherCloudletInfo reported nothing: %v", info)
	}
	for i := range 2 { // cleaning up an absent cloudlet succeeds
		s.call("CleanupCloudlet #"+strconv.Itoa(i+1), func(ctx context.Context) error {
			return s.p.CleanupCloudlet(ctx, s.cl, &progress{})
		})
	}
	if f := s.p.Features(); f.PlatformType == "" {
		s.t.Errorf("Features().PlatformType is empty")
	}
}

func (s *suite) clusterLifecycle() {
	s.initCloudlet()
	ci := s.createCluster("lifecycle")
	s.call("CreateCluster again (adopt)", func(ctx context.Context) error {
		return s.p.CreateCluster(ctx, s.cl, ci, s.res, &progress{})
	})
	s.call("UpdateCluster", func(ctx context.Context) error { return s.p.UpdateCluster(ctx, s.cl, ci, s.res, &progress{}) })
	for i := range 2 {
		s.call("DeleteCluster #"+strconv.Itoa(i+1), func(ctx context.Context) error {
			return s.p.DeleteCluster(ctx, s.cl, ci, s.res, &progress{})
		})
	}
	s.noReservations(executor.OwnerOf(ci))
}

func (s *suite) appInstLifecycle() {
	s.initCloudlet()
	ci := s.createCluster("apps")
	app := s.opts.App()
	inst := &edgeproto.AppInst{Key: &edgeproto.AppInstKey{Name: "inst", Organization: "platformtest"},
		AppKey: app.GetKey().Clone(), ClusterKey: ci.GetKey().Clone(), CloudletKey: s.cl.GetKey().Clone()}
	s.t.Cleanup(func() {
		ctx, cancel := s.ctx()
		defer cancel()
		if err := s.p.DeleteAppInst(ctx, ci, app, inst, s.res, &progress{}); err != nil {
			s.t.Errorf("cleanup: DeleteAppInst: %v", err)
		}
	})
	var first, second *edgeproto.AppInstRuntime
	pr := &progress{}
	s.call("CreateAppInst", func(ctx context.Context) (err error) {
		first, err = s.p.CreateAppInst(ctx, ci, app, inst, s.res, pr)
		return err
	})
	if first == nil {
		s.t.Fatalf("CreateAppInst returned no runtime info")
	}
	s.call("CreateAppInst again (adopt)", func(ctx context.Context) (err error) {
		second, err = s.p.CreateAppInst(ctx, ci, app, inst, s.res, &progress{})
		return err
	})
	if second == nil || !sameUint32s(first.Ports, second.Ports) {
		s.t.Errorf("adopting changed the ports: %v then %v", first.GetPorts(), second.GetPorts())
	}
	s.call("UpdateAppInst", func(ctx context.Context) error {
		_, err := s.p.UpdateAppInst(ctx, ci, app, inst, s.res, &progress{})
		return err
	})
	for i := range 2 {
		s.call("DeleteAppInst #"+strconv.Itoa(i+1), func(ctx context.Context) error {
			return s.p.DeleteAppInst(ctx, ci, app, inst, s.res, &progress{})
		})
	}
	s.noReservations(executor.OwnerOf(inst))
}

func (s *suite) deleteAbsent() {
	ci := s.opts.Cluster(s.cl, "never-created")
	app := s.opts.App()
	inst := &edgeproto.AppInst{Key: &edgeproto.AppInstKey{Name: "never-created", Organization: "platformtest"},
		AppKey: app.GetKey().Clone(), ClusterKey: ci.GetKey().Clone(), CloudletKey: s.cl.GetKey().Clone()}
	s.call("DeleteAppInst of an absent instance", func(ctx context.Context) error {
		return s.p.DeleteAppInst(ctx, ci, app, inst, s.res, &progress{})
	})
	s.call("DeleteCluster of an absent cluster", func(ctx context.Context) error {
		return s.p.DeleteCluster(ctx, s.cl, ci, s.res, &progress{})
	})
	s.call("CleanupCloudlet of an absent cloudlet", func(ctx context.Context) error {
		return s.p.CleanupCloudlet(ctx, s.cl, &progress{})
	})
}

// updateAbsent: updating a cluster or an instance that was never created
// fails with an error matching executor.ErrNotFound (the engine reports
// UPDATE_ERROR) and creates nothing.
func (s *suite) updateAbsent() {
	s.initCloudlet()
	absent := s.opts.Cluster(s.cl, "never-created")
	ctx, cancel := s.ctx()
	defer cancel()
	if err := s.p.UpdateCluster(ctx, s.cl, absent, s.res, &progress{}); !errors.Is(err, executor.ErrNotFound) {
		s.t.Errorf("UpdateCluster of a cluster never created: %v, want an error matching executor.ErrNotFound", err)
	}
	s.noReservations(executor.OwnerOf(absent))
	ci := s.createCluster("update-absent")
	app := s.opts.App()
	inst := &edgeproto.AppInst{Key: &edgeproto.AppInstKey{Name: "never-created", Organization: "platformtest"},
		AppKey: app.GetKey().Clone(), ClusterKey: ci.GetKey().Clone(), CloudletKey: s.cl.GetKey().Clone()}
	if _, err := s.p.UpdateAppInst(ctx, ci, app, inst, s.res, &progress{}); !errors.Is(err, executor.ErrNotFound) {
		s.t.Errorf("UpdateAppInst of an instance never created: %v, want an error matching executor.ErrNotFound", err)
	}
	s.noReservations(executor.OwnerOf(inst))
	// Had the update created anything, this delete would find it; it
	// must succeed either way.
	s.call("DeleteAppInst after the failed update", func(ctx context.Context) error {
		return s.p.DeleteAppInst(ctx, ci, app, inst, s.res, &progress{})
	})
}

// deleteNeverCreatable: deleting what no create could have made (an empty
// name, a name of 10,000 bytes) succeeds, so an object whose create was
// refused can always be deleted.
func (s *suite) deleteNeverCreatable() {
	app := s.opts.App()
	for _, name := range []string{"", strings.Repeat("x", 10000)} {
		ci := s.opts.Cluster(s.cl, name)
		inst := &edgeproto.AppInst{Key: &edgeproto.AppInstKey{Name: name, Organization: "platformtest"},
			AppKey: app.GetKey().Clone(), ClusterKey: ci.GetKey().Clone(), CloudletKey: s.cl.GetKey().Clone()}
		cl := &edgeproto.Cloudlet{Key: &edgeproto.CloudletKey{Organization: s.cl.GetKey().GetOrganization(), Name: name}}
		what := strconv.Itoa(len(name)) + "-byte name"
		s.call("DeleteAppInst with a "+what, func(ctx context.Context) error {
			return s.p.DeleteAppInst(ctx, ci, app, inst, s.res, &progress{})
		})
		s.call("DeleteCluster with a "+what, func(ctx context.Context) error {
			return s.p.DeleteCluster(ctx, s.cl, ci, s.res, &progress{})
		})
		s.call("CleanupCloudlet with a "+what, func(ctx context.Context) error {
			return s.p.CleanupCloudlet(ctx, cl, &progress{})
		})
	}
}

// undoInterrupted creates with a context that is already cancelled, as the
// engine's shutdown does: whatever the create left, the undo (a delete)
// removes it, and a later create works.
func (s *suite) undoInterrupted() {
	s.initCloudlet()
	ci := s.opts.Cluster(s.cl, "interrupted")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_ = s.p.CreateCluster(ctx, s.cl, ci.Clone(), s.res, &progress{}) // may fail or succeed
	s.call("DeleteCluster (undo)", func(ctx context.Context) error {
		return s.p.DeleteCluster(ctx, s.cl, ci, s.res, &progress{})
	})
	s.noReservations(executor.OwnerOf(ci))
	s.createCluster("interrupted")
}

func (s *suite) parallel() {
	s.initCloudlet()
	var wg sync.WaitGroup
	errs := make([]error, s.opts.Parallel)
	clusters := make([]*edgeproto.ClusterInst, s.opts.Parallel)
	for i := range clusters {
		clusters[i] = s.opts.Cluster(s.cl, "parallel-"+strconv.Itoa(i))
		ci := clusters[i]
		s.t.Cleanup(func() {
			ctx, cancel := s.ctx()
			defer cancel()
			if err := s.p.DeleteCluster(ctx, s.cl, ci.Clone(), s.res, &progress{}); err != nil {
				s.t.Errorf("cleanup: DeleteCluster: %v", err)
			}
		})
	}
	for i, ci := range clusters {
		wg.Go(func() {
			ctx, cancel := s.ctx()
			defer cancel()
			errs[i] = s.p.CreateCluster(ctx, s.cl, ci, s.res, &progress{})
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		s.t.Fatalf("parallel creates: %v", err)
	}
	for _, ci := range clusters {
		wg.Go(func() {
			ctx, cancel := s.ctx()
			defer cancel()
			if err := s.p.DeleteCluster(ctx, s.cl, ci, s.res, &progress{}); err != nil {
				s.t.Errorf("parallel delete: %v", err)
			}
		})
	}
	wg.Wait()
	if left := s.res.Snapshot(executor.CloudletName(s.cl.GetKey())); len(left) != 0 {
		s.t.Errorf("reservations left after deleting every cluster: %v", left)
	}
}

func (s *suite) resources() {
	cl, ci, resource := s.opts.OverQuota()
	s.cl = cl
	s.initCloudlet()
	ctx, cancel := s.ctx()
	defer cancel()
	err := s.p.CreateCluster(ctx, cl, ci, s.res, &progress{})
	if !errors.Is(err, executor.ErrInsufficientResources) {
		s.t.Fatalf("over-quota create: %v, want ErrInsufficientResources", err)
	}
	if !strings.Contains(err.Error(), resource) {
		s.t.Errorf("error %q does not name the resource %q", err, resource)
	}
	s.call("DeleteCluster after the failed create", func(ctx context.Context) error {
		return s.p.DeleteCluster(ctx, cl, ci, s.res, &progress{})
	})
	s.noReservations(executor.OwnerOf(ci))
}

func sameUint32s(a, b []uint32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
