package reference

import (
	"bytes"
	"math"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// has reports whether m populates fd; an invalid message populates nothing.
func has(m protoreflect.Message, fd protoreflect.FieldDescriptor) bool {
	return m.IsValid() && m.Has(fd)
}

// equalField reports whether fd holds equal values (with equal presence) in
// a and b under proto.Equal's rules.
func equalField(a, b protoreflect.Message, fd protoreflect.FieldDescriptor) bool {
	ha, hb := has(a, fd), has(b, fd)
	if ha != hb {
		return false
	}
	return !ha || a.Get(fd).Equal(b.Get(fd))
}

// sameField is the comparison CopyInFields counts changes with
// (docs/field-flags.md): singular float and double fields compare bit for
// bit, everything else (lists, maps, sub-messages) under Equal rules.
func sameField(a, b protoreflect.Message, fd protoreflect.FieldDescriptor) bool {
	if fd.IsList() || fd.IsMap() || (fd.Kind() != protoreflect.FloatKind && fd.Kind() != protoreflect.DoubleKind) {
		return equalField(a, b, fd)
	}
	ha, hb := has(a, fd), has(b, fd)
	if ha != hb {
		return false
	}
	return !ha || sameSingular(fd, a.Get(fd), b.Get(fd))
}

// sameValue compares two values of field fd, floats bit for bit.
func sameValue(fd protoreflect.FieldDescriptor, a, b protoreflect.Value) bool {
	switch {
	case fd.IsList():
		la, lb := a.List(), b.List()
		if la.Len() != lb.Len() {
			return false
		}
		for i := 0; i < la.Len(); i++ {
			if !sameSingular(fd, la.Get(i), lb.Get(i)) {
				return false
			}
		}
		return true
	case fd.IsMap():
		ma, mb := a.Map(), b.Map()
		if ma.Len() != mb.Len() {
			return false
		}
		same := true
		ma.Range(func(k protoreflect.MapKey, va protoreflect.Value) bool {
			same = mb.Has(k) && sameSingular(fd.MapValue(), va, mb.Get(k))
			return same
		})
		return same
	}
	return sameSingular(fd, a, b)
}

// sameSingular compares one element of field fd, floats bit for bit.
func sameSingular(fd protoreflect.FieldDescriptor, a, b protoreflect.Value) bool {
	switch fd.Kind() {
	case protoreflect.FloatKind:
		return math.Float32bits(float32(a.Float())) == math.Float32bits(float32(b.Float()))
	case protoreflect.DoubleKind:
		return math.Float64bits(a.Float()) == math.Float64bits(b.Float())
	case protoreflect.BytesKind:
		return bytes.Equal(a.Bytes(), b.Bytes())
	case protoreflect.EnumKind:
		return a.Enum() == b.Enum()
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return sameMessage(a.Message(), b.Message())
	}
	return a.Interface() == b.Interface()
}

// sameMessage is proto.Equal with floats compared bit for bit.
func sameMessage(a, b protoreflect.Message) bool {
	if a.IsValid() != b.IsValid() {
		return false
	}
	if !a.IsValid() {
		return true
	}
	na, same := 0, true
	a.Range(func(fd protoreflect.FieldDescriptor, va protoreflect.Value) bool {
		na++
		same = b.Has(fd) && sameValue(fd, va, b.Get(fd))
		return same
	})
	if !same {
		return false
	}
	nb := 0
	b.Range(func(protoreflect.FieldDescriptor, protoreflect.Value) bool { nb++; return true })
	return na == nb && bytes.Equal(a.GetUnknown(), b.GetUnknown())
}
