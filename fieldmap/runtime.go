package fieldmap

import (
	"bytes"
	"math"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// Cloner is implemented by messages with a generated Clone method.
type Cloner[T any] interface{ Clone() T }

// Equaler is implemented by messages with a generated Equal method.
type Equaler[T any] interface{ Equal(T) bool }

// Clone deep-copies m: through its generated Clone method when it has one,
// a direct copy for Timestamp and Duration, else proto.Clone. A nil m gives a
// nil result.
func Clone[T proto.Message](m T) T {
	switch v := any(m).(type) {
	case Cloner[T]:
		return v.Clone()
	case *timestamppb.Timestamp:
		if v != nil && len(v.ProtoReflect().GetUnknown()) == 0 {
			return any(&timestamppb.Timestamp{Seconds: v.Seconds, Nanos: v.Nanos}).(T)
		}
	case *durationpb.Duration:
		if v != nil && len(v.ProtoReflect().GetUnknown()) == 0 {
			return any(&durationpb.Duration{Seconds: v.Seconds, Nanos: v.Nanos}).(T)
		}
	// proto.Clone drops -0 from implicit-presence floats (the Value of these
	// wrappers), so they are copied directly.
	case *wrapperspb.DoubleValue:
		if v != nil && len(v.ProtoReflect().GetUnknown()) == 0 {
			return any(&wrapperspb.DoubleValue{Value: v.Value}).(T)
		}
	case *wrapperspb.FloatValue:
		if v != nil && len(v.ProtoReflect().GetUnknown()) == 0 {
			return any(&wrapperspb.FloatValue{Value: v.Value}).(T)
		}
	}
	if !m.ProtoReflect().IsValid() {
		var zero T
		return zero
	}
	return proto.Clone(m).(T)
}

// Equal reports whether a and b are equal under proto.Equal's rules: through
// a's generated Equal method when it has one, a direct comparison for
// Timestamp and Duration, else proto.Equal.
func Equal[T proto.Message](a, b T) bool {
	switch v := any(a).(type) {
	case Equaler[T]:
		return v.Equal(b)
	case *timestamppb.Timestamp:
		w := any(b).(*timestamppb.Timestamp)
		if v == nil || w == nil {
			return v == nil && w == nil
		}
		return v.Seconds == w.Seconds && v.Nanos == w.Nanos &&
			bytes.Equal(v.ProtoReflect().GetUnknown(), w.ProtoReflect().GetUnknown())
	case *durationpb.Duration:
		w := any(b).(*durationpb.Duration)
		if v == nil || w == nil {
			return v == nil && w == nil
		}
		return v.Seconds == w.Seconds && v.Nanos == w.Nanos &&
			bytes.Equal(v.ProtoReflect().GetUnknown(), w.ProtoReflect().GetUnknown())
	}
	return proto.Equal(a, b)
}

// EqualFloat64 compares two float fields under proto.Equal's rules: NaN
// equals NaN, otherwise ==.
func EqualFloat64(a, b float64) bool {
	return a == b || (math.IsNaN(a) && math.IsNaN(b))
}

// EqualFloat32 is EqualFloat64 for float fields.
func EqualFloat32(a, b float32) bool {
	return a == b || (a != a && b != b)
}

// EqualImplicitFloat64 compares two double fields without explicit presence:
// such a field is present when its bits are non-zero, so -0 and +0 differ.
func EqualImplicitFloat64(a, b float64) bool {
	return (math.Float64bits(a) == 0) == (math.Float64bits(b) == 0) && EqualFloat64(a, b)
}

// EqualImplicitFloat32 is EqualImplicitFloat64 for float fields.
func EqualImplicitFloat32(a, b float32) bool {
	return (math.Float32bits(a) == 0) == (math.Float32bits(b) == 0) && EqualFloat32(a, b)
}

// SameFloat64 reports whether two values are bit-identical; CopyInFields uses
// it to count a change, so copying NaN over the same NaN is no change.
func SameFloat64(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }

// SameFloat32 is SameFloat64 for float fields.
func SameFloat32(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) }

// CloneBytes returns a copy of b that keeps nil-ness (nil stays nil, empty
// stays empty), so explicit-presence bytes keep their presence.
func CloneBytes(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append(make([]byte, 0, len(b)), b...)
}

// enumValidator is implemented by messages with a generated ValidateEnums.
type enumValidator interface{ ValidateEnums() error }

// ValidateEnums checks that every enum field reachable from m holds a value
// its enum defines: through the generated method when m has one, else by
// reflection.
func ValidateEnums(m proto.Message) error {
	if v, ok := m.(enumValidator); ok {
		return v.ValidateEnums()
	}
	if m == nil {
		return nil
	}
	r := m.ProtoReflect()
	return validateEnumsReflect(r, string(r.Descriptor().FullName()), "")
}

func validateEnumsReflect(m protoreflect.Message, top, prefix string) error {
	if !m.IsValid() {
		return nil
	}
	var err error
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		path := prefix + string(fd.Name())
		check := func(v protoreflect.Value, fd protoreflect.FieldDescriptor) error {
			switch fd.Kind() {
			case protoreflect.EnumKind:
				if fd.Enum().Values().ByNumber(v.Enum()) == nil {
					return &InvalidEnumError{Message: top, Field: path,
						Enum: string(fd.Enum().FullName()), Value: int32(v.Enum())}
				}
			case protoreflect.MessageKind, protoreflect.GroupKind:
				return validateEnumsReflect(v.Message(), top, path+".")
			}
			return nil
		}
		switch {
		case fd.IsList():
			l := v.List()
			for i := 0; i < l.Len() && err == nil; i++ {
				err = check(l.Get(i), fd)
			}
		case fd.IsMap():
			v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
				err = check(mv, fd.MapValue())
				return err == nil
			})
		default:
			err = check(v, fd)
		}
		return err == nil
	})
	return err
}

// redacter is implemented by messages with a generated Redact.
type redacter interface{ Redact() }

// Redact clears every field marked debug_redact reachable from m, through the
// generated method when m has one, else by reflection.
func Redact(m proto.Message) {
	if v, ok := m.(redacter); ok {
		v.Redact()
		return
	}
	if m == nil {
		return
	}
	redactReflect(m.ProtoReflect())
}

// IsRedacted reports whether a field carries the standard debug_redact option.
func IsRedacted(fd protoreflect.FieldDescriptor) bool {
	opts, ok := fd.Options().(*descriptorpb.FieldOptions)
	return ok && opts.GetDebugRedact()
}

func redactReflect(m protoreflect.Message) {
	if !m.IsValid() {
		return
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if IsRedacted(fd) {
			m.Clear(fd)
			return true
		}
		switch {
		case fd.IsList():
			if k := fd.Kind(); k == protoreflect.MessageKind || k == protoreflect.GroupKind {
				l := v.List()
				for i := 0; i < l.Len(); i++ {
					redactReflect(l.Get(i).Message())
				}
			}
		case fd.IsMap():
			if fd.MapValue().Kind() == protoreflect.MessageKind {
				v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
					redactReflect(mv.Message())
					return true
				})
			}
		case fd.Kind() == protoreflect.MessageKind || fd.Kind() == protoreflect.GroupKind:
			redactReflect(v.Message())
		}
		return true
	})
}

// Redacted returns a redacted deep copy of m, leaving m untouched: what to log
// or send to a less trusted party.
func Redacted[T proto.Message](m T) T {
	c := Clone(m)
	Redact(c)
	return c
}
