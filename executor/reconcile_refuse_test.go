package executor_test

import (
	"context"
	"errors"
	"testing"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/platforms/fake"
)

// badInventory is the fake platform listing what list returns.
type badInventory struct {
	*fake.Platform
	list func() *executor.Inventory
}

func (b badInventory) ListInsts(context.Context, *edgeproto.Cloudlet) (*executor.Inventory, error) {
	return b.list(), nil
}

// TestReconcileRefuses: what Reconcile cannot trust makes it return an
// error before it does anything.
func TestReconcileRefuses(t *testing.T) {
	other := &edgeproto.CloudletKey{Organization: "op", Name: "elsewhere"}
	tests := []struct {
		name      string
		list      func() *executor.Inventory // nil: the fake's own
		configure func(cfg *executor.Config)
		cloudlet  *edgeproto.Cloudlet
		wantErr   error
	}{
		{name: "no cloudlet", cloudlet: &edgeproto.Cloudlet{}, wantErr: executor.ErrBadObject},
		{name: "no host listing", configure: func(cfg *executor.Config) { cfg.Objects.AppInstsOn = nil }, wantErr: executor.ErrNotConfigured},
		{name: "no host lookup", configure: func(cfg *executor.Config) { cfg.Objects.ClusterInsts = nil }, wantErr: executor.ErrNotConfigured},
		{name: "platform cannot list", configure: func(cfg *executor.Config) { cfg.Platform = newMockPlatform(t) }, wantErr: executor.ErrUnsupported},
		{name: "inventory entry without a key", list: func() *executor.Inventory {
			return &executor.Inventory{Clusters: []*edgeproto.ClusterInst{{CloudletKey: cloudletKey.Clone()}}}
		}, wantErr: executor.ErrBadObject},
		{name: "inventory entry of another cloudlet", list: func() *executor.Inventory {
			ci := cluster("c9", ready)
			ci.CloudletKey = other
			return &executor.Inventory{Clusters: []*edgeproto.ClusterInst{ci}}
		}, wantErr: executor.ErrBadObject},
		{name: "inventory entry listed twice", list: func() *executor.Inventory {
			return &executor.Inventory{AppInsts: []*edgeproto.AppInst{appInst("i9", appKey1, "c1", ready), appInst("i9", appKey1, "c1", ready)}}
		}, wantErr: executor.ErrBadObject},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := fake.New(fake.Options{})
			res := executor.NewMemReservations()
			w := newWorld()
			cl := cloudlet(ready)
			w.cloudlets.Put(cl)
			place(t, p, res, cl, cluster("c1", ready), false) // unknown to the host
			cfg := w.config(p)
			cfg.Reservations = res
			if tc.list != nil {
				cfg.Platform = badInventory{Platform: p, list: tc.list}
			}
			if tc.configure != nil {
				tc.configure(&cfg)
			}
			eng, err := executor.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			start(t, eng)
			if tc.cloudlet != nil {
				cl = tc.cloudlet
			}
			if _, err := eng.Reconcile(waitCtx(t), cl); !errors.Is(err, tc.wantErr) {
				t.Fatalf("Reconcile = %v, want %v", err, tc.wantErr)
			}
			if n := p.Calls(fake.OpDeleteCluster, "") + p.Calls(fake.OpCreateCluster, ""); len(w.rec.reports()) != 0 || n != 1 {
				t.Errorf("Reconcile acted: reports %v, %d cluster calls besides placing c1", w.rec.reports(), n-1)
			}
			if _, ok := p.Cluster(executor.KeyString(clusterKey("c1"))); !ok {
				t.Error("c1 was deleted")
			}
		})
	}
}

// TestReconcileStops: when its context ends Reconcile returns what it did
// so far; the actions it queued are cancelled with it.
func TestReconcileStops(t *testing.T) {
	p := fake.New(fake.Options{})
	w := newWorld()
	cl := cloudlet(ready)
	w.cloudlets.Put(cl)
	w.clusters.Put(cluster("c1", ready))
	eng, err := executor.New(w.config(p))
	if err != nil {
		t.Fatal(err)
	}
	stop := start(t, eng)
	gate := p.Pause(fake.OpCreateCluster, "")
	defer gate.Release()
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-gate.Reached()
		cancel()
	}()
	res, err := eng.Reconcile(ctx, cl)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Reconcile = %v, want context.Canceled", err)
	}
	if len(res.Items) != 1 || res.Items[0].Err == nil {
		t.Fatalf("items %+v, want the unfinished create with an error", res.Items)
	}
	if err := eng.Wait(waitCtx(t)); err != nil {
		t.Fatal(err)
	}
	if got := w.rec.states("ClusterInst", executor.KeyString(clusterKey("c1"))); !equalStrings(got, []string{sCreating, sCreateError}) {
		t.Errorf("cancelled create reported %v", got)
	}
	stop()
	if _, err := eng.Reconcile(waitCtx(t), cl); !errors.Is(err, executor.ErrStopped) {
		t.Errorf("Reconcile after stop = %v, want ErrStopped", err)
	}
}
