package fieldmap

import (
	"maps"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
)

// Action says how CopyInFields applies a list or map field.
type Action uint8

const (
	// Replace makes the destination field a copy of the source field.
	Replace Action = iota
	// Add appends the source elements the destination lacks (lists) or sets
	// the source entries (maps).
	Add
	// Remove deletes from the destination every element equal to a source
	// element (lists) or every key present in the source (maps).
	Remove
)

func (a Action) String() string {
	switch a {
	case Replace:
		return "replace"
	case Add:
		return "add"
	case Remove:
		return "remove"
	}
	return "Action(" + strconv.Itoa(int(a)) + ")"
}

// FieldMap is a set of flags of one message type. The zero value is an empty
// map with no schema. A FieldMap is not safe for concurrent mutation;
// concurrent queries and CopyInFields calls on an unchanging map are safe.
//
// A map bound to a Schema (Schema.New, Schema.Parse, the generated
// New<Msg>FieldMap and DiffFields) keeps its flags as bit sets over the
// schema's flag numbers, so every query is one lookup of the flag string
// and one bit test, and generated code queries it by number without any
// lookup. Flags the schema does not have, and all flags of a map bound to
// no schema (Of), are kept as strings.
type FieldMap struct {
	schema *Schema

	// Bit sets over the schema's flags: set holds the flags set; cover
	// the flags set or below a set flag (Has); below the flags with a set
	// flag under them (HasChild).
	set, cover, below []uint64
	n                 int              // flags in set
	acts              map[int32]Action // actions other than Replace

	strs strSet // flags outside any schema

	// bound caches the map rebound to the schema of the message
	// CopyInFields was last called on, for maps of no or another schema
	// object.
	bound atomic.Pointer[FieldMap]
	// small holds the bit sets of small schemas, saving an allocation.
	small [6]uint64
}

// alloc sizes the bit sets to the schema.
func (fm *FieldMap) alloc() {
	w := fm.schema.words
	var buf []uint64
	if 3*w <= len(fm.small) {
		buf = fm.small[:3*w]
	} else {
		buf = make([]uint64, 3*w)
	}
	fm.set, fm.cover, fm.below = buf[:w:w], buf[w:2*w:2*w], buf[2*w:]
}

// Of returns a FieldMap with flags set, bound to no schema. It does not
// validate: prefer Schema.New or the generated New<Msg>FieldMap. Applied to
// a message, flags the message does not have select nothing.
func Of(flags ...string) *FieldMap {
	fm := &FieldMap{}
	fm.Set(flags...)
	return fm
}

// Schema returns the schema the map is bound to, or nil.
func (fm *FieldMap) Schema() *Schema {
	if fm == nil {
		return nil
	}
	return fm.schema
}

// lookup returns the number of flag in the map's schema.
func (fm *FieldMap) lookup(flag string) (int32, bool) {
	if fm.schema == nil {
		return 0, false
	}
	i, ok := fm.schema.byFlag[flag]
	return i, ok
}

func bit(s []uint64, i int32) bool { return s[uint32(i)>>6]&(1<<(uint32(i)&63)) != 0 }

// knownAncestorSet reports whether a flag of the schema above flag (which
// the schema need not have) is set.
func (fm *FieldMap) knownAncestorSet(flag string) bool {
	if fm.n == 0 {
		return false
	}
	for i := len(flag) - 1; i > 0; i-- {
		if flag[i] == '.' {
			if j, ok := fm.lookup(flag[:i]); ok {
				return bit(fm.cover, j)
			}
		}
	}
	return false
}

// Has reports whether flag or any of its ancestors is set.
func (fm *FieldMap) Has(flag string) bool {
	if fm == nil {
		return false
	}
	if i, ok := fm.lookup(flag); ok {
		return bit(fm.cover, i)
	}
	return fm.strs.has(flag) || fm.knownAncestorSet(flag)
}

// HasOrHasChild reports whether Has(flag) is true or any descendant of flag
// is set.
func (fm *FieldMap) HasOrHasChild(flag string) bool {
	if fm == nil {
		return false
	}
	if i, ok := fm.lookup(flag); ok {
		return bit(fm.cover, i) || bit(fm.below, i) || fm.strs.hasChild(flag)
	}
	return fm.strs.hasOrHasChild(flag) || fm.knownAncestorSet(flag)
}

// IsSet reports whether flag itself is set.
func (fm *FieldMap) IsSet(flag string) bool {
	if fm == nil {
		return false
	}
	if i, ok := fm.lookup(flag); ok {
		return bit(fm.set, i)
	}
	return fm.strs.isSet(flag)
}

// IsSetOrHasChild reports whether flag itself or a descendant of it is set.
func (fm *FieldMap) IsSetOrHasChild(flag string) bool {
	return fm.IsSet(flag) || fm.HasChild(flag)
}

// HasChild reports whether a proper descendant of flag is set.
func (fm *FieldMap) HasChild(flag string) bool {
	if fm == nil {
		return false
	}
	if i, ok := fm.lookup(flag); ok && bit(fm.below, i) {
		return true
	}
	return fm.strs.hasChild(flag)
}

// ListAction returns the action set on flag, or Replace when flag itself is
// not set (an ancestor or descendant flag always means replace).
func (fm *FieldMap) ListAction(flag string) Action {
	if fm == nil {
		return Replace
	}
	if i, ok := fm.lookup(flag); ok {
		return fm.acts[i]
	}
	return fm.strs.set[flag]
}

// HasAt reports whether flag number i of the map's schema or an ancestor of
// it is set. Generated code calls it with numbers of the schema the map is
// bound to (see Bind).
func (fm *FieldMap) HasAt(i int) bool { return bit(fm.cover, int32(i)) }

// HasChildAt reports whether a flag below flag number i is set.
func (fm *FieldMap) HasChildAt(i int) bool { return bit(fm.below, int32(i)) }

// HasOrHasChildAt is HasAt(i) || HasChildAt(i).
func (fm *FieldMap) HasOrHasChildAt(i int) bool {
	w, b := uint32(i)>>6, uint64(1)<<(uint32(i)&63)
	return (fm.cover[w]|fm.below[w])&b != 0
}

// ListActionAt returns the list action CopyInFields applies to flag number
// i: the action set on it where the schema allows one, else Replace.
func (fm *FieldMap) ListActionAt(i int) Action {
	if len(fm.acts) == 0 || !fm.schema.fields[i].ListActions {
		return Replace
	}
	return fm.acts[int32(i)]
}

// SetAt sets flag number i of the map's schema. Generated DiffFields calls
// it.
func (fm *FieldMap) SetAt(i int) { fm.setID(int32(i), Replace) }

// Set adds flags with the Replace action. It does not validate them; use
// Schema.Check (or the generated ValidateFields) before trusting a map built
// from user input.
func (fm *FieldMap) Set(flags ...string) {
	for _, f := range flags {
		fm.SetAction(f, Replace)
	}
}

// SetAction adds flag with a list action, or changes the action of a set
// flag.
func (fm *FieldMap) SetAction(flag string, act Action) {
	if i, ok := fm.lookup(flag); ok {
		fm.setID(i, act)
		return
	}
	fm.bound.Store(nil)
	fm.strs.setAction(flag, act)
}

// setID sets flag number i of the schema with act.
func (fm *FieldMap) setID(i int32, act Action) {
	fm.bound.Store(nil)
	if act != Replace {
		if fm.acts == nil {
			fm.acts = make(map[int32]Action)
		}
		fm.acts[i] = act
	} else if fm.acts != nil {
		delete(fm.acts, i)
	}
	w, b := uint32(i)>>6, uint64(1)<<(uint32(i)&63)
	if fm.set[w]&b != 0 {
		return
	}
	fm.set[w] |= b
	fm.n++
	fm.mark(i)
}

// mark updates cover and below for a newly set flag i.
func (fm *FieldMap) mark(i int32) {
	s := fm.schema
	fillBits(fm.cover, i, s.end[i])
	for p := s.parent[i]; p >= 0 && !bit(fm.below, p); p = s.parent[p] {
		fm.below[uint32(p)>>6] |= 1 << (uint32(p) & 63)
	}
}

// fillBits sets bits [lo, hi) of s.
func fillBits(s []uint64, lo, hi int32) {
	for lo < hi {
		w, off := uint32(lo)>>6, uint32(lo)&63
		n := min(uint32(hi-lo), 64-off)
		mask := ^uint64(0)
		if n < 64 {
			mask = (uint64(1)<<n - 1) << off
		}
		s[w] |= mask
		lo += int32(n)
	}
}

// Clear removes flags. Clearing a flag that is not set does nothing; it does
// not clear descendants.
func (fm *FieldMap) Clear(flags ...string) {
	if fm == nil {
		return
	}
	fm.bound.Store(nil)
	dirty := false
	for _, flag := range flags {
		i, ok := fm.lookup(flag)
		if !ok {
			fm.strs.clear(flag)
			continue
		}
		w, b := uint32(i)>>6, uint64(1)<<(uint32(i)&63)
		if fm.set[w]&b == 0 {
			continue
		}
		fm.set[w] &^= b
		fm.n--
		delete(fm.acts, i)
		dirty = true
	}
	if !dirty {
		return
	}
	clear(fm.cover)
	clear(fm.below)
	for i := range fm.schema.fields {
		if bit(fm.set, int32(i)) {
			fm.mark(int32(i))
		}
	}
}

// Count returns how many flags are set.
func (fm *FieldMap) Count() int {
	if fm == nil {
		return 0
	}
	return fm.n + len(fm.strs.set)
}

// Fields returns the set flags, sorted by field number at each level
// ("2" < "2.1" < "11").
func (fm *FieldMap) Fields() []string {
	if fm == nil {
		return nil
	}
	out := make([]string, 0, fm.Count())
	if fm.n > 0 {
		for w, word := range fm.set {
			for word != 0 {
				i := w*64 + bits.TrailingZeros64(word)
				out = append(out, fm.schema.fields[i].Flag)
				word &= word - 1
			}
		}
	}
	if len(fm.strs.set) > 0 {
		for f := range fm.strs.set {
			out = append(out, f)
		}
		slices.SortFunc(out, CompareFlags)
	}
	return out
}

// Clone returns a copy of fm that shares nothing with it.
func (fm *FieldMap) Clone() *FieldMap {
	if fm == nil {
		return nil
	}
	c := &FieldMap{schema: fm.schema, n: fm.n}
	if fm.schema != nil {
		c.alloc()
		copy(c.set, fm.set)
		copy(c.cover, fm.cover)
		copy(c.below, fm.below)
	}
	if len(fm.acts) > 0 {
		c.acts = maps.Clone(fm.acts)
	}
	for f, a := range fm.strs.set {
		c.strs.setAction(f, a)
	}
	return c
}

// String renders the set flags, sorted, with their list actions.
func (fm *FieldMap) String() string {
	var b strings.Builder
	b.WriteByte('[')
	for i, f := range fm.Fields() {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(f)
		if a := fm.ListAction(f); a != Replace {
			b.WriteByte(':')
			b.WriteString(a.String())
		}
	}
	b.WriteByte(']')
	return b.String()
}

// CompareFlags orders flags by their numeric components, parents before
// children. It returns -1, 0 or +1.
func CompareFlags(a, b string) int {
	for {
		ea, ra, _ := strings.Cut(a, ".")
		eb, rb, _ := strings.Cut(b, ".")
		if len(ea) != len(eb) {
			if len(ea) < len(eb) {
				return -1
			}
			return 1
		}
		if c := strings.Compare(ea, eb); c != 0 {
			return c
		}
		switch {
		case ra == "" && rb == "":
			return 0
		case ra == "":
			return -1
		case rb == "":
			return 1
		}
		a, b = ra, rb
	}
}

// Windows returns the bits of flags at to at+63 of the map's schema: cover
// (the flag or an ancestor is set, HasAt) and below (a flag under it is
// set, HasChildAt). Generated code reads the flags of a message's own
// fields from them with register operations.
func (fm *FieldMap) Windows(at int) (cover, below uint64) {
	w, off := uint(at)>>6, uint(at)&63
	cover, below = fm.cover[w]>>off, fm.below[w]>>off
	if off != 0 && w+1 < uint(len(fm.cover)) {
		cover |= fm.cover[w+1] << (64 - off)
		below |= fm.below[w+1] << (64 - off)
	}
	return cover, below
}
