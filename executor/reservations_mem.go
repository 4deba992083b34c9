package executor

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
)

// DefaultMaxConflictRetries is how often MemReservations re-runs an update
// function that lost a race before it gives up with ErrConflict.
const DefaultMaxConflictRetries = 16

// MemReservations is the in-memory Reservations of a single process (the
// CRM). Updates behave like those of a shared store: fn's changes are
// stored only if nobody stored another version meanwhile; otherwise fn runs
// again on the new version. An update costs what fn touches, not the size
// of the table. Updates of one
// cloudlet are serialised, so conflicts arise only through BeforeCommit,
// which tests use to exercise re-runs. The zero value is ready to use and
// safe for concurrent use.
type MemReservations struct {
	// MaxRetries bounds the re-runs of fn on conflict; 0 means
	// DefaultMaxConflictRetries.
	MaxRetries int
	// BeforeCommit, when set, runs after fn and before its result is
	// stored, with no lock held: a test hook that can write the same
	// cloudlet concurrently to provoke a conflict and a re-run.
	BeforeCommit func(cloudlet string, attempt int)

	mu    sync.Mutex
	sets  map[string]*memSet
	locks map[string]*sync.Mutex // serialise updates per cloudlet
}

var _ Reservations = (*MemReservations)(nil)

// NewMemReservations returns an empty in-memory reservation store.
func NewMemReservations() *MemReservations { return &MemReservations{} }

// Update implements Reservations.
func (r *MemReservations) Update(ctx context.Context, cloudlet string, fn func(set ReservationSet) error) error {
	max := r.MaxRetries
	if max <= 0 {
		max = DefaultMaxConflictRetries
	}
	ul := r.lockFor(cloudlet)
	ul.Lock()
	defer ul.Unlock()
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		r.mu.Lock()
		if r.sets == nil {
			r.sets = make(map[string]*memSet)
		}
		base := r.sets[cloudlet]
		if base == nil {
			base = &memSet{kinds: map[string]map[string]string{}}
			r.sets[cloudlet] = base
		}
		version := base.version
		r.mu.Unlock()

		// fn reads base without the lock: only updates of this cloudlet
		// write it, and they are serialised by ul (a BeforeCommit hook
		// writes only after fn returned).
		work := &memOverlay{base: base, changes: map[string]map[string]string{}}
		if err := fn(work); err != nil {
			return err
		}
		if r.BeforeCommit != nil {
			ul.Unlock()
			r.BeforeCommit(cloudlet, attempt)
			ul.Lock()
		}

		r.mu.Lock()
		if base.version != version {
			r.mu.Unlock()
			if attempt > max {
				return fmt.Errorf("reservations of cloudlet %s: %w after %d attempts", cloudlet, ErrConflict, attempt)
			}
			continue
		}
		work.commit()
		r.mu.Unlock()
		return nil
	}
}

func (r *MemReservations) lockFor(cloudlet string) *sync.Mutex {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.locks == nil {
		r.locks = map[string]*sync.Mutex{}
	}
	l := r.locks[cloudlet]
	if l == nil {
		l = &sync.Mutex{}
		r.locks[cloudlet] = l
	}
	return l
}

// Snapshot returns a copy of the reservations of a cloudlet: kind -> value
// -> owner. Tests use it to check that nothing leaked.
func (r *MemReservations) Snapshot(cloudlet string) map[string]map[string]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]map[string]string{}
	if s := r.sets[cloudlet]; s != nil {
		for k, vals := range s.kinds {
			if len(vals) > 0 {
				out[k] = maps.Clone(vals)
			}
		}
	}
	return out
}

// memSet is the stored reservation table of one cloudlet.
type memSet struct {
	version uint64
	kinds   map[string]map[string]string // kind -> value -> owner
}

// memOverlay is what an update function works on: the changes it made over
// the stored set, applied by commit. An empty owner in changes is a
// release.
type memOverlay struct {
	base    *memSet
	changes map[string]map[string]string
}

var _ ReservationSet = (*memOverlay)(nil)

func (s *memOverlay) Owner(kind, value string) string {
	if o, ok := s.changes[kind][value]; ok {
		return o
	}
	return s.base.kinds[kind][value]
}

func (s *memOverlay) set(kind, value, owner string) {
	if s.changes[kind] == nil {
		s.changes[kind] = map[string]string{}
	}
	s.changes[kind][value] = owner
}

func (s *memOverlay) Reserve(kind, value, owner string) error {
	if holder := s.Owner(kind, value); holder != "" && holder != owner {
		return &ReservedError{Kind: kind, Value: value, Owner: owner, Holder: holder}
	}
	s.set(kind, value, owner)
	return nil
}

func (s *memOverlay) Release(kind, owner string) {
	for _, m := range []map[string]map[string]string{s.base.kinds, s.changes} {
		for k, vals := range m {
			if kind != "" && k != kind {
				continue
			}
			for v := range vals {
				if s.Owner(k, v) == owner {
					s.set(k, v, "")
				}
			}
		}
	}
}

func (s *memOverlay) Values(kind, owner string) []string {
	var out []string
	for v := range s.base.kinds[kind] {
		if s.Owner(kind, v) == owner {
			out = append(out, v)
		}
	}
	for v, o := range s.changes[kind] {
		if _, inBase := s.base.kinds[kind][v]; !inBase && o == owner {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out
}

// commit applies the changes to the stored set; the caller holds the lock.
func (s *memOverlay) commit() {
	for k, vals := range s.changes {
		for v, o := range vals {
			switch {
			case o == "":
				delete(s.base.kinds[k], v)
			default:
				if s.base.kinds[k] == nil {
					s.base.kinds[k] = map[string]string{}
				}
				s.base.kinds[k][v] = o
			}
		}
	}
	s.base.version++
}
