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
			base = newMemSet()
			r.sets[cloudlet] = base
		}
		version := base.version
		r.mu.Unlock()

		// fn reads base without the lock: only updates of this cloudlet
		// write it, and they are serialised by ul (a BeforeCommit hook
		// writes only after fn returned).
		work := newMemOverlay(base)
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

// memSet is the stored reservation table of one cloudlet, indexed both
// ways: kind -> value -> owner, and owner -> kind -> values, so that
// Release and Values cost what the owner holds, not the table's size.
type memSet struct {
	version uint64
	kinds   map[string]map[string]string              // kind -> value -> owner
	owners  map[string]map[string]map[string]struct{} // owner -> kind -> values
}

func newMemSet() *memSet {
	return &memSet{kinds: map[string]map[string]string{}, owners: map[string]map[string]map[string]struct{}{}}
}

// put makes owner ("" for nobody) hold value of kind, keeping both indexes.
func (s *memSet) put(kind, value, owner string) {
	if old, ok := s.kinds[kind][value]; ok {
		if old == owner {
			return
		}
		indexDel(s.owners, old, kind, value)
		delete(s.kinds[kind], value)
		if len(s.kinds[kind]) == 0 {
			delete(s.kinds, kind)
		}
	}
	if owner == "" {
		return
	}
	if s.kinds[kind] == nil {
		s.kinds[kind] = map[string]string{}
	}
	s.kinds[kind][value] = owner
	indexAdd(s.owners, owner, kind, value)
}

// indexAdd and indexDel maintain an owner -> kind -> values index, dropping
// empty inner maps so the index never holds more than the table.
func indexAdd(idx map[string]map[string]map[string]struct{}, owner, kind, value string) {
	byKind := idx[owner]
	if byKind == nil {
		byKind = map[string]map[string]struct{}{}
		idx[owner] = byKind
	}
	if byKind[kind] == nil {
		byKind[kind] = map[string]struct{}{}
	}
	byKind[kind][value] = struct{}{}
}

func indexDel(idx map[string]map[string]map[string]struct{}, owner, kind, value string) {
	byKind := idx[owner]
	delete(byKind[kind], value)
	if len(byKind[kind]) == 0 {
		delete(byKind, kind)
	}
	if len(byKind) == 0 {
		delete(idx, owner)
	}
}

// memOverlay is what an update function works on: the changes it made over
// the stored set, applied by commit. An empty owner in changes is a
// release. claimed indexes the changes by new owner, so that an owner's
// values are found among the base's (through its index) and the changes'
// without scanning either.
type memOverlay struct {
	base    *memSet
	changes map[string]map[string]string              // kind -> value -> new owner
	claimed map[string]map[string]map[string]struct{} // new owner -> kind -> values
}

var _ ReservationSet = (*memOverlay)(nil)

func newMemOverlay(base *memSet) *memOverlay {
	return &memOverlay{base: base, changes: map[string]map[string]string{}, claimed: map[string]map[string]map[string]struct{}{}}
}

func (s *memOverlay) Owner(kind, value string) string {
	if o, ok := s.changes[kind][value]; ok {
		return o
	}
	return s.base.kinds[kind][value]
}

func (s *memOverlay) set(kind, value, owner string) {
	if prev, ok := s.changes[kind][value]; ok && prev != "" {
		indexDel(s.claimed, prev, kind, value)
	}
	if s.changes[kind] == nil {
		s.changes[kind] = map[string]string{}
	}
	s.changes[kind][value] = owner
	if owner != "" {
		indexAdd(s.claimed, owner, kind, value)
	}
}

func (s *memOverlay) Reserve(kind, value, owner string) error {
	if holder := s.Owner(kind, value); holder != "" && holder != owner {
		return &ReservedError{Kind: kind, Value: value, Owner: owner, Holder: holder}
	}
	s.set(kind, value, owner)
	return nil
}

// candidates lists the values of kind that owner may hold: those it holds
// in the base and those the changes gave it. Each must still be checked
// with Owner, since a change may have released a base value.
func (s *memOverlay) candidates(kind, owner string) []string {
	var out []string
	for v := range s.base.owners[owner][kind] {
		out = append(out, v)
	}
	for v := range s.claimed[owner][kind] {
		if _, inBase := s.base.owners[owner][kind][v]; !inBase {
			out = append(out, v)
		}
	}
	return out
}

func (s *memOverlay) Release(kind, owner string) {
	kinds := []string{kind}
	if kind == "" {
		kinds = kinds[:0]
		for k := range s.base.owners[owner] {
			kinds = append(kinds, k)
		}
		for k := range s.claimed[owner] {
			if _, inBase := s.base.owners[owner][k]; !inBase {
				kinds = append(kinds, k)
			}
		}
	}
	for _, k := range kinds {
		for _, v := range s.candidates(k, owner) {
			if s.Owner(k, v) == owner {
				s.set(k, v, "")
			}
		}
	}
}

func (s *memOverlay) Values(kind, owner string) []string {
	var out []string
	for _, v := range s.candidates(kind, owner) {
		if s.Owner(kind, v) == owner {
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
			s.base.put(k, v, o)
		}
	}
	s.base.version++
}
