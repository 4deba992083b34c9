package fieldmap

import "fmt"

// Bind returns the map generated code of the message of schema s queries
// by flag number: fm itself when it is bound to s, else (a map bound to no
// schema, or to another Schema object of the same message) a copy bound to
// s, cached in fm. A flag s does not have selects what the flags of its
// string reading would: its nearest ancestor s has reads as having a set
// flag below it (so a flag under a list selects the list). Bind returns nil
// when fm is nil or selects nothing.
//
// Bind panics when fm is bound to the schema of another message: applying
// the flags of one message to another is a programming error (the same
// numbers name unrelated fields), which no caller can handle better than
// by fixing the call.
func (fm *FieldMap) Bind(s *Schema) *FieldMap {
	if fm == nil || fm.Count() == 0 {
		return nil
	}
	if fm.schema == s && len(fm.strs.set) == 0 {
		return fm
	}
	if fm.schema != nil && fm.schema.message != s.message {
		panic(fmt.Sprintf("fieldmap: a FieldMap of %s is applied to %s (build it with the schema of %s)",
			fm.schema.message, s.message, s.message))
	}
	if b := fm.bound.Load(); b != nil && b.schema == s {
		if b.n == 0 && !b.anyBelow() {
			return nil
		}
		return b
	}
	b := s.NewFieldMap()
	for _, f := range fm.Fields() {
		if i, ok := s.id(f); ok {
			b.setID(i, fm.ListAction(f))
		} else {
			b.markBelowKnownAncestor(f)
		}
	}
	fm.bound.Store(b)
	if b.n == 0 && !b.anyBelow() {
		return nil
	}
	return b
}

// markBelowKnownAncestor records that a flag the schema does not have is
// set below its nearest ancestor the schema has, if any.
func (fm *FieldMap) markBelowKnownAncestor(flag string) {
	for i := len(flag) - 1; i > 0; i-- {
		if flag[i] != '.' {
			continue
		}
		if p, ok := fm.schema.id(flag[:i]); ok {
			for ; p >= 0 && !bit(fm.below, p); p = fm.schema.parent[p] {
				fm.below[uint32(p)>>6] |= 1 << (uint32(p) & 63)
			}
			return
		}
	}
}

// anyBelow reports whether a below bit is set.
func (fm *FieldMap) anyBelow() bool {
	for _, w := range fm.below {
		if w != 0 {
			return true
		}
	}
	return false
}
