package store_test

import (
	"testing"

	"github.com/edgekit/edgekit/internal/store"
)

// Prefetched keys are read at the transaction's one revision, present or
// absent; a key guarded by a Get after its prefetch makes the function run
// again when it changes, a key only prefetched does not.
func TestTxnPrefetch(t *testing.T) {
	t.Parallel()
	f := newTxFixture(t)
	absent := cluster("c9", "acme")
	var seen []string
	runs := 0
	_, err := f.s.Txn(f.ctx, func(tx *store.Tx) error {
		runs++
		if err := tx.Prefetch(f.k.Path(f.key), f.cloudlets.Path(f.cl.GetKeyString()), f.k.Path(absent.GetKeyString()), f.k.Path(f.key)); err != nil {
			return err
		}
		if runs == 1 {
			// After the prefetch: a change of the cluster (read below,
			// guarded) and of the cloudlet (prefetched only).
			other := f.c.Clone()
			other.FlavorName = "changed"
			if _, err := f.k.Put(f.ctx, other); err != nil {
				t.Error(err)
			}
			cl := f.cl.Clone()
			cl.PlatformType = "changed"
			if _, err := f.cloudlets.Put(f.ctx, cl); err != nil {
				t.Error(err)
			}
		}
		c, ok, err := f.k.TxGet(tx, f.key)
		if err != nil || !ok {
			return err
		}
		seen = append(seen, c.GetFlavorName())
		if _, ok, err := f.k.TxGet(tx, absent.GetKeyString()); err != nil || ok {
			t.Errorf("absent cluster: found %v, %v", ok, err)
		}
		c.Reservable = true
		return f.k.TxPut(tx, c)
	})
	if err != nil {
		t.Fatal(err)
	}
	if runs != 2 || len(seen) != 2 || seen[0] != "small" || seen[1] != "changed" {
		t.Fatalf("%d runs saw %v, want 2 runs seeing [small changed]", runs, seen)
	}

	// A change of a key that was only prefetched does not make it run again.
	runs = 0
	_, err = f.s.Txn(f.ctx, func(tx *store.Tx) error {
		runs++
		if err := tx.Prefetch(f.k.Path(f.key), f.cloudlets.Path(f.cl.GetKeyString())); err != nil {
			return err
		}
		if runs == 1 {
			cl := f.cl.Clone()
			cl.PlatformType = "again"
			if _, err := f.cloudlets.Put(f.ctx, cl); err != nil {
				t.Error(err)
			}
		}
		c, _, err := f.k.TxGet(tx, f.key)
		if err != nil {
			return err
		}
		c.FlavorName = "final"
		return f.k.TxPut(tx, c)
	})
	if err != nil || runs != 1 {
		t.Fatalf("%d runs, %v; want 1", runs, err)
	}
	got, _, err := f.k.Get(f.ctx, f.key)
	if err != nil || got.GetFlavorName() != "final" || !got.GetReservable() {
		t.Fatalf("stored %v, %v", got, err)
	}
}
