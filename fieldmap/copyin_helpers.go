package fieldmap

import (
	"maps"
	"slices"
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
	switch {
	case a != Replace:
		return ApplyList(a, d, s)
	case slices.Equal(*d, s):
		return 0
	case len(s) == 0:
		*d = nil
	default:
		*d = slices.Clone(s)
	}
	return 1
}

// CopyMap is CopyList for maps of comparable values.
func CopyMap[K, V comparable](a Action, d *map[K]V, s map[K]V) int {
	switch {
	case a != Replace:
		return ApplyMap(a, d, s)
	case maps.Equal(*d, s):
		return 0
	case len(s) == 0:
		*d = nil
	default:
		*d = maps.Clone(s)
	}
	return 1
}
