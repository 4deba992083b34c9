package randmsg

import (
	"math/rand/v2"

	"github.com/edgekit/edgekit/fieldmap"
)

// FieldMap returns a random set of the flags of s, at every depth (leaves,
// parents and flags under lists alike), bound to s. Its density varies from
// call to call, from empty to every flag. When actions is true, list and
// map flags that allow list actions (Field.ListActions) and have no set
// ancestor get a random action, so the map passes Schema.Check.
func FieldMap(s *fieldmap.Schema, r *rand.Rand, actions bool) *fieldmap.FieldMap {
	fm := s.NewFieldMap()
	density := [...]float64{0, 0.05, 0.2, 0.5, 0.8, 1}[r.IntN(6)]
	acts := map[string]fieldmap.Action{}
	for _, f := range s.Fields() {
		if r.Float64() >= density {
			continue
		}
		act := fieldmap.Replace
		if actions && f.ListActions {
			act = fieldmap.Action(r.IntN(3)) // Replace, Add or Remove
		}
		acts[f.Flag] = act
	}
	for _, f := range s.Fields() {
		act, ok := acts[f.Flag]
		if !ok {
			continue
		}
		// An action below a set flag would have no effect, which
		// Schema.Check refuses.
		for i := 0; i < len(f.Flag) && act != fieldmap.Replace; i++ {
			if _, set := acts[f.Flag[:i]]; set && f.Flag[i] == '.' {
				act = fieldmap.Replace
			}
		}
		fm.SetAction(f.Flag, act)
	}
	return fm
}
