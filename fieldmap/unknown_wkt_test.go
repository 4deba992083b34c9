package fieldmap

import (
	"bytes"
	"testing"
	"unsafe"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/fieldmaskpb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// checkUnknownSlot checks that the unknown fields of T are found in place
// (so the helpers do not fall back to reflection) and that the place is the
// one the protobuf runtime reads and writes.
func checkUnknownSlot[T any, P interface {
	*T
	proto.Message
}](t *testing.T, s *unknownSlot) {
	t.Helper()
	m := P(new(T))
	if !s.load() {
		t.Fatalf("%T: no unknownFields field found", m)
	}
	p := s.at(unsafe.Pointer(m))
	raw := []byte{0x08, 0x01}
	m.ProtoReflect().SetUnknown(raw)
	if !bytes.Equal(*p, raw) {
		t.Errorf("%T: in place %x, runtime set %x", m, *p, raw)
	}
	*p = []byte{0x10, 0x02}
	if got := m.ProtoReflect().GetUnknown(); !bytes.Equal(got, *p) {
		t.Errorf("%T: runtime reads %x, set in place %x", m, got, *p)
	}
	c := P(new(T))
	s.copy(unsafe.Pointer(c), unsafe.Pointer(m))
	if got := c.ProtoReflect().GetUnknown(); !bytes.Equal(got, []byte{0x10, 0x02}) {
		t.Errorf("%T: copied unknown fields %x", m, got)
	}
	if (*s.at(unsafe.Pointer(c)))[0] = 0x18; !bytes.Equal(*p, []byte{0x10, 0x02}) {
		t.Errorf("%T: the copy shares its unknown fields with the original", m)
	}
	if d := P(proto.Clone(m).(P)); s.equalSlow(unsafe.Pointer(m), unsafe.Pointer(c)) || !s.equalSlow(unsafe.Pointer(m), unsafe.Pointer(d)) || s.none(unsafe.Pointer(m), unsafe.Pointer(d)) {
		t.Errorf("%T: equalUnknownOf disagrees with the unknown fields", m)
	}
}

func TestUnknownSlots(t *testing.T) {
	checkUnknownSlot[timestamppb.Timestamp](t, &unknownTimestamp)
	checkUnknownSlot[durationpb.Duration](t, &unknownDuration)
	checkUnknownSlot[emptypb.Empty](t, &unknownEmpty)
	checkUnknownSlot[fieldmaskpb.FieldMask](t, &unknownFieldMask)
	checkUnknownSlot[anypb.Any](t, &unknownAny)
	checkUnknownSlot[structpb.Struct](t, &unknownStruct)
	checkUnknownSlot[structpb.ListValue](t, &unknownListValue)
	checkUnknownSlot[structpb.Value](t, &unknownValue)
	checkUnknownSlot[wrapperspb.DoubleValue](t, &unknownDoubleValue)
	checkUnknownSlot[wrapperspb.FloatValue](t, &unknownFloatValue)
	checkUnknownSlot[wrapperspb.Int64Value](t, &unknownInt64Value)
	checkUnknownSlot[wrapperspb.UInt64Value](t, &unknownUInt64Value)
	checkUnknownSlot[wrapperspb.Int32Value](t, &unknownInt32Value)
	checkUnknownSlot[wrapperspb.UInt32Value](t, &unknownUInt32Value)
	checkUnknownSlot[wrapperspb.BoolValue](t, &unknownBoolValue)
	checkUnknownSlot[wrapperspb.StringValue](t, &unknownStringValue)
	checkUnknownSlot[wrapperspb.BytesValue](t, &unknownBytesValue)
}
