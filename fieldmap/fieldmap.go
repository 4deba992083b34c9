package fieldmap

import (
	"slices"
	"strconv"
	"strings"
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
// concurrent Has calls on an unchanging map are safe.
type FieldMap struct {
	schema *Schema
	set    map[string]Action
	// below counts, for every proper ancestor of a set flag, how many set
	// flags lie under it, so HasOrHasChild needs no scan.
	below map[string]int
	// top has bit n set when a set flag lies at or under top-level field n
	// (n < 64): most queries about fields nobody flagged end on one bit test
	// instead of map lookups.
	top uint64
}

// topField returns the leading field number of flag when it is below 64.
func topField(flag string) (uint, bool) {
	n := uint(0)
	for i := 0; i < len(flag); i++ {
		c := flag[i]
		if c == '.' {
			return n, i > 0
		}
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint(c-'0')
		if n >= 64 {
			return 0, false
		}
	}
	return n, len(flag) > 0
}

// untouched reports whether no set flag lies at or under the top-level
// field of flag, as far as the top bitmask can tell.
func (fm *FieldMap) untouched(flag string) bool {
	n, ok := topField(flag)
	return ok && fm.top&(1<<n) == 0
}

// Of returns a FieldMap with flags set, bound to no schema. It does not
// validate: prefer Schema.New or the generated New<Msg>FieldMap.
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

// Has reports whether flag or any of its ancestors is set.
func (fm *FieldMap) Has(flag string) bool {
	if fm == nil || len(fm.set) == 0 || fm.untouched(flag) {
		return false
	}
	for i := 0; i < len(flag); i++ {
		if flag[i] == '.' {
			if _, ok := fm.set[flag[:i]]; ok {
				return true
			}
		}
	}
	_, ok := fm.set[flag]
	return ok
}

// HasOrHasChild reports whether Has(flag) is true or any descendant of flag
// is set.
func (fm *FieldMap) HasOrHasChild(flag string) bool {
	if fm == nil || len(fm.set) == 0 || fm.untouched(flag) {
		return false
	}
	if fm.below[flag] > 0 {
		return true
	}
	return fm.Has(flag)
}

// IsSet reports whether flag itself is set. It equals Has(flag) where no
// ancestor of flag is set: generated code that has already established
// that (it is below a message flag that Has reported false for) asks this
// cheaper question.
func (fm *FieldMap) IsSet(flag string) bool {
	if fm == nil || len(fm.set) == 0 || fm.untouched(flag) {
		return false
	}
	_, ok := fm.set[flag]
	return ok
}

// IsSetOrHasChild is HasOrHasChild for a flag none of whose ancestors is
// set (see IsSet).
func (fm *FieldMap) IsSetOrHasChild(flag string) bool {
	if fm == nil || len(fm.set) == 0 || fm.untouched(flag) {
		return false
	}
	if fm.below[flag] > 0 {
		return true
	}
	_, ok := fm.set[flag]
	return ok
}

// HasChild reports whether a proper descendant of flag is set.
func (fm *FieldMap) HasChild(flag string) bool {
	return fm != nil && len(fm.below) > 0 && !fm.untouched(flag) && fm.below[flag] > 0
}

// ListAction returns the action set on flag, or Replace when flag itself is
// not set (an ancestor or descendant flag always means replace).
func (fm *FieldMap) ListAction(flag string) Action {
	if fm == nil {
		return Replace
	}
	return fm.set[flag]
}

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
	if fm.set == nil {
		fm.set = make(map[string]Action)
	}
	if _, ok := fm.set[flag]; ok {
		fm.set[flag] = act
		return
	}
	fm.set[flag] = act
	if n, ok := topField(flag); ok {
		fm.top |= 1 << n
	}
	for i := 0; i < len(flag); i++ {
		if flag[i] == '.' {
			if fm.below == nil {
				fm.below = make(map[string]int)
			}
			fm.below[flag[:i]]++
		}
	}
}

// Clear removes flags. Clearing a flag that is not set does nothing; it does
// not clear descendants.
func (fm *FieldMap) Clear(flags ...string) {
	if fm == nil {
		return
	}
	for _, flag := range flags {
		if _, ok := fm.set[flag]; !ok {
			continue
		}
		delete(fm.set, flag)
		for i := 0; i < len(flag); i++ {
			if flag[i] == '.' {
				p := flag[:i]
				if fm.below[p]--; fm.below[p] <= 0 {
					delete(fm.below, p)
				}
			}
		}
		if n, ok := topField(flag); ok {
			root := flag
			if i := strings.IndexByte(flag, '.'); i >= 0 {
				root = flag[:i]
			}
			if _, set := fm.set[root]; !set && fm.below[root] == 0 {
				fm.top &^= 1 << n
			}
		}
	}
}

// Count returns how many flags are set.
func (fm *FieldMap) Count() int {
	if fm == nil {
		return 0
	}
	return len(fm.set)
}

// Fields returns the set flags, sorted by field number at each level
// ("2" < "2.1" < "11").
func (fm *FieldMap) Fields() []string {
	if fm == nil {
		return nil
	}
	out := make([]string, 0, len(fm.set))
	for f := range fm.set {
		out = append(out, f)
	}
	slices.SortFunc(out, CompareFlags)
	return out
}

// Clone returns a copy of fm that shares nothing with it.
func (fm *FieldMap) Clone() *FieldMap {
	if fm == nil {
		return nil
	}
	c := &FieldMap{schema: fm.schema}
	for f, a := range fm.set {
		c.SetAction(f, a)
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
		if a := fm.set[f]; a != Replace {
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
