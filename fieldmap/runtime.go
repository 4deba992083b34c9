package fieldmap

import (
	"math"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/fieldmaskpb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// Cloner is implemented by messages with a generated Clone method.
type Cloner[T any] interface{ Clone() T }

// Equaler is implemented by messages with a generated Equal method.
type Equaler[T any] interface{ Equal(T) bool }

// Clone deep-copies m: through its generated Clone method when it has one,
// a direct copy for the well-known types, else by reflection (not
// proto.Clone, which drops -0 from implicit-presence floats, so that its
// copy is not always proto.Equal to m). A nil m gives a nil result.
func Clone[T proto.Message](m T) T {
	switch v := any(m).(type) {
	case Cloner[T]:
		return v.Clone()
	case *timestamppb.Timestamp:
		return any(CloneTimestamp(v)).(T)
	case *durationpb.Duration:
		return any(CloneDuration(v)).(T)
	case *emptypb.Empty:
		return any(CloneEmpty(v)).(T)
	case *fieldmaskpb.FieldMask:
		return any(CloneFieldMask(v)).(T)
	case *anypb.Any:
		return any(CloneAny(v)).(T)
	case *structpb.Struct:
		return any(CloneStruct(v)).(T)
	case *structpb.ListValue:
		return any(CloneListValue(v)).(T)
	case *structpb.Value:
		return any(CloneValue(v)).(T)
	case *wrapperspb.DoubleValue:
		return any(CloneDoubleValue(v)).(T)
	case *wrapperspb.FloatValue:
		return any(CloneFloatValue(v)).(T)
	case *wrapperspb.Int64Value:
		return any(CloneInt64Value(v)).(T)
	case *wrapperspb.UInt64Value:
		return any(CloneUInt64Value(v)).(T)
	case *wrapperspb.Int32Value:
		return any(CloneInt32Value(v)).(T)
	case *wrapperspb.UInt32Value:
		return any(CloneUInt32Value(v)).(T)
	case *wrapperspb.BoolValue:
		return any(CloneBoolValue(v)).(T)
	case *wrapperspb.StringValue:
		return any(CloneStringValue(v)).(T)
	case *wrapperspb.BytesValue:
		return any(CloneBytesValue(v)).(T)
	}
	if !m.ProtoReflect().IsValid() {
		var zero T
		return zero
	}
	return cloneReflect(m.ProtoReflect()).Interface().(T)
}

// Equal reports whether a and b are equal under proto.Equal's rules: through
// a's generated Equal method when it has one, a direct comparison for the
// well-known types, else proto.Equal.
func Equal[T proto.Message](a, b T) bool {
	switch v := any(a).(type) {
	case Equaler[T]:
		return v.Equal(b)
	case *timestamppb.Timestamp:
		return EqualTimestamp(v, any(b).(*timestamppb.Timestamp))
	case *durationpb.Duration:
		return EqualDuration(v, any(b).(*durationpb.Duration))
	case *emptypb.Empty:
		return EqualEmpty(v, any(b).(*emptypb.Empty))
	case *fieldmaskpb.FieldMask:
		return EqualFieldMask(v, any(b).(*fieldmaskpb.FieldMask))
	case *anypb.Any:
		return EqualAny(v, any(b).(*anypb.Any))
	case *structpb.Struct:
		return EqualStruct(v, any(b).(*structpb.Struct))
	case *structpb.ListValue:
		return EqualListValue(v, any(b).(*structpb.ListValue))
	case *structpb.Value:
		return EqualValue(v, any(b).(*structpb.Value))
	case *wrapperspb.DoubleValue:
		return EqualDoubleValue(v, any(b).(*wrapperspb.DoubleValue))
	case *wrapperspb.FloatValue:
		return EqualFloatValue(v, any(b).(*wrapperspb.FloatValue))
	case *wrapperspb.Int64Value:
		return EqualInt64Value(v, any(b).(*wrapperspb.Int64Value))
	case *wrapperspb.UInt64Value:
		return EqualUInt64Value(v, any(b).(*wrapperspb.UInt64Value))
	case *wrapperspb.Int32Value:
		return EqualInt32Value(v, any(b).(*wrapperspb.Int32Value))
	case *wrapperspb.UInt32Value:
		return EqualUInt32Value(v, any(b).(*wrapperspb.UInt32Value))
	case *wrapperspb.BoolValue:
		return EqualBoolValue(v, any(b).(*wrapperspb.BoolValue))
	case *wrapperspb.StringValue:
		return EqualStringValue(v, any(b).(*wrapperspb.StringValue))
	case *wrapperspb.BytesValue:
		return EqualBytesValue(v, any(b).(*wrapperspb.BytesValue))
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
// Two such values are equal when their bits are (equal values other than
// -0 and +0 have the same bits) or both are NaN: one comparison in the
// common case.
func EqualImplicitFloat64(a, b float64) bool {
	return math.Float64bits(a) == math.Float64bits(b) || (a != a && b != b)
}

// EqualImplicitFloat32 is EqualImplicitFloat64 for float fields.
func EqualImplicitFloat32(a, b float32) bool {
	return math.Float32bits(a) == math.Float32bits(b) || (a != a && b != b)
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
	return validateEnumsOrdered(r, string(r.Descriptor().FullName()), "")
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
