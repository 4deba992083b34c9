package notify

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// resumeView finds what was created and changed since a revision from the
// placements' revision logs; its answer is the one a walk over every
// object gives, after loads (sets in key order), changes in revision
// order, moves, deletes and re-creates, and compactions of the logs.
func TestResumeViewMatchesAWalkOfEveryObject(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	cloudlets := []string{"op/a", "op/b", "op/c"}
	h := newHub(nil)
	pl := newPlacements()
	// A load: objects in key order, revisions in any order.
	rev := int64(0)
	for i := range 300 {
		create := int64(1 + r.IntN(500))
		mod := create + int64(r.IntN(100))
		pl.set(fmt.Sprintf("AppInst/i%03d", i), placed{cloudlets: []string{cloudlets[r.IntN(3)]}, create: create, mod: mod})
		rev = max(rev, mod)
	}
	pl.sort()
	h.pl, h.rev = pl, rev
	brute := func(ck string, from int64) (kept int64, changed []string) {
		for qk, p := range h.pl.byKey {
			if p.create <= from {
				kept++
			}
			if p.mod > from && !p.on(ck) {
				changed = append(changed, qk)
			}
		}
		slices.Sort(changed)
		return kept, changed
	}
	check := func(step int) {
		t.Helper()
		for _, from := range []int64{0, 1, rev / 3, rev / 2, rev - 5, rev - 1, rev} {
			for _, ck := range cloudlets {
				v := h.resumeView(ck, from, nil)
				kept, changed := brute(ck, from)
				slices.Sort(v.changed)
				if v.kept != kept || !slices.Equal(v.changed, changed) {
					t.Fatalf("step %d, %s from %d: kept %d, changed %v; a walk of every object gives %d, %v", step, ck, from, v.kept, v.changed, kept, changed)
				}
			}
		}
	}
	check(0)
	// Changes in revision order: updates, moves, deletes, creates, with
	// enough churn that the logs are compacted several times.
	for step := 1; step <= 3000; step++ {
		rev++
		qk := fmt.Sprintf("AppInst/i%03d", r.IntN(400))
		old, ok := h.pl.byKey[qk]
		switch op := r.IntN(10); {
		case ok && op == 0:
			h.pl.drop(qk)
		case ok:
			h.pl.set(qk, placed{cloudlets: []string{cloudlets[r.IntN(3)]}, create: old.create, mod: rev})
		default:
			h.pl.set(qk, placed{cloudlets: []string{cloudlets[r.IntN(3)]}, create: rev, mod: rev})
		}
		h.rev = rev
		if step%250 == 0 {
			check(step)
		}
	}
	if n := len(h.pl.creates) + len(h.pl.mods); n > 4*len(h.pl.byKey)+1024 {
		t.Fatalf("the logs hold %d entries for %d objects: not compacted", n, len(h.pl.byKey))
	}
}
