package fieldmap

import (
	"maps"
	"slices"

	"google.golang.org/protobuf/proto"
)

// List and map actions of CopyInFields (docs/field-flags.md): generated code
// calls these with the address of the destination field. Each returns 1 when
// it changed the destination and 0 otherwise, accepts a nil or empty
// destination and source, and never aliases the source: elements it adds are
// copied with the clone func (nil means assignment copies).

// AddList appends to *dst, in src order, every element of src that *dst does
// not hold yet (==), each once.
func AddList[T comparable](dst *[]T, src []T) int {
	if dst == nil {
		return 0
	}
	changed := 0
	for _, v := range src {
		found := false
		for _, w := range *dst {
			if v == w {
				found = true
				break
			}
		}
		if !found {
			*dst = append(*dst, v)
			changed = 1
		}
	}
	return changed
}

// AddListFunc is AddList for elements compared with eq and copied with clone
// (nil clone: assignment copies).
func AddListFunc[T any](dst *[]T, src []T, eq func(a, b T) bool, clone func(T) T) int {
	if dst == nil {
		return 0
	}
	changed := 0
	for _, v := range src {
		found := false
		for _, w := range *dst {
			if eq(v, w) {
				found = true
				break
			}
		}
		if !found {
			if clone != nil {
				v = clone(v)
			}
			*dst = append(*dst, v)
			changed = 1
		}
	}
	return changed
}

// RemoveList removes from *dst every element equal (==) to an element of
// src, keeping the order of the others; an empty result is nil. The
// destination's backing array is not modified: a shortened list is a new
// slice.
func RemoveList[T comparable](dst *[]T, src []T) int {
	return RemoveListFunc(dst, src, func(a, b T) bool { return a == b })
}

// RemoveListFunc is RemoveList for elements compared with eq.
func RemoveListFunc[T any](dst *[]T, src []T, eq func(a, b T) bool) int {
	if dst == nil || len(*dst) == 0 || len(src) == 0 {
		return 0
	}
	var keep []T
	removed := false
	for i, v := range *dst {
		drop := false
		for _, w := range src {
			if eq(v, w) {
				drop = true
				break
			}
		}
		switch {
		case drop && !removed:
			removed = true
			keep = make([]T, i, len(*dst)-1)
			copy(keep, (*dst)[:i])
		case !drop && removed:
			keep = append(keep, v)
		}
	}
	if !removed {
		return 0
	}
	if len(keep) == 0 {
		keep = nil
	}
	*dst = keep
	return 1
}

// AddMap sets in *dst every entry of src, allocating *dst when nil; it
// reports a change when a key was missing or held another value (==).
func AddMap[K, V comparable](dst *map[K]V, src map[K]V) int {
	if dst == nil {
		return 0
	}
	changed := 0
	for k, v := range src {
		if w, ok := (*dst)[k]; ok && w == v {
			continue
		}
		if *dst == nil {
			*dst = make(map[K]V, len(src))
		}
		(*dst)[k] = v
		changed = 1
	}
	return changed
}

// AddMapFunc is AddMap for values compared with eq and copied with clone
// (nil clone: assignment copies). A value equal to the one held is left as
// is.
func AddMapFunc[K comparable, V any](dst *map[K]V, src map[K]V, eq func(a, b V) bool, clone func(V) V) int {
	if dst == nil {
		return 0
	}
	changed := 0
	for k, v := range src {
		if w, ok := (*dst)[k]; ok && eq(w, v) {
			continue
		}
		if *dst == nil {
			*dst = make(map[K]V, len(src))
		}
		if clone != nil {
			v = clone(v)
		}
		(*dst)[k] = v
		changed = 1
	}
	return changed
}

// RemoveMap deletes from *dst every key of src; an empty result is nil.
func RemoveMap[K comparable, V any](dst *map[K]V, src map[K]V) int {
	if dst == nil || len(*dst) == 0 {
		return 0
	}
	changed := 0
	for k := range src {
		if _, ok := (*dst)[k]; ok {
			delete(*dst, k)
			changed = 1
		}
	}
	if changed == 1 && len(*dst) == 0 {
		*dst = nil
	}
	return changed
}

// ApplyList applies the Add or Remove action a to a list of comparable
// elements (AddList or RemoveList).
func ApplyList[T comparable](a Action, dst *[]T, src []T) int {
	if a == Remove {
		return RemoveList(dst, src)
	}
	return AddList(dst, src)
}

// ApplyListFunc is ApplyList for elements compared with eq and copied with
// clone (nil clone: assignment copies).
func ApplyListFunc[T any](a Action, dst *[]T, src []T, eq func(a, b T) bool, clone func(T) T) int {
	if a == Remove {
		return RemoveListFunc(dst, src, eq)
	}
	return AddListFunc(dst, src, eq, clone)
}

// ApplyMap applies the Add or Remove action a to a map of comparable values
// (AddMap or RemoveMap).
func ApplyMap[K, V comparable](a Action, dst *map[K]V, src map[K]V) int {
	if a == Remove {
		return RemoveMap(dst, src)
	}
	return AddMap(dst, src)
}

// ApplyMapFunc is ApplyMap for values compared with eq and copied with
// clone (nil clone: assignment copies).
func ApplyMapFunc[K comparable, V any](a Action, dst *map[K]V, src map[K]V, eq func(a, b V) bool, clone func(V) V) int {
	if a == Remove {
		return RemoveMap(dst, src)
	}
	return AddMapFunc(dst, src, eq, clone)
}

// Set makes *d equal to s and returns 1 when it was not, else 0:
// generated CopyInFields copies a field of comparable type with it.
func Set[T comparable](d *T, s T) int {
	if *d == s {
		return 0
	}
	*d = s
	return 1
}

// CopyList applies list action a to *d from s: Add or Remove, or for
// Replace a copy of s (nil when empty) unless *d already equals it. It
// returns 1 when *d changed: generated CopyInFields copies a list of
// comparable elements with it.
func CopyList[T comparable](a Action, d *[]T, s []T) int {
	if a != Replace {
		return ApplyList(a, d, s)
	}
	return replaceList(d, s, slices.Equal(*d, s), nil)
}

// CopyListFunc is CopyList for elements compared with eq and copied with
// clone (nil clone: assignment copies).
func CopyListFunc[T any](a Action, d *[]T, s []T, eq func(x, y T) bool, clone func(T) T) int {
	if a != Replace {
		return ApplyListFunc(a, d, s, eq, clone)
	}
	return replaceList(d, s, EqualListFunc(*d, s, eq), clone)
}

// CopyMessageList is CopyList for lists of messages of Go type P, compared
// with Equal and copied with Clone (a nil element equals an empty message
// when the lists are compared, not when an action looks one up).
//
// The message helpers of CopyInFields take the message's pointer type as
// their only type parameter derived from it, constrained by a basic
// interface (methods only): the compiler compiles a generic function once
// per shape of its type arguments, and under such a constraint every
// pointer type has one shape, where a struct type (or a pointer under a
// constraint listing types or comparable) is a shape of its own. So every
// message type shares one compiled instance of each helper; its type
// reaches them as a dictionary.
func CopyMessageList[P proto.Message](a Action, d *[]P, s []P) int {
	if a != Replace {
		return ApplyListFunc(a, d, s, Equal[P], Clone[P])
	}
	return replaceList(d, s, equalMessageList(*d, s), Clone[P])
}

// CopyMessage makes *d a copy of s (copied with clone) unless eq(*d, s), and
// returns 1 when it did, else 0: generated CopyInFields copies a whole
// singular message field with it, eq and clone being the message type's
// Equal and Clone (nil-safe, a nil message unequal to an empty one). It is
// not inlined, so that each field costs its caller one call, not the
// bodies of eq and clone.
//
//go:noinline
func CopyMessage[P any](d *P, s P, eq func(P, P) bool, clone func(P) P) int {
	if eq(*d, s) {
		return 0
	}
	*d = clone(s)
	return 1
}

// equalMessageList is EqualMessageListFunc with Equal, for any message
// pointer type in one compiled instance.
func equalMessageList[P proto.Message](a, b []P) bool {
	return EqualListFunc(a, b, equalMessageElem[P])
}

// equalMessageMap is EqualMessageMapFunc with Equal, for any message
// pointer type in one compiled instance per key shape.
func equalMessageMap[K comparable, P proto.Message](a, b map[K]P) bool {
	return EqualMapFunc(a, b, equalMessageElem[P])
}

// equalMessageElem is EqualElem with Equal: a nil message equals an empty
// one, as in a list element or a map value.
func equalMessageElem[P proto.Message](a, b P) bool {
	// P is not comparable (that would give each message type a shape of
	// its own); as interfaces, a nil *T equals the zero P.
	var none P
	an, bn := any(a) == any(none), any(b) == any(none)
	switch {
	case an && bn:
		return true
	case an:
		a = emptyOf(b)
	case bn:
		b = emptyOf(a)
	}
	return Equal(a, b)
}

// emptyOf returns a new empty message of m's type.
func emptyOf[P proto.Message](m P) P {
	return m.ProtoReflect().Type().New().Interface().(P)
}

// replaceList is the Replace action of the CopyList helpers: unless same
// (*d equals s), *d becomes a copy of s, its elements copied with clone
// (nil: assignment copies), nil when s is empty.
func replaceList[T any](d *[]T, s []T, same bool, clone func(T) T) int {
	switch {
	case same:
		return 0
	case len(s) == 0:
		*d = nil
	case clone == nil:
		*d = slices.Clone(s)
	default:
		*d = CloneListFunc(s, clone)
	}
	return 1
}

// CopyMap is CopyList for maps of comparable values.
func CopyMap[K, V comparable](a Action, d *map[K]V, s map[K]V) int {
	if a != Replace {
		return ApplyMap(a, d, s)
	}
	return replaceMap(d, s, maps.Equal(*d, s), nil)
}

// CopyMapFunc is CopyMap for values compared with eq and copied with clone
// (nil clone: assignment copies).
func CopyMapFunc[K comparable, V any](a Action, d *map[K]V, s map[K]V, eq func(x, y V) bool, clone func(V) V) int {
	if a != Replace {
		return ApplyMapFunc(a, d, s, eq, clone)
	}
	return replaceMap(d, s, EqualMapFunc(*d, s, eq), clone)
}

// CopyMessageMap is CopyMessageList for maps of messages.
func CopyMessageMap[K comparable, P proto.Message](a Action, d *map[K]P, s map[K]P) int {
	if a != Replace {
		return ApplyMapFunc(a, d, s, Equal[P], Clone[P])
	}
	return replaceMap(d, s, equalMessageMap(*d, s), Clone[P])
}

// replaceMap is replaceList for maps.
func replaceMap[K comparable, V any](d *map[K]V, s map[K]V, same bool, clone func(V) V) int {
	switch {
	case same:
		return 0
	case len(s) == 0:
		*d = nil
	case clone == nil:
		*d = maps.Clone(s)
	default:
		*d = CloneMapFunc(s, clone)
	}
	return 1
}
