package fieldmap

import (
	"bytes"
	"slices"
	"unsafe"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/fieldmaskpb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// EqualUnknown compares the unknown fields of two messages as proto.Equal
// does: equal bytes are equal; otherwise the fields are grouped by field
// number, keeping their order within a number, and the groups must match,
// so fields of different numbers may come in any order. Bytes that do not
// parse as fields are compared as one group after the fields before them
// (where proto.Equal would panic).
func EqualUnknown(a, b []byte) bool {
	if len(a) != len(b) {
		return false
	}
	if bytes.Equal(a, b) {
		return true
	}
	ga, gb := groupUnknown(a), groupUnknown(b)
	if len(ga) != len(gb) {
		return false
	}
	for k, va := range ga {
		if vb, ok := gb[k]; !ok || !bytes.Equal(va, vb) {
			return false
		}
	}
	return true
}

// EqualUnknownFields compares the unknown fields of two messages as
// EqualUnknown does, slow being EqualUnknown: generated Equal methods end
// with it. The common case, neither message having unknown fields, is
// decided in line. slow is a parameter, not a direct call, because the
// compiler's inliner charges a call through a parameter far less than a
// direct call (cmd/compile's inlineParamCallCost against
// inlineExtraCallCost), which keeps the Equal of a small message within its
// inlining budget; once EqualUnknownFields is inlined, slow is a known
// function and the call is direct.
func EqualUnknownFields(a, b []byte, slow func(a, b []byte) bool) bool {
	return len(a)|len(b) == 0 || slow(a, b)
}

// groupUnknown concatenates the fields of b by field number; unparsable
// trailing bytes go under number 0, which no valid field has.
func groupUnknown(b []byte) map[protowire.Number][]byte {
	out := map[protowire.Number][]byte{}
	for len(b) > 0 {
		num, _, n := protowire.ConsumeField(b)
		if n < 0 {
			out[0] = append(out[0], b...)
			break
		}
		out[num] = append(out[num], b[:n]...)
		b = b[n:]
	}
	return out
}

// EqualElem compares two messages held where the proto runtime reads a nil
// message as an empty one: a oneof wrapper, a list element or a map value.
// So nil equals an empty message there (unlike a singular message field,
// where nil is absent). eq compares two messages, nil-safe.
func EqualElem[T interface{ *E }, E any](a, b T, eq func(T, T) bool) bool {
	switch {
	case a == nil && b == nil:
		return true
	case a == nil:
		a = new(E)
	case b == nil:
		b = new(E)
	}
	return eq(a, b)
}

// EqualNilElem compares a and b, two messages of one type of which at
// least one is a nil pointer, held where the proto runtime reads a nil
// message as an empty one (a list element, a map value, a oneof member):
// nil equals nil and any message equal to an empty one, which is one with
// no field populated (an implicit-presence float holding -0 is) and no
// unknown fields.
//
// Generated Equal methods call it only when one side is nil, after their
// own comparison of the two has failed:
//
//	x != y && !x.Equal(y) && (x != nil && y != nil || !fieldmap.EqualNilElem(x, y))
//
// It takes interfaces so that it is compiled once: a helper generic in the
// message type (EqualElem) is compiled again for every message type, its
// type argument being a struct.
func EqualNilElem(a, b proto.Message) bool {
	ra, rb := a.ProtoReflect(), b.ProtoReflect()
	if !ra.IsValid() {
		ra = rb
	}
	if !ra.IsValid() {
		return true
	}
	empty := true
	ra.Range(func(protoreflect.FieldDescriptor, protoreflect.Value) bool {
		empty = false
		return false
	})
	return empty && len(ra.GetUnknown()) == 0
}

// EqualMessageListFunc is EqualListFunc for lists of messages, where a nil
// element equals an empty message as under proto.Equal.
func EqualMessageListFunc[T interface{ *E }, E any](a, b []T, eq func(T, T) bool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !EqualElem(a[i], b[i], eq) {
			return false
		}
	}
	return true
}

// EqualMessageMapFunc is EqualMapFunc for maps of messages, where a nil
// value equals an empty message as under proto.Equal.
func EqualMessageMapFunc[K comparable, T interface{ *E }, E any](a, b map[K]T, eq func(T, T) bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k, va := range a {
		vb, ok := b[k]
		if !ok || !EqualElem(va, vb, eq) {
			return false
		}
	}
	return true
}

// equal compares the unknown fields of the messages of the slot's type at pa
// and pb, both non-nil; slow is (*unknownSlot).equalSlow, a parameter so
// that the helpers below stay inlinable (see EqualUnknownFields).
func (s *unknownSlot) equal(pa, pb unsafe.Pointer, slow func(*unknownSlot, unsafe.Pointer, unsafe.Pointer) bool) bool {
	return s.found.Load() && len(*(*[]byte)(unsafe.Add(pa, s.off)))|len(*(*[]byte)(unsafe.Add(pb, s.off))) == 0 || slow(s, pa, pb)
}

// Direct comparisons of the well-known types under proto.Equal's rules, for
// generated Equal methods: nil equals only nil, unknown fields must match.

// EqualTimestamp compares two Timestamps.
func EqualTimestamp(a, b *timestamppb.Timestamp) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Seconds == b.Seconds && a.Nanos == b.Nanos && unknownTimestamp.equal(unsafe.Pointer(a), unsafe.Pointer(b), (*unknownSlot).equalSlow)
}

// EqualDuration compares two Durations.
func EqualDuration(a, b *durationpb.Duration) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Seconds == b.Seconds && a.Nanos == b.Nanos && unknownDuration.equal(unsafe.Pointer(a), unsafe.Pointer(b), (*unknownSlot).equalSlow)
}

// EqualEmpty compares two Empty messages.
func EqualEmpty(a, b *emptypb.Empty) bool {
	if a == nil || b == nil {
		return a == b
	}
	return unknownEmpty.equal(unsafe.Pointer(a), unsafe.Pointer(b), (*unknownSlot).equalSlow)
}

// EqualFieldMask compares two FieldMasks.
func EqualFieldMask(a, b *fieldmaskpb.FieldMask) bool {
	if a == nil || b == nil {
		return a == b
	}
	return slices.Equal(a.Paths, b.Paths) && unknownFieldMask.equal(unsafe.Pointer(a), unsafe.Pointer(b), (*unknownSlot).equalSlow)
}

// EqualAny compares two Anys by type URL and encoded bytes, as proto.Equal
// does.
func EqualAny(a, b *anypb.Any) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.TypeUrl == b.TypeUrl && bytes.Equal(a.Value, b.Value) && unknownAny.equal(unsafe.Pointer(a), unsafe.Pointer(b), (*unknownSlot).equalSlow)
}

// EqualStruct compares two Structs.
func EqualStruct(a, b *structpb.Struct) bool {
	if a == nil || b == nil {
		return a == b
	}
	return EqualMessageMapFunc(a.Fields, b.Fields, EqualValue) && unknownStruct.equal(unsafe.Pointer(a), unsafe.Pointer(b), (*unknownSlot).equalSlow)
}

// EqualListValue compares two ListValues.
func EqualListValue(a, b *structpb.ListValue) bool {
	if a == nil || b == nil {
		return a == b
	}
	return EqualMessageListFunc(a.Values, b.Values, EqualValue) && unknownListValue.equal(unsafe.Pointer(a), unsafe.Pointer(b), (*unknownSlot).equalSlow)
}

// EqualValue compares two Values: the same kind (a typed nil kind wrapper
// holds none) with equal contents, NaN numbers equal.
func EqualValue(a, b *structpb.Value) bool {
	if a == nil || b == nil {
		return a == b
	}
	if !equalValueKind(a.Kind, b.Kind) {
		return false
	}
	return unknownValue.equal(unsafe.Pointer(a), unsafe.Pointer(b), (*unknownSlot).equalSlow)
}

func equalValueKind(a, b any) bool {
	switch x := a.(type) {
	case *structpb.Value_NullValue:
		if y, ok := b.(*structpb.Value_NullValue); ok && x != nil && y != nil {
			return x.NullValue == y.NullValue
		}
	case *structpb.Value_NumberValue:
		if y, ok := b.(*structpb.Value_NumberValue); ok && x != nil && y != nil {
			return EqualFloat64(x.NumberValue, y.NumberValue)
		}
	case *structpb.Value_StringValue:
		if y, ok := b.(*structpb.Value_StringValue); ok && x != nil && y != nil {
			return x.StringValue == y.StringValue
		}
	case *structpb.Value_BoolValue:
		if y, ok := b.(*structpb.Value_BoolValue); ok && x != nil && y != nil {
			return x.BoolValue == y.BoolValue
		}
	case *structpb.Value_StructValue:
		if y, ok := b.(*structpb.Value_StructValue); ok && x != nil && y != nil {
			return EqualElem(x.StructValue, y.StructValue, EqualStruct)
		}
	case *structpb.Value_ListValue:
		if y, ok := b.(*structpb.Value_ListValue); ok && x != nil && y != nil {
			return EqualElem(x.ListValue, y.ListValue, EqualListValue)
		}
	}
	return !valueKindSet(a) && !valueKindSet(b)
}

// valueKindSet reports whether a Value kind holds a member.
func valueKindSet(k any) bool {
	switch x := k.(type) {
	case *structpb.Value_NullValue:
		return x != nil
	case *structpb.Value_NumberValue:
		return x != nil
	case *structpb.Value_StringValue:
		return x != nil
	case *structpb.Value_BoolValue:
		return x != nil
	case *structpb.Value_StructValue:
		return x != nil
	case *structpb.Value_ListValue:
		return x != nil
	}
	return false
}

// EqualDoubleValue compares two DoubleValues (implicit presence: -0 differs
// from +0, NaN equals NaN).
func EqualDoubleValue(a, b *wrapperspb.DoubleValue) bool {
	if a == nil || b == nil {
		return a == b
	}
	return EqualImplicitFloat64(a.Value, b.Value) && unknownDoubleValue.equal(unsafe.Pointer(a), unsafe.Pointer(b), (*unknownSlot).equalSlow)
}

// EqualFloatValue compares two FloatValues like EqualDoubleValue.
func EqualFloatValue(a, b *wrapperspb.FloatValue) bool {
	if a == nil || b == nil {
		return a == b
	}
	return EqualImplicitFloat32(a.Value, b.Value) && unknownFloatValue.equal(unsafe.Pointer(a), unsafe.Pointer(b), (*unknownSlot).equalSlow)
}

// EqualInt64Value compares two Int64Values.
func EqualInt64Value(a, b *wrapperspb.Int64Value) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Value == b.Value && unknownInt64Value.equal(unsafe.Pointer(a), unsafe.Pointer(b), (*unknownSlot).equalSlow)
}

// EqualUInt64Value compares two UInt64Values.
func EqualUInt64Value(a, b *wrapperspb.UInt64Value) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Value == b.Value && unknownUInt64Value.equal(unsafe.Pointer(a), unsafe.Pointer(b), (*unknownSlot).equalSlow)
}

// EqualInt32Value compares two Int32Values.
func EqualInt32Value(a, b *wrapperspb.Int32Value) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Value == b.Value && unknownInt32Value.equal(unsafe.Pointer(a), unsafe.Pointer(b), (*unknownSlot).equalSlow)
}

// EqualUInt32Value compares two UInt32Values.
func EqualUInt32Value(a, b *wrapperspb.UInt32Value) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Value == b.Value && unknownUInt32Value.equal(unsafe.Pointer(a), unsafe.Pointer(b), (*unknownSlot).equalSlow)
}

// EqualBoolValue compares two BoolValues.
func EqualBoolValue(a, b *wrapperspb.BoolValue) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Value == b.Value && unknownBoolValue.equal(unsafe.Pointer(a), unsafe.Pointer(b), (*unknownSlot).equalSlow)
}

// EqualStringValue compares two StringValues.
func EqualStringValue(a, b *wrapperspb.StringValue) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Value == b.Value && unknownStringValue.equal(unsafe.Pointer(a), unsafe.Pointer(b), (*unknownSlot).equalSlow)
}

// EqualBytesValue compares two BytesValues (nil and empty values are equal).
func EqualBytesValue(a, b *wrapperspb.BytesValue) bool {
	if a == nil || b == nil {
		return a == b
	}
	return bytes.Equal(a.Value, b.Value) && unknownBytesValue.equal(unsafe.Pointer(a), unsafe.Pointer(b), (*unknownSlot).equalSlow)
}
