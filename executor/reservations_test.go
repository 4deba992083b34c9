package executor_test

import (
	"context"
	"errors"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/executor/reservationstest"
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

// TestMemReservationsMatchesModel runs random reserve and release
// sequences, several per update and some aborted, against a plain map and
// checks that Owner, Values and the stored table agree with it at every
// step: the owner index never drifts from the table.
func TestMemReservationsMatchesModel(t *testing.T) {
	r := executor.NewMemReservations()
	ctx := context.Background()
	model := map[string]map[string]string{} // kind -> value -> owner
	kinds := []string{"port", "subnet"}
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 400 {
		next := map[string]map[string]string{}
		for k, vals := range model {
			next[k] = maps.Clone(vals)
		}
		abort := rng.IntN(5) == 0
		err := r.Update(ctx, "site", func(set executor.ReservationSet) error {
			for range 1 + rng.IntN(6) {
				kind := kinds[rng.IntN(len(kinds))]
				owner := "o" + strconv.Itoa(rng.IntN(6))
				value := strconv.Itoa(rng.IntN(20))
				switch rng.IntN(3) {
				case 0:
					set.Release(kind, owner)
					for v, o := range next[kind] {
						if o == owner {
							delete(next[kind], v)
						}
					}
				case 1:
					set.Release("", owner)
					for _, vals := range next {
						for v, o := range vals {
							if o == owner {
								delete(vals, v)
							}
						}
					}
				default:
					err := set.Reserve(kind, value, owner)
					holder := next[kind][value]
					if (err != nil) != (holder != "" && holder != owner) {
						t.Fatalf("round %d: Reserve(%s %s %s) = %v with holder %q", round, kind, value, owner, err, holder)
					}
					if err == nil {
						if next[kind] == nil {
							next[kind] = map[string]string{}
						}
						next[kind][value] = owner
					}
				}
				for _, k := range kinds {
					for o := range 6 {
						owner := "o" + strconv.Itoa(o)
						var want []string
						for v, h := range next[k] {
							if h == owner {
								want = append(want, v)
							}
						}
						slices.Sort(want)
						if got := set.Values(k, owner); !slices.Equal(got, want) {
							t.Fatalf("round %d: Values(%s, %s) = %v, want %v", round, k, owner, got, want)
						}
					}
				}
			}
			if abort {
				return errors.New("abort")
			}
			return nil
		})
		if abort != (err != nil) {
			t.Fatalf("round %d: Update = %v, abort %v", round, err, abort)
		}
		if !abort {
			model = next
		}
		got := r.Snapshot("site")
		for k, vals := range model {
			if len(vals) == 0 {
				delete(model, k)
			}
		}
		if !maps.EqualFunc(got, model, func(a, b map[string]string) bool { return maps.Equal(a, b) }) {
			t.Fatalf("round %d: stored %v, want %v", round, got, model)
		}
	}
}

func TestMemReservationsConformance(t *testing.T) {
	reservationstest.Run(t, func(*testing.T) executor.Reservations { return executor.NewMemReservations() })
}
