package store_test

import (
	"errors"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/internal/store"
)

// txFixture has a cloudlet and the kinds a cluster create needs.
type txFixture struct {
	*fixture
	cloudlets *store.Kind[*edgeproto.Cloudlet]
	cl        *edgeproto.Cloudlet
}

func newTxFixture(t *testing.T, opts ...store.Option) *txFixture {
	t.Helper()
	f := &txFixture{fixture: newFixture(t, opts...)}
	f.cloudlets = store.NewKind[*edgeproto.Cloudlet](f.s)
	f.cl = &edgeproto.Cloudlet{Key: &edgeproto.CloudletKey{Organization: "op", Name: "cl1"}, State: edgeproto.TrackedState_TRACKED_STATE_READY}
	if _, err := f.cloudlets.Create(f.ctx, f.cl); err != nil {
		t.Fatal(err)
	}
	return f
}

// createCluster is an integrity check across objects: the cluster's
// cloudlet must exist and be ready.
func (f *txFixture) createCluster(c *edgeproto.ClusterInst, during func(run int)) (int64, int, error) {
	runs := 0
	rev, err := f.s.Txn(f.ctx, func(tx *store.Tx) error {
		runs++
		cl, ok, err := f.cloudlets.TxGet(tx, f.cl.GetKeyString())
		if err != nil {
			return err
		}
		if during != nil {
			during(runs)
		}
		if !ok || cl.GetState() != edgeproto.TrackedState_TRACKED_STATE_READY {
			return errors.New("cloudlet not ready")
		}
		return f.k.TxCreate(tx, c)
	})
	return rev, runs, err
}

func TestTxnCommitsAcrossObjects(t *testing.T) {
	t.Parallel()
	f := newTxFixture(t)
	c := cluster("c2", "acme")
	rev, runs, err := f.createCluster(c, nil)
	if err != nil || runs != 1 {
		t.Fatalf("txn: %v after %d runs", err, runs)
	}
	_, modRev, err := f.k.Get(f.ctx, c.GetKeyString())
	if err != nil || modRev != rev {
		t.Fatalf("written at %d, txn revision %d, %v", modRev, rev, err)
	}
	// The same create again: the function's own error, nothing written.
	if _, _, err := f.createCluster(c, nil); !errors.Is(err, store.ErrAlreadyExists) {
		t.Fatalf("second create: %v", err)
	}
}

// A write of a key the function read, between its read and the commit,
// makes the function run again, and the second run sees the write.
func TestTxnReRunsWhenAReadKeyChanges(t *testing.T) {
	t.Parallel()
	f := newTxFixture(t)
	c := cluster("c2", "acme")
	_, runs, err := f.createCluster(c, func(run int) {
		if run == 1 {
			down := f.cl.Clone()
			down.State = edgeproto.TrackedState_TRACKED_STATE_DELETE_REQUESTED
			if _, err := f.cloudlets.Put(f.ctx, down); err != nil {
				t.Error(err)
			}
		}
	})
	if err == nil || err.Error() != "cloudlet not ready" || runs != 2 {
		t.Fatalf("err %v after %d runs; want the second run to see the cloudlet going away", err, runs)
	}
	if _, _, err := f.k.Get(f.ctx, c.GetKeyString()); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("cluster written: %v", err)
	}
}

// Reads see one revision: a key changed after the first read is read as it
// was, and the commit then runs the function again.
func TestTxnReadsOneRevision(t *testing.T) {
	t.Parallel()
	f := newTxFixture(t)
	var seen []string
	_, err := f.s.Txn(f.ctx, func(tx *store.Tx) error {
		if _, _, err := f.cloudlets.TxGet(tx, f.cl.GetKeyString()); err != nil {
			return err
		}
		if len(seen) == 0 {
			other := f.c.Clone()
			other.FlavorName = "changed"
			if _, err := f.k.Put(f.ctx, other); err != nil {
				t.Error(err)
			}
		}
		c, _, err := f.k.TxGet(tx, f.key)
		if err != nil {
			return err
		}
		seen = append(seen, c.GetFlavorName())
		c.Reservable = true
		return f.k.TxPut(tx, c)
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 2 || seen[0] != "small" || seen[1] != "changed" {
		t.Fatalf("runs saw %v, want [small changed]", seen)
	}
	got, _, _ := f.k.Get(f.ctx, f.key)
	if got.GetFlavorName() != "changed" || !got.GetReservable() {
		t.Fatalf("stored %v", got)
	}
}

// A listed prefix guards against creates under it; a delete of a listed key
// is not detected (as documented).
func TestTxnPrefixGuard(t *testing.T) {
	t.Parallel()
	f := newTxFixture(t)
	deleteCloudletIfNoClusters := func(during func(run int)) (int, error) {
		runs := 0
		_, err := f.s.Txn(f.ctx, func(tx *store.Tx) error {
			runs++
			clusters, err := f.k.TxList(tx)
			if err != nil {
				return err
			}
			if during != nil {
				during(runs)
			}
			if len(clusters) > 0 {
				return errors.New("cloudlet in use")
			}
			f.cloudlets.TxDelete(tx, f.cl.GetKeyString())
			return nil
		})
		return runs, err
	}
	// The fixture's cluster is deleted while the first run looks: the guard
	// misses the delete, the run commits its "in use" refusal as is.
	runs, err := deleteCloudletIfNoClusters(func(run int) {
		if run == 1 {
			if _, err := f.k.Delete(f.ctx, f.key, nil); err != nil {
				t.Error(err)
			}
		}
	})
	if err == nil || runs != 1 {
		t.Fatalf("err %v after %d runs", err, runs)
	}
	// Now no cluster: one is created while the run looks, and the guard
	// catches it.
	runs, err = deleteCloudletIfNoClusters(func(run int) {
		if run == 1 {
			if _, err := f.k.Create(f.ctx, cluster("late", "acme")); err != nil {
				t.Error(err)
			}
		}
	})
	if err == nil || err.Error() != "cloudlet in use" || runs != 2 {
		t.Fatalf("err %v after %d runs; want the second run to see the new cluster", err, runs)
	}
	if _, _, err := f.cloudlets.Get(f.ctx, f.cl.GetKeyString()); err != nil {
		t.Fatalf("cloudlet deleted: %v", err)
	}
}

// A Require that does not hold aborts without writing and without running
// the function again; a fencing token is checked this way.
func TestTxnRequire(t *testing.T) {
	t.Parallel()
	f := newTxFixture(t)
	cli := f.srv.Client()
	claim := "/edgekit/test/claims/c1"
	resp, err := cli.Put(f.ctx, claim, "replica-a")
	if err != nil {
		t.Fatal(err)
	}
	token := resp.Header.Revision
	report := func() (int, error) {
		runs := 0
		_, err := f.s.Txn(f.ctx, func(tx *store.Tx) error {
			runs++
			tx.Require(clientv3.Compare(clientv3.CreateRevision(claim), "=", token))
			_, err := f.k.TxUpdate(tx, f.key, &edgeproto.ClusterInst{State: edgeproto.TrackedState_TRACKED_STATE_READY},
				mustFM(t, edgeproto.ClusterInstFieldState), nil)
			return err
		})
		return runs, err
	}
	if runs, err := report(); err != nil || runs != 1 {
		t.Fatalf("report under a current claim: %v after %d runs", err, runs)
	}
	// The claim is lost and taken by another holder: the old token fails.
	if _, err := cli.Delete(f.ctx, claim); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Put(f.ctx, claim, "replica-b"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.k.Update(f.ctx, f.key, f.c, mustFM(t, edgeproto.ClusterInstFieldState), nil); err != nil {
		t.Fatal(err)
	}
	runs, err := report()
	if !errors.Is(err, store.ErrPrecondition) || runs != 1 {
		t.Fatalf("report under a stale claim: %v after %d runs", err, runs)
	}
	if got, _, _ := f.k.Get(f.ctx, f.key); got.GetState() != f.c.GetState() {
		t.Fatalf("stale report applied: %v", got.GetState())
	}
}

func TestTxnSeesItsOwnWrites(t *testing.T) {
	t.Parallel()
	f := newTxFixture(t)
	_, err := f.s.Txn(f.ctx, func(tx *store.Tx) error {
		if err := f.k.TxPut(tx, cluster("c0", "acme")); err != nil {
			return err
		}
		f.k.TxDelete(tx, f.key)
		if _, ok, err := f.k.TxGet(tx, f.key); err != nil || ok {
			t.Errorf("deleted key: found %v, %v", ok, err)
		}
		c0, ok, err := f.k.TxGet(tx, "name=c0,organization=acme")
		if err != nil || !ok || c0.GetFlavorName() != "small" {
			t.Errorf("written key: %v %v %v", c0, ok, err)
		}
		list, err := f.k.TxList(tx)
		if err != nil || len(list) != 1 || list[0].GetKey().GetName() != "c0" {
			t.Errorf("list %v %v", list, err)
		}
		// Raw keys beside the objects.
		tx.Put("/edgekit/test/notes/n1", "hello")
		if v, ok, _ := tx.Get("/edgekit/test/notes/n1"); !ok || string(v) != "hello" {
			t.Errorf("raw key: %q %v", v, ok)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	list, _, _ := f.k.List(f.ctx)
	if len(list) != 1 || list[0].GetKey().GetName() != "c0" {
		t.Fatalf("after commit: %v", list)
	}
}

func TestTxnAbortsAndGivesUp(t *testing.T) {
	t.Parallel()
	f := newTxFixture(t, store.WithMaxAttempts(3))
	boom := errors.New("boom")
	rev0, _ := f.s.Txn(f.ctx, func(tx *store.Tx) error {
		_, _, err := f.k.TxGet(tx, f.key)
		return err
	})
	if rev0 < f.rev {
		t.Fatalf("read-only txn revision %d before the fixture's write %d", rev0, f.rev)
	}
	_, err := f.s.Txn(f.ctx, func(tx *store.Tx) error {
		f.k.TxDelete(tx, f.key)
		return boom
	})
	if err != boom {
		t.Fatalf("fn error: %v", err)
	}
	if _, _, err := f.k.Get(f.ctx, f.key); err != nil {
		t.Fatalf("aborted txn wrote: %v", err)
	}
	runs := 0
	_, err = f.s.Txn(f.ctx, func(tx *store.Tx) error {
		runs++
		c, _, err := f.k.TxGet(tx, f.key)
		if err != nil {
			return err
		}
		if _, err := f.k.Put(f.ctx, c); err != nil { // always first
			t.Error(err)
		}
		f.k.TxDelete(tx, f.key)
		return nil
	})
	if !errors.Is(err, store.ErrConflict) || runs != 3 {
		t.Fatalf("err %v after %d runs", err, runs)
	}
}

// With a Require that holds, a changed read still makes the function run
// again.
func TestTxnRequireHoldsReadChanged(t *testing.T) {
	t.Parallel()
	f := newTxFixture(t)
	claim := "/edgekit/test/claims/c1"
	resp, err := f.srv.Client().Put(f.ctx, claim, "replica-a")
	if err != nil {
		t.Fatal(err)
	}
	runs := 0
	_, err = f.s.Txn(f.ctx, func(tx *store.Tx) error {
		runs++
		tx.Require(clientv3.Compare(clientv3.CreateRevision(claim), "=", resp.Header.Revision))
		c, _, err := f.k.TxGet(tx, f.key)
		if err != nil {
			return err
		}
		if runs == 1 {
			if _, err := f.k.Put(f.ctx, c); err != nil {
				t.Error(err)
			}
		}
		c.Reservable = true
		return f.k.TxPut(tx, c)
	})
	if err != nil || runs != 2 {
		t.Fatalf("%v after %d runs", err, runs)
	}
}
