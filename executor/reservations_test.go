package executor_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"

	"github.com/edgekit/edgekit/executor"
)

func TestMemReservationsOwners(t *testing.T) {
	r := executor.NewMemReservations()
	ctx := context.Background()
	err := r.Update(ctx, "site1", func(set executor.ReservationSet) error {
		if err := set.Reserve("port", "10000", "a"); err != nil {
			return err
		}
		if err := set.Reserve("port", "10000", "a"); err != nil { // again, same owner
			return err
		}
		return set.Reserve("subnet", "10.0.0.0/24", "a")
	})
	if err != nil {
		t.Fatal(err)
	}
	err = r.Update(ctx, "site1", func(set executor.ReservationSet) error {
		return set.Reserve("port", "10000", "b")
	})
	var re *executor.ReservedError
	if !errors.Is(err, executor.ErrReserved) || !errors.As(err, &re) || re.Holder != "a" {
		t.Fatalf("reserving a held value: %v", err)
	}
	// A failed update stores nothing.
	_ = r.Update(ctx, "site1", func(set executor.ReservationSet) error {
		_ = set.Reserve("port", "10001", "b")
		return errors.New("abort")
	})
	if got := r.Snapshot("site1")["port"]; len(got) != 1 {
		t.Errorf("aborted update was stored: %v", got)
	}
	// Other cloudlets are independent.
	if err := r.Update(ctx, "site2", func(set executor.ReservationSet) error {
		return set.Reserve("port", "10000", "b")
	}); err != nil {
		t.Fatal(err)
	}
	_ = r.Update(ctx, "site1", func(set executor.ReservationSet) error {
		if got := set.Values("port", "a"); len(got) != 1 || got[0] != "10000" {
			t.Errorf("Values = %v", got)
		}
		set.Release("", "a")
		return nil
	})
	if got := r.Snapshot("site1"); len(got) != 0 {
		t.Errorf("after release: %v", got)
	}
}

// TestMemReservationsConflictRerun injects a concurrent writer between fn
// and its commit: fn runs again on the new version and sees the value the
// other writer took.
func TestMemReservationsConflictRerun(t *testing.T) {
	r := executor.NewMemReservations()
	ctx := context.Background()
	r.BeforeCommit = func(cloudlet string, attempt int) {
		if attempt != 1 {
			return
		}
		r.BeforeCommit = nil // the nested update commits without a hook
		if err := r.Update(ctx, cloudlet, func(set executor.ReservationSet) error {
			return set.Reserve("port", "10000", "intruder")
		}); err != nil {
			t.Errorf("nested update: %v", err)
		}
	}
	runs := 0
	var got string
	err := r.Update(ctx, "site1", func(set executor.ReservationSet) error {
		runs++
		for p := 10000; ; p++ {
			v := strconv.Itoa(p)
			if set.Owner("port", v) == "" {
				got = v
				return set.Reserve("port", v, "me")
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if runs != 2 {
		t.Errorf("fn ran %d times, want 2", runs)
	}
	if got != "10001" {
		t.Errorf("reserved %s, want 10001 (10000 went to the intruder)", got)
	}
	snap := r.Snapshot("site1")["port"]
	if snap["10000"] != "intruder" || snap["10001"] != "me" {
		t.Errorf("snapshot %v", snap)
	}
}

func TestMemReservationsGivesUpOnEndlessConflict(t *testing.T) {
	r := &executor.MemReservations{MaxRetries: 2}
	ctx := context.Background()
	n := 0
	r.BeforeCommit = func(cloudlet string, _ int) {
		n++
		hook := r.BeforeCommit
		r.BeforeCommit = nil
		_ = r.Update(ctx, cloudlet, func(set executor.ReservationSet) error {
			return set.Reserve("k", strconv.Itoa(n), "other")
		})
		r.BeforeCommit = hook
	}
	err := r.Update(ctx, "site1", func(set executor.ReservationSet) error { return nil })
	if !errors.Is(err, executor.ErrConflict) {
		t.Fatalf("err = %v, want ErrConflict", err)
	}
}

// TestMemReservationsConcurrent has many writers take the lowest free value:
// none is handed out twice.
func TestMemReservationsConcurrent(t *testing.T) {
	r := executor.NewMemReservations()
	const n = 50
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			owner := "o" + strconv.Itoa(i)
			err := r.Update(context.Background(), "site1", func(set executor.ReservationSet) error {
				for p := 0; ; p++ {
					if v := strconv.Itoa(p); set.Owner("port", v) == "" {
						return set.Reserve("port", v, owner)
					}
				}
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	snap := r.Snapshot("site1")["port"]
	owners := map[string]bool{}
	for _, o := range snap {
		owners[o] = true
	}
	if len(snap) != n || len(owners) != n {
		t.Errorf("%d values for %d owners, want %d each", len(snap), len(owners), n)
	}
}
