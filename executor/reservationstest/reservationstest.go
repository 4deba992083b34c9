// Package reservationstest is the conformance suite of
// executor.Reservations: what the in-memory implementation and every
// shared one (etcd) must do, run by each implementation's tests with Run.
package reservationstest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/edgekit/edgekit/executor"
)

// New returns an empty Reservations for one subtest.
type New func(t *testing.T) executor.Reservations

// Run runs the suite on the implementation new builds.
func Run(t *testing.T, newRes New) {
	t.Run("owners", func(t *testing.T) { t.Parallel(); owners(t, newRes(t)) })
	t.Run("failed update stores nothing", func(t *testing.T) { t.Parallel(); failedUpdate(t, newRes(t)) })
	t.Run("cloudlets are independent", func(t *testing.T) { t.Parallel(); independent(t, newRes(t)) })
	t.Run("release", func(t *testing.T) { t.Parallel(); releases(t, newRes(t)) })
	t.Run("concurrent reservers", func(t *testing.T) {
		t.Parallel()
		r := newRes(t)
		const n = 50
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for i := range n {
			wg.Go(func() {
				if _, err := TakeLowest(ctxOf(t), r, "site1", executor.ReservePort, "o"+strconv.Itoa(i)); err != nil {
					errs <- err
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		owners := make([]string, n)
		for i := range owners {
			owners[i] = "o" + strconv.Itoa(i)
		}
		if err := CheckUnique(ctxOf(t), r, "site1", executor.ReservePort, owners, 1); err != nil {
			t.Error(err)
		}
	})
}

func ctxOf(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// TakeLowest reserves for owner the lowest free value ("0", "1"...) of
// kind on cloudlet, and returns it.
func TakeLowest(ctx context.Context, r executor.Reservations, cloudlet, kind, owner string) (string, error) {
	var got string
	err := r.Update(ctx, cloudlet, func(set executor.ReservationSet) error {
		for p := 0; ; p++ {
			if v := strconv.Itoa(p); set.Owner(kind, v) == "" {
				got = v
				return set.Reserve(kind, v, owner)
			}
		}
	})
	return got, err
}

// CheckUnique checks that each owner holds exactly per values of kind on
// cloudlet and that no value is held by two owners.
func CheckUnique(ctx context.Context, r executor.Reservations, cloudlet, kind string, owners []string, per int) error {
	var problems []error
	err := r.Update(ctx, cloudlet, func(set executor.ReservationSet) error {
		problems = nil
		seen := map[string]string{}
		for _, o := range owners {
			vals := set.Values(kind, o)
			if len(vals) != per {
				problems = append(problems, fmt.Errorf("%s holds %v, want %d values", o, vals, per))
			}
			for _, v := range vals {
				if prev, dup := seen[v]; dup {
					problems = append(problems, fmt.Errorf("%s %s handed to %s and %s", kind, v, prev, o))
				}
				seen[v] = o
				if h := set.Owner(kind, v); h != o {
					problems = append(problems, fmt.Errorf("%s %s: Owner says %q, Values says %q", kind, v, h, o))
				}
			}
		}
		return nil
	})
	return errors.Join(append(problems, err)...)
}

func update(t *testing.T, r executor.Reservations, cloudlet string, fn func(set executor.ReservationSet) error) error {
	t.Helper()
	return r.Update(ctxOf(t), cloudlet, fn)
}

func owners(t *testing.T, r executor.Reservations) {
	err := update(t, r, "site1", func(set executor.ReservationSet) error {
		if err := set.Reserve("port", "10000", "a"); err != nil {
			return err
		}
		if err := set.Reserve("port", "10000", "a"); err != nil { // again, same owner
			return err
		}
		if got := set.Owner("port", "10000"); got != "a" {
			t.Errorf("Owner within the update = %q, want a", got)
		}
		return set.Reserve("subnet", "10.0.0.0/24", "a")
	})
	if err != nil {
		t.Fatal(err)
	}
	err = update(t, r, "site1", func(set executor.ReservationSet) error {
		return set.Reserve("port", "10000", "b")
	})
	var re *executor.ReservedError
	if !errors.Is(err, executor.ErrReserved) || !errors.As(err, &re) || re.Holder != "a" {
		t.Fatalf("reserving a held value: %v", err)
	}
	_ = update(t, r, "site1", func(set executor.ReservationSet) error {
		if got := set.Owner("subnet", "10.0.0.0/24"); got != "a" {
			t.Errorf("subnet owner = %q, want a", got)
		}
		if got := set.Owner("port", "10001"); got != "" {
			t.Errorf("free value owner = %q", got)
		}
		if err := set.Reserve("port", "10002", "a"); err != nil {
			return err
		}
		if err := set.Reserve("port", "10001", "a"); err != nil {
			return err
		}
		if got := set.Values("port", "a"); !slices.Equal(got, []string{"10000", "10001", "10002"}) {
			t.Errorf("Values = %v, want sorted 10000 10001 10002", got)
		}
		return nil
	})
}

func failedUpdate(t *testing.T, r executor.Reservations) {
	abort := errors.New("abort")
	err := update(t, r, "site1", func(set executor.ReservationSet) error {
		_ = set.Reserve("port", "10001", "b")
		return abort
	})
	if !errors.Is(err, abort) {
		t.Fatalf("Update returned %v, want fn's error", err)
	}
	_ = update(t, r, "site1", func(set executor.ReservationSet) error {
		if got := set.Owner("port", "10001"); got != "" {
			t.Errorf("an aborted update was stored: owner %q", got)
		}
		return nil
	})
}

func independent(t *testing.T, r executor.Reservations) {
	for _, cl := range []string{"site1", "site2"} {
		if err := update(t, r, cl, func(set executor.ReservationSet) error {
			return set.Reserve("port", "10000", "owner-"+cl)
		}); err != nil {
			t.Fatalf("%s: %v", cl, err)
		}
	}
	_ = update(t, r, "site2", func(set executor.ReservationSet) error {
		if got := set.Owner("port", "10000"); got != "owner-site2" {
			t.Errorf("site2 owner = %q", got)
		}
		return nil
	})
}

func releases(t *testing.T, r executor.Reservations) {
	if err := update(t, r, "site1", func(set executor.ReservationSet) error {
		return errors.Join(set.Reserve("port", "1", "a"), set.Reserve("port", "2", "a"), set.Reserve("subnet", "s1", "a"),
			set.Reserve("port", "3", "b"))
	}); err != nil {
		t.Fatal(err)
	}
	_ = update(t, r, "site1", func(set executor.ReservationSet) error {
		set.Release("port", "a")
		return nil
	})
	_ = update(t, r, "site1", func(set executor.ReservationSet) error {
		if got := set.Values("port", "a"); len(got) != 0 {
			t.Errorf("ports of a after releasing them: %v", got)
		}
		if got := set.Values("subnet", "a"); !slices.Equal(got, []string{"s1"}) {
			t.Errorf("releasing ports released subnets too: %v", got)
		}
		if got := set.Owner("port", "3"); got != "b" {
			t.Errorf("releasing a's ports touched b's: %q", got)
		}
		set.Release("", "a")
		return nil
	})
	_ = update(t, r, "site1", func(set executor.ReservationSet) error {
		if got := set.Values("subnet", "a"); len(got) != 0 {
			t.Errorf("values of a after releasing every kind: %v", got)
		}
		// Released values can be taken again.
		return set.Reserve("port", "1", "c")
	})
}
