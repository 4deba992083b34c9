package platformtest

import (
	"context"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
)

// listing holds a platform implementing executor.InventoryPlatform to its
// contract: an empty inventory on a cloudlet with nothing on it (or never
// initialised), what was created listed READY with its keys, what was
// deleted gone, and an interrupted create listed CREATING or not at all,
// never READY. Platforms without the role skip it.
func (s *suite) listing() {
	lp, ok := s.p.(executor.InventoryPlatform)
	if !ok {
		s.t.Skipf("platform %q does not implement executor.InventoryPlatform", s.p.Features().PlatformType)
	}
	list := func(what string) *executor.Inventory {
		s.t.Helper()
		var inv *executor.Inventory
		s.call("ListInsts "+what, func(ctx context.Context) (err error) {
			inv, err = lp.ListInsts(ctx, s.cl)
			return err
		})
		if inv == nil {
			s.t.Fatalf("ListInsts %s returned no inventory and no error", what)
		}
		return inv
	}
	empty := func(what string) {
		s.t.Helper()
		if inv := list(what); len(inv.Clusters)+len(inv.AppInsts) != 0 {
			s.t.Errorf("ListInsts %s: %d clusters, %d app instances, want none", what, len(inv.Clusters), len(inv.AppInsts))
		}
	}
	empty("on a cloudlet never initialised")
	s.initCloudlet()
	empty("on an empty cloudlet")

	ci := s.createCluster("listed")
	app := s.opts.App()
	inst := &edgeproto.AppInst{Key: &edgeproto.AppInstKey{Name: "listed", Organization: "platformtest"},
		AppKey: app.GetKey().Clone(), ClusterKey: ci.GetKey().Clone(), CloudletKey: s.cl.GetKey().Clone()}
	deleteInst := func(ctx context.Context) error { return s.p.DeleteAppInst(ctx, ci, app, inst, s.res, &progress{}) }
	s.t.Cleanup(func() {
		ctx, cancel := s.ctx()
		defer cancel()
		if err := deleteInst(ctx); err != nil {
			s.t.Errorf("cleanup: DeleteAppInst: %v", err)
		}
	})
	s.call("CreateAppInst", func(ctx context.Context) error {
		_, err := s.p.CreateAppInst(ctx, ci, app, inst, s.res, &progress{})
		return err
	})
	inv := list("after creating a cluster and an app instance")
	s.wantCluster(inv, ci, edgeproto.TrackedState_TRACKED_STATE_READY)
	if len(inv.AppInsts) != 1 {
		s.t.Fatalf("listed %d app instances, want 1: %v", len(inv.AppInsts), inv.AppInsts)
	}
	got := inv.AppInsts[0]
	if executor.KeyString(got) != executor.KeyString(inst) ||
		executor.KeyString(got.GetClusterKey()) != executor.KeyString(ci.GetKey()) ||
		executor.KeyString(got.GetCloudletKey()) != executor.KeyString(s.cl.GetKey()) {
		s.t.Errorf("listed app instance %v, want key %s on cluster %s of cloudlet %s", got,
			executor.KeyString(inst), executor.KeyString(ci.GetKey()), executor.KeyString(s.cl.GetKey()))
	}
	if got.GetState() != edgeproto.TrackedState_TRACKED_STATE_READY {
		s.t.Errorf("listed app instance in state %v, want READY", got.GetState())
	}

	s.call("DeleteAppInst", deleteInst)
	inv = list("after deleting the app instance")
	if len(inv.AppInsts) != 0 {
		s.t.Errorf("deleted app instance still listed: %v", inv.AppInsts)
	}
	s.wantCluster(inv, ci, edgeproto.TrackedState_TRACKED_STATE_READY)
	s.call("DeleteCluster", func(ctx context.Context) error { return s.p.DeleteCluster(ctx, s.cl, ci, s.res, &progress{}) })
	empty("after deleting the cluster")

	// A create interrupted as the engine's shutdown interrupts it: listed
	// CREATING or not at all; a create run again finishes it.
	ci = s.opts.Cluster(s.cl, "interrupted-listed")
	s.t.Cleanup(func() {
		ctx, cancel := s.ctx()
		defer cancel()
		if err := s.p.DeleteCluster(ctx, s.cl, ci.Clone(), s.res, &progress{}); err != nil {
			s.t.Errorf("cleanup: DeleteCluster: %v", err)
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_ = s.p.CreateCluster(ctx, s.cl, ci.Clone(), s.res, &progress{}) // may fail or succeed
	inv = list("after an interrupted create")
	for _, c := range inv.Clusters {
		if executor.KeyString(c) == executor.KeyString(ci) && c.GetState() != edgeproto.TrackedState_TRACKED_STATE_CREATING {
			s.t.Errorf("interrupted create listed in state %v, want CREATING or absent", c.GetState())
		}
	}
	s.call("CreateCluster after the interrupted one", func(ctx context.Context) error {
		return s.p.CreateCluster(ctx, s.cl, ci, s.res, &progress{})
	})
	s.wantCluster(list("after creating again"), ci, edgeproto.TrackedState_TRACKED_STATE_READY)
	s.call("DeleteCluster", func(ctx context.Context) error { return s.p.DeleteCluster(ctx, s.cl, ci, s.res, &progress{}) })
	empty("after deleting every cluster")
}

// wantCluster fails unless inv lists exactly one cluster, ci, in state.
func (s *suite) wantCluster(inv *executor.Inventory, ci *edgeproto.ClusterInst, state edgeproto.TrackedState) {
	s.t.Helper()
	if len(inv.Clusters) != 1 || executor.KeyString(inv.Clusters[0]) != executor.KeyString(ci) {
		s.t.Fatalf("listed clusters %v, want %s only", inv.Clusters, executor.KeyString(ci))
	}
	if got := inv.Clusters[0].GetState(); got != state {
		s.t.Errorf("listed cluster in state %v, want %v", got, state)
	}
}
