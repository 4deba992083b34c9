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
// schema's flag numbers, so every query walks the flag's field numbers
// down the schema's flag tree and tests one bit, and generated code
// queries it by number without any lookup. Flags the schema does not
// have, and all flags of a map bound to no schema (Of), are kept as
// strings.
type FieldMap struct {
	schema *Schema
	n      int32 // flags in the bit sets
	w      int32 // words of one bit set

	// The bit sets over the schema's flags, each w words, one after the
	// other in inl (schemas of up to inlineWords*64 flags) or ext: set
	// holds the flags set; cover the flags set or below a set flag (Has);
	// below the flags with a set flag under them (HasChild).
	ext []uint64
	inl [3 * inlineWords]uint64

	acts map[int32]Action // actions other than Replace
	strs strSet           // flags outside any schema

	// rebound caches the map rebound to the schema of the message
	// CopyInFields was last called on, for maps holding flags as strings
	// (see Bind). It is a pointer, allocated with the first such flag, so
	// that setting flags never stores the address of the map itself: a
	// map built and used in one function can live on its stack.
	rebound *rebound
}

// rebound caches a rebinding of a FieldMap.
type rebound struct{ p atomic.Pointer[FieldMap] }

// inlineWords is the size of the bit sets a FieldMap holds without
// allocating them apart: 128 flags.
const inlineWords = 2

// init binds an empty fm to schema s and sizes its bit sets.
func (fm *FieldMap) init(s *Schema) {
	s.load()
	fm.schema, fm.w = s, int32(s.words)
	if s.words > inlineWords {
		fm.ext = make([]uint64, 3*s.words)
	}
}

// words returns the three bit sets, one after the other.
func (fm *FieldMap) words() []uint64 {
	if fm.ext != nil {
		return fm.ext
	}
	return fm.inl[:3*fm.w]
}

// coverAt reports whether bit i of cover is set.
func (fm *FieldMap) coverAt(i int32) bool {
	k, b := uint32(i)>>6+uint32(fm.w), uint64(1)<<(uint32(i)&63)
	if fm.ext != nil {
		return fm.ext[k]&b != 0
	}
	return fm.inl[k]&b != 0
}

func (fm *FieldMap) setBits() []uint64   { return fm.words()[:fm.w] }
func (fm *FieldMap) coverBits() []uint64 { return fm.words()[fm.w : 2*fm.w] }
func (fm *FieldMap) belowBits() []uint64 { return fm.words()[2*fm.w:] }

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

// find returns the number of flag in the map's schema and true, or the
// number of its nearest ancestor the schema has (-1 when none) and false.
func (fm *FieldMap) find(flag string) (int32, bool) {
	if fm.schema == nil {
		return -1, false
	}
	return fm.schema.find(flag)
}

func bit(s []uint64, i int32) bool { return s[uint32(i)>>6]&(1<<(uint32(i)&63)) != 0 }

// Has reports whether flag or any of its ancestors is set.
func (fm *FieldMap) Has(flag string) bool {
	if fm == nil {
		return false
	}
	if fm.n > 0 {
		i, exact := fm.find(flag)
		if exact {
			return fm.coverAt(i) // its ancestors are all in the schema
		}
		if i >= 0 && fm.coverAt(i) {
			return true
		}
	}
	return fm.strs.has(flag)
}

// HasOrHasChild reports whether Has(flag) is true or any descendant of flag
// is set.
func (fm *FieldMap) HasOrHasChild(flag string) bool {
	if fm == nil {
		return false
	}
	if fm.n > 0 {
		i, exact := fm.find(flag)
		if exact {
			return bit(fm.coverBits(), i) || bit(fm.belowBits(), i) || fm.strs.hasChild(flag)
		}
		if i >= 0 && bit(fm.coverBits(), i) {
			return true
		}
	}
	return fm.strs.hasOrHasChild(flag)
}

// IsSet reports whether flag itself is set.
func (fm *FieldMap) IsSet(flag string) bool {
	if fm == nil {
		return false
	}
	if fm.n > 0 {
		if i, exact := fm.find(flag); exact {
			return bit(fm.setBits(), i)
		}
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
	if fm.n > 0 {
		if i, exact := fm.find(flag); exact && bit(fm.belowBits(), i) {
			return true
		}
	}
	return fm.strs.hasChild(flag)
}

// ListAction returns the action set on flag, or Replace when flag itself is
// not set (an ancestor or descendant flag always means replace).
func (fm *FieldMap) ListAction(flag string) Action {
	if fm == nil {
		return Replace
	}
	if i, exact := fm.find(flag); exact {
		return fm.acts[i]
	}
	return fm.strs.set[flag]
}

// HasAt reports whether flag number i of the map's schema or an ancestor of
// it is set. Generated code calls it with numbers of the schema the map is
// bound to (see Bind).
func (fm *FieldMap) HasAt(i int) bool { return bit(fm.coverBits(), int32(i)) }

// HasChildAt reports whether a flag below flag number i is set.
func (fm *FieldMap) HasChildAt(i int) bool { return bit(fm.belowBits(), int32(i)) }

// HasOrHasChildAt is HasAt(i) || HasChildAt(i).
func (fm *FieldMap) HasOrHasChildAt(i int) bool {
	return fm.HasAt(i) || fm.HasChildAt(i)
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
	if i, exact := fm.find(flag); exact {
		fm.setID(i, act)
		return
	}
	fm.unbind()
	if fm.rebound == nil {
		fm.rebound = new(rebound)
	}
	fm.strs.setAction(flag, act)
}

// unbind drops the cached rebinding of a changed map.
func (fm *FieldMap) unbind() {
	if fm.rebound != nil && fm.rebound.p.Load() != nil {
		fm.rebound.p.Store(nil)
	}
}

// setID sets flag number i of the schema with act.
func (fm *FieldMap) setID(i int32, act Action) {
	fm.unbind()
	if act != Replace {
		if fm.acts == nil {
			fm.acts = make(map[int32]Action)
		}
		fm.acts[i] = act
	} else if fm.acts != nil {
		delete(fm.acts, i)
	}
	set := fm.setBits()
	w, b := uint32(i)>>6, uint64(1)<<(uint32(i)&63)
	if set[w]&b != 0 {
		return
	}
	set[w] |= b
	fm.n++
	fm.mark(i)
}

// mark updates cover and below for a newly set flag i.
func (fm *FieldMap) mark(i int32) {
	s := fm.schema
	fillBits(fm.coverBits(), i, s.end[i])
	fm.markBelow(s.parent[i])
}

// markBelow records that a set flag lies below flag p and its ancestors.
func (fm *FieldMap) markBelow(p int32) {
	below, parent := fm.belowBits(), fm.schema.parent
	for ; p >= 0 && !bit(below, p); p = parent[p] {
		below[uint32(p)>>6] |= 1 << (uint32(p) & 63)
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
	fm.unbind()
	dirty := false
	for _, flag := range flags {
		i, exact := fm.find(flag)
		if !exact {
			fm.strs.clear(flag)
			continue
		}
		set := fm.setBits()
		w, b := uint32(i)>>6, uint64(1)<<(uint32(i)&63)
		if set[w]&b == 0 {
			continue
		}
		set[w] &^= b
		fm.n--
		delete(fm.acts, i)
		dirty = true
	}
	if !dirty {
		return
	}
	clear(fm.coverBits())
	clear(fm.belowBits())
	set := fm.setBits()
	for i := range fm.schema.fields {
		if bit(set, int32(i)) {
			fm.mark(int32(i))
		}
	}
}

// Count returns how many flags are set.
func (fm *FieldMap) Count() int {
	if fm == nil {
		return 0
	}
	return int(fm.n) + len(fm.strs.set)
}

// Fields returns the set flags, sorted by field number at each level
// ("2" < "2.1" < "11").
func (fm *FieldMap) Fields() []string {
	if fm == nil {
		return nil
	}
	out := make([]string, 0, fm.Count())
	if fm.n > 0 {
		for w, word := range fm.setBits() {
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
	c := &FieldMap{}
	if fm.schema != nil {
		c.init(fm.schema)
		copy(c.words(), fm.words())
		c.n = fm.n
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
	win := fm.Window(at)
	return win.Cover, win.Below
}

// Window holds the bits of 64 consecutive flags of a map's schema, from
// the first flag of a message's fields: bit k of Cover is HasAt(at+k), bit
// k of Below is HasChildAt(at+k). Generated CopyInFields reads a window
// once and passes each sub-message its part of it, shifted, so that a
// copy reads the map's bit sets once for every 64 flags.
type Window struct{ Cover, Below uint64 }

// Window returns the window of the flags from number at.
func (fm *FieldMap) Window(at int) Window {
	if at&63 != 0 {
		return fm.unalignedWindow(at)
	}
	k, w := uint(at)>>6+uint(fm.w), uint(fm.w)
	if fm.ext != nil {
		return Window{fm.ext[k], fm.ext[k+w]}
	}
	return Window{fm.inl[k], fm.inl[k+w]}
}

// FirstWindow is Window(0), the window every generated CopyInFields starts
// from. For a map of at most 64 flags it is small enough for the compiler
// to inline into the caller.
func (fm *FieldMap) FirstWindow() Window {
	if fm.w == 1 { // one word per bit set, inline
		return Window{fm.inl[1], fm.inl[2]}
	}
	return fm.Window(0)
}

// unalignedWindow is Window for at not a multiple of 64.
func (fm *FieldMap) unalignedWindow(at int) Window {
	ws, w := fm.words(), uint(fm.w)
	k, off := uint(at)>>6, uint(at)&63
	win := Window{ws[w+k] >> off, ws[2*w+k] >> off}
	if k+1 < w {
		win.Cover |= ws[w+k+1] << (64 - off)
		win.Below |= ws[2*w+k+1] << (64 - off)
	}
	return win
}

// Shift returns the window starting n flags further (0 < n < 64): the bits
// of the flags past the 64 of w read as unset.
func (w Window) Shift(n uint) Window { return Window{w.Cover >> n, w.Below >> n} }
