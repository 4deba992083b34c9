package fieldmap

import (
	"slices"
	"unsafe"

	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/fieldmaskpb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// CloneUnknownFields returns a copy of u, the unknown fields of a message,
// made by slow, which is CloneUnknown: generated Clone methods call it only
// when there are some (a non-nil slice):
//
//	if m.unknownFields != nil {
//		c.unknownFields = fieldmap.CloneUnknownFields(m.unknownFields, fieldmap.CloneUnknown)
//	}
//
// The copy is out of line, in CloneUnknown, so that it is compiled once,
// not into every Clone and every parent a Clone is inlined into; a message
// with unknown fields is off the fast path, where the call costs little.
// slow is a parameter, not a direct call, for the reason given at
// EqualUnknownFields: the inliner charges it 17 instead of 57, which keeps
// the Clone of a small message within its inlining budget; once
// CloneUnknownFields is inlined the call is direct.
func CloneUnknownFields(u []byte, slow func([]byte) []byte) []byte {
	return slow(u)
}

// CloneUnknown copies b (see CloneUnknownFields). It is never inlined, so
// that it is compiled once.
//
//go:noinline
func CloneUnknown(b []byte) []byte {
	return append(make([]byte, 0, len(b)), b...)
}

// Direct deep copies of the well-known types, for generated Clone methods:
// each keeps unknown fields, gives nil for nil, and shares no memory with its
// argument, like proto.Clone, but without reflection over the fields.

// CloneTimestamp deep-copies a Timestamp.
func CloneTimestamp(m *timestamppb.Timestamp) *timestamppb.Timestamp {
	if m == nil {
		return nil
	}
	c := &timestamppb.Timestamp{Seconds: m.Seconds, Nanos: m.Nanos}
	unknownTimestamp.copy(unsafe.Pointer(c), unsafe.Pointer(m))
	return c
}

// CloneDuration deep-copies a Duration.
func CloneDuration(m *durationpb.Duration) *durationpb.Duration {
	if m == nil {
		return nil
	}
	c := &durationpb.Duration{Seconds: m.Seconds, Nanos: m.Nanos}
	unknownDuration.copy(unsafe.Pointer(c), unsafe.Pointer(m))
	return c
}

// CloneEmpty deep-copies an Empty.
func CloneEmpty(m *emptypb.Empty) *emptypb.Empty {
	if m == nil {
		return nil
	}
	c := &emptypb.Empty{}
	unknownEmpty.copy(unsafe.Pointer(c), unsafe.Pointer(m))
	return c
}

// CloneFieldMask deep-copies a FieldMask.
func CloneFieldMask(m *fieldmaskpb.FieldMask) *fieldmaskpb.FieldMask {
	if m == nil {
		return nil
	}
	c := &fieldmaskpb.FieldMask{Paths: slices.Clone(m.Paths)}
	unknownFieldMask.copy(unsafe.Pointer(c), unsafe.Pointer(m))
	return c
}

// CloneAny deep-copies an Any (its value stays encoded).
func CloneAny(m *anypb.Any) *anypb.Any {
	if m == nil {
		return nil
	}
	c := &anypb.Any{TypeUrl: m.TypeUrl, Value: CloneBytes(m.Value)}
	unknownAny.copy(unsafe.Pointer(c), unsafe.Pointer(m))
	return c
}

// CloneStruct deep-copies a Struct.
func CloneStruct(m *structpb.Struct) *structpb.Struct {
	if m == nil {
		return nil
	}
	c := &structpb.Struct{Fields: CloneMapFunc(m.Fields, CloneValue)}
	unknownStruct.copy(unsafe.Pointer(c), unsafe.Pointer(m))
	return c
}

// CloneListValue deep-copies a ListValue.
func CloneListValue(m *structpb.ListValue) *structpb.ListValue {
	if m == nil {
		return nil
	}
	c := &structpb.ListValue{Values: CloneListFunc(m.Values, CloneValue)}
	unknownListValue.copy(unsafe.Pointer(c), unsafe.Pointer(m))
	return c
}

// CloneValue deep-copies a Value; a typed nil kind wrapper holds no kind.
func CloneValue(m *structpb.Value) *structpb.Value {
	if m == nil {
		return nil
	}
	c := &structpb.Value{}
	switch k := m.Kind.(type) {
	case *structpb.Value_NullValue:
		if k != nil {
			c.Kind = &structpb.Value_NullValue{NullValue: k.NullValue}
		}
	case *structpb.Value_NumberValue:
		if k != nil {
			c.Kind = &structpb.Value_NumberValue{NumberValue: k.NumberValue}
		}
	case *structpb.Value_StringValue:
		if k != nil {
			c.Kind = &structpb.Value_StringValue{StringValue: k.StringValue}
		}
	case *structpb.Value_BoolValue:
		if k != nil {
			c.Kind = &structpb.Value_BoolValue{BoolValue: k.BoolValue}
		}
	case *structpb.Value_StructValue:
		if k != nil {
			c.Kind = &structpb.Value_StructValue{StructValue: CloneStruct(k.StructValue)}
		}
	case *structpb.Value_ListValue:
		if k != nil {
			c.Kind = &structpb.Value_ListValue{ListValue: CloneListValue(k.ListValue)}
		}
	}
	unknownValue.copy(unsafe.Pointer(c), unsafe.Pointer(m))
	return c
}

// CloneDoubleValue deep-copies a DoubleValue.
func CloneDoubleValue(m *wrapperspb.DoubleValue) *wrapperspb.DoubleValue {
	if m == nil {
		return nil
	}
	c := &wrapperspb.DoubleValue{Value: m.Value}
	unknownDoubleValue.copy(unsafe.Pointer(c), unsafe.Pointer(m))
	return c
}

// CloneFloatValue deep-copies a FloatValue.
func CloneFloatValue(m *wrapperspb.FloatValue) *wrapperspb.FloatValue {
	if m == nil {
		return nil
	}
	c := &wrapperspb.FloatValue{Value: m.Value}
	unknownFloatValue.copy(unsafe.Pointer(c), unsafe.Pointer(m))
	return c
}

// CloneInt64Value deep-copies an Int64Value.
func CloneInt64Value(m *wrapperspb.Int64Value) *wrapperspb.Int64Value {
	if m == nil {
		return nil
	}
	c := &wrapperspb.Int64Value{Value: m.Value}
	unknownInt64Value.copy(unsafe.Pointer(c), unsafe.Pointer(m))
	return c
}

// CloneUInt64Value deep-copies a UInt64Value.
func CloneUInt64Value(m *wrapperspb.UInt64Value) *wrapperspb.UInt64Value {
	if m == nil {
		return nil
	}
	c := &wrapperspb.UInt64Value{Value: m.Value}
	unknownUInt64Value.copy(unsafe.Pointer(c), unsafe.Pointer(m))
	return c
}

// CloneInt32Value deep-copies an Int32Value.
func CloneInt32Value(m *wrapperspb.Int32Value) *wrapperspb.Int32Value {
	if m == nil {
		return nil
	}
	c := &wrapperspb.Int32Value{Value: m.Value}
	unknownInt32Value.copy(unsafe.Pointer(c), unsafe.Pointer(m))
	return c
}

// CloneUInt32Value deep-copies a UInt32Value.
func CloneUInt32Value(m *wrapperspb.UInt32Value) *wrapperspb.UInt32Value {
	if m == nil {
		return nil
	}
	c := &wrapperspb.UInt32Value{Value: m.Value}
	unknownUInt32Value.copy(unsafe.Pointer(c), unsafe.Pointer(m))
	return c
}

// CloneBoolValue deep-copies a BoolValue.
func CloneBoolValue(m *wrapperspb.BoolValue) *wrapperspb.BoolValue {
	if m == nil {
		return nil
	}
	c := &wrapperspb.BoolValue{Value: m.Value}
	unknownBoolValue.copy(unsafe.Pointer(c), unsafe.Pointer(m))
	return c
}

// CloneStringValue deep-copies a StringValue.
func CloneStringValue(m *wrapperspb.StringValue) *wrapperspb.StringValue {
	if m == nil {
		return nil
	}
	c := &wrapperspb.StringValue{Value: m.Value}
	unknownStringValue.copy(unsafe.Pointer(c), unsafe.Pointer(m))
	return c
}

// CloneBytesValue deep-copies a BytesValue.
func CloneBytesValue(m *wrapperspb.BytesValue) *wrapperspb.BytesValue {
	if m == nil {
		return nil
	}
	c := &wrapperspb.BytesValue{Value: CloneBytes(m.Value)}
	unknownBytesValue.copy(unsafe.Pointer(c), unsafe.Pointer(m))
	return c
}
