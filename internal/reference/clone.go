package reference

import (
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Clone returns a deep copy of m that keeps unknown fields and extensions.
// A nil m gives nil; an invalid (typed nil) m gives an invalid message of
// its type.
//
// It is not proto.Clone: proto.Clone (protobuf-go v1.36) drops -0 from
// implicit-presence float and double fields of generated messages (its
// merge treats -0 as unset), although proto.Equal and the wire format
// treat -0 as present. This copy keeps every populated field, so
// Equal(Clone(m), m) always holds.
func Clone(m proto.Message) proto.Message {
	if m == nil {
		return nil
	}
	src := m.ProtoReflect()
	if !src.IsValid() {
		return src.Type().Zero().Interface()
	}
	dst := src.Type().New()
	copyMessage(dst, src)
	return dst.Interface()
}

// Equal reports whether a and b are equal: proto.Equal, which is the
// reference for the generated Equal (NaN equals NaN; presence matters, so
// an implicit-presence -0 differs from +0; empty and nil lists, maps and
// implicit bytes are equal; unknown fields compare as bytes).
func Equal(a, b proto.Message) bool { return proto.Equal(a, b) }

// copyMessage deep-copies every populated field and the unknown fields of
// src into dst, an empty message of the same type.
func copyMessage(dst, src protoreflect.Message) {
	src.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		dst.Set(fd, cloneValue(dst, fd, v))
		return true
	})
	if u := src.GetUnknown(); len(u) > 0 {
		dst.SetUnknown(append(protoreflect.RawFields(nil), u...))
	}
}
