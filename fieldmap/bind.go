package fieldmap

import "fmt"

// Bind returns the map generated code of the message of schema s queries
// by flag number: fm itself when it is bound to s, else (a map bound to no
// schema, or to another Schema object of the same message) a copy bound to
// s, cached in fm when fm holds flags as strings. A flag s does not have
// selects what the flags of its string reading would: its nearest
// ancestor s has reads as having a set flag below it (so a flag under a
// list selects the list). Bind returns nil when fm is nil, or is not fm
// and would select nothing; an empty map bound to s is returned as is.
//
// Bind panics when fm is bound to the schema of another message: applying
// the flags of one message to another is a programming error (the same
// numbers name unrelated fields), which no caller can handle better than
// by fixing the call.
func (fm *FieldMap) Bind(s *Schema) *FieldMap {
	if fm != nil && fm.schema == s && fm.rebound == nil {
		return fm // no flag kept as a string
	}
	return fm.bindSlow(s)
}

// bindSlow is Bind for maps not bound to s alone.
func (fm *FieldMap) bindSlow(s *Schema) *FieldMap {
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
	if fm.rebound != nil {
		if b := fm.rebound.p.Load(); b != nil && b.schema == s { // cached
			if b.n == 0 && !b.anyBelow() {
				return nil
			}
			return b
		}
	}
	b := s.NewFieldMap()
	for _, f := range fm.Fields() {
		if i, exact := s.find(f); exact {
			b.setID(i, fm.ListAction(f))
		} else if i >= 0 {
			// A flag s does not have, below flag i of s.
			b.markBelow(i)
		}
	}
	if fm.rebound != nil {
		fm.rebound.p.Store(b)
	}
	if b.n == 0 && !b.anyBelow() {
		return nil
	}
	return b
}

// anyBelow reports whether a below bit is set.
func (fm *FieldMap) anyBelow() bool {
	for _, w := range fm.belowBits() {
		if w != 0 {
			return true
		}
	}
	return false
}
