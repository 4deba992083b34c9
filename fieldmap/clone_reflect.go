package fieldmap

import (
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// cloneReflect deep-copies m by reflection. Unlike proto.Clone
// (google.golang.org/protobuf v1.36), which merges and so drops -0 from
// implicit-presence float and double fields, the copy is always
// proto.Equal to m.
func cloneReflect(m protoreflect.Message) protoreflect.Message {
	c := m.New()
	copyReflect(c, m, false)
	return c
}

// copyReflect sets in dst, an empty message of src's type, a deep copy of
// every populated field of src (only its extensions when extOnly) and,
// unless extOnly, its unknown fields.
func copyReflect(dst, src protoreflect.Message, extOnly bool) {
	src.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if extOnly && !fd.IsExtension() {
			return true
		}
		switch {
		case fd.IsList():
			sl, dl := v.List(), dst.Mutable(fd).List()
			for i := 0; i < sl.Len(); i++ {
				dl.Append(cloneValue(fd, sl.Get(i), dl.NewElement))
			}
		case fd.IsMap():
			sm, dm := v.Map(), dst.Mutable(fd).Map()
			sm.Range(func(k protoreflect.MapKey, mv protoreflect.Value) bool {
				dm.Set(k, cloneValue(fd.MapValue(), mv, dm.NewValue))
				return true
			})
		default:
			dst.Set(fd, cloneValue(fd, v, func() protoreflect.Value { return dst.NewField(fd) }))
		}
		return true
	})
	if u := src.GetUnknown(); len(u) > 0 && !extOnly {
		dst.SetUnknown(append(protoreflect.RawFields(nil), u...))
	}
}

// cloneValue copies one singular value of field fd; newMsg makes an empty
// message where one is needed.
func cloneValue(fd protoreflect.FieldDescriptor, v protoreflect.Value, newMsg func() protoreflect.Value) protoreflect.Value {
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		c := newMsg()
		copyReflect(c.Message(), v.Message(), false)
		return c
	case protoreflect.BytesKind:
		return protoreflect.ValueOfBytes(append([]byte{}, v.Bytes()...))
	}
	return v
}

// CloneExtensions sets in dst deep copies of the extension fields of src,
// a message of the same type (generated Clone methods call it for messages
// that carry extensions).
func CloneExtensions(dst, src proto.Message) {
	copyReflect(dst.ProtoReflect(), src.ProtoReflect(), true)
}

// EqualExtensions reports whether a and b, two messages of one type, hold
// equal extension fields under proto.Equal's rules.
func EqualExtensions(a, b proto.Message) bool {
	return proto.Equal(extensionsOf(a), extensionsOf(b))
}

// extensionsOf returns a message of m's type holding only m's extension
// fields (shared, not copied: it is only read).
func extensionsOf(m proto.Message) proto.Message {
	r := m.ProtoReflect()
	x := r.New()
	r.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.IsExtension() {
			x.Set(fd, v)
		}
		return true
	})
	return x.Interface()
}
