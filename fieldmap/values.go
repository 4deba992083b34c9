package fieldmap

import "bytes"

// These generic helpers keep generated code short; each is a plain loop.

// EqualListFunc reports whether a and b have the same length and eq holds for
// every pair of elements. Nil and empty lists are equal.
func EqualListFunc[T any](a, b []T, eq func(T, T) bool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !eq(a[i], b[i]) {
			return false
		}
	}
	return true
}

// EqualMapFunc reports whether a and b have the same keys and eq holds for
// the values of every key. Nil and empty maps are equal.
func EqualMapFunc[K comparable, V any](a, b map[K]V, eq func(V, V) bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k, va := range a {
		vb, ok := b[k]
		if !ok || !eq(va, vb) {
			return false
		}
	}
	return true
}

// EqualPtr compares two explicit-presence scalars: both absent, or both
// present with equal values.
func EqualPtr[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

// EqualPtrFloat64 is EqualPtr under float rules (NaN equals NaN).
func EqualPtrFloat64(a, b *float64) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return EqualFloat64(*a, *b)
}

// EqualPtrFloat32 is EqualPtrFloat64 for float fields.
func EqualPtrFloat32(a, b *float32) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return EqualFloat32(*a, *b)
}

// SamePtrFloat64 reports whether two explicit-presence doubles have the same
// presence and bits.
func SamePtrFloat64(a, b *float64) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return SameFloat64(*a, *b)
}

// SamePtrFloat32 is SamePtrFloat64 for float fields.
func SamePtrFloat32(a, b *float32) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return SameFloat32(*a, *b)
}

// EqualBytesPresence compares explicit-presence bytes: nil is absent, so nil
// and empty differ.
func EqualBytesPresence(a, b []byte) bool {
	return (a == nil) == (b == nil) && bytes.Equal(a, b)
}

// ClonePtr copies an explicit-presence scalar.
func ClonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// CloneListFunc copies a list, copying each element with c. Nil stays nil.
func CloneListFunc[T any](s []T, c func(T) T) []T {
	if s == nil {
		return nil
	}
	out := make([]T, len(s))
	for i, v := range s {
		out[i] = c(v)
	}
	return out
}

// CloneMapFunc copies a map, copying each value with c. Nil stays nil.
func CloneMapFunc[K comparable, V any](m map[K]V, c func(V) V) map[K]V {
	if m == nil {
		return nil
	}
	out := make(map[K]V, len(m))
	for k, v := range m {
		out[k] = c(v)
	}
	return out
}
