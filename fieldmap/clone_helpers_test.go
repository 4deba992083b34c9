package fieldmap_test

import (
	"bytes"
	"math"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/fieldmaskpb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/edgekit/edgekit/fieldmap"
	"github.com/edgekit/edgekit/internal/randmsg"
)

// wktCase holds the Clone and Equal helpers of one well-known type, typed
// as proto.Message.
type wktCase struct {
	name  string
	new   func() proto.Message
	clone func(proto.Message) proto.Message
	equal func(a, b proto.Message) bool
}

func wkt[T proto.Message](clone func(T) T, equal func(T, T) bool) wktCase {
	var zero T
	return wktCase{
		name:  string(zero.ProtoReflect().Descriptor().FullName()),
		new:   func() proto.Message { return zero.ProtoReflect().Type().New().Interface() },
		clone: func(m proto.Message) proto.Message { return clone(m.(T)) },
		equal: func(a, b proto.Message) bool { return equal(a.(T), b.(T)) },
	}
}

var wktCases = []wktCase{
	wkt(fieldmap.CloneTimestamp, fieldmap.EqualTimestamp),
	wkt(fieldmap.CloneDuration, fieldmap.EqualDuration),
	wkt(fieldmap.CloneEmpty, fieldmap.EqualEmpty),
	wkt(fieldmap.CloneFieldMask, fieldmap.EqualFieldMask),
	wkt(fieldmap.CloneAny, fieldmap.EqualAny),
	wkt(fieldmap.CloneStruct, fieldmap.EqualStruct),
	wkt(fieldmap.CloneListValue, fieldmap.EqualListValue),
	wkt(fieldmap.CloneValue, fieldmap.EqualValue),
	wkt(fieldmap.CloneDoubleValue, fieldmap.EqualDoubleValue),
	wkt(fieldmap.CloneFloatValue, fieldmap.EqualFloatValue),
	wkt(fieldmap.CloneInt64Value, fieldmap.EqualInt64Value),
	wkt(fieldmap.CloneUInt64Value, fieldmap.EqualUInt64Value),
	wkt(fieldmap.CloneInt32Value, fieldmap.EqualInt32Value),
	wkt(fieldmap.CloneUInt32Value, fieldmap.EqualUInt32Value),
	wkt(fieldmap.CloneBoolValue, fieldmap.EqualBoolValue),
	wkt(fieldmap.CloneStringValue, fieldmap.EqualStringValue),
	wkt(fieldmap.CloneBytesValue, fieldmap.EqualBytesValue),
}

func checkWKTEqual(t *testing.T, c wktCase, a, b proto.Message) {
	t.Helper()
	want := proto.Equal(a, b)
	if got := c.equal(a, b); got != want {
		t.Errorf("%s: Equal = %v, proto.Equal = %v\na: %v\nb: %v", c.name, got, want, a, b)
	}
	if got := c.equal(b, a); got != want {
		t.Errorf("%s: Equal (swapped) = %v, proto.Equal = %v\na: %v\nb: %v", c.name, got, want, b, a)
	}
}

// scramble changes, in place, every bytes value, unknown field and
// string-keyed entry reachable from m, so that aliasing shows in the
// original.
func scramble(m protoreflect.Message) {
	if u := m.GetUnknown(); len(u) > 0 {
		for i := range u {
			u[i] ^= 0xff
		}
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList():
			l := v.List()
			for i := 0; i < l.Len(); i++ {
				if fd.Message() != nil {
					scramble(l.Get(i).Message())
				} else if fd.Kind() == protoreflect.StringKind {
					l.Set(i, protoreflect.ValueOfString(l.Get(i).String()+"!"))
				}
			}
		case fd.IsMap():
			v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
				if fd.MapValue().Message() != nil {
					scramble(mv.Message())
				}
				return true
			})
		case fd.Message() != nil:
			scramble(v.Message())
		case fd.Kind() == protoreflect.BytesKind:
			for i, b := range v.Bytes() {
				v.Bytes()[i] = b ^ 0xff
			}
		}
		return true
	})
}

func TestWellKnownHelpersMatchProto(t *testing.T) {
	for _, c := range wktCases {
		t.Run(c.name, func(t *testing.T) {
			r := randmsg.New(7)
			for range 200 {
				a := c.new()
				randmsg.Fill(a.ProtoReflect(), r, randmsg.Options{Unknown: true, MaxDepth: 3})
				cl := c.clone(a)
				if !proto.Equal(cl, a) {
					t.Fatalf("clone differs:\n got %v\nwant %v", cl, a)
				}
				checkWKTEqual(t, c, a, cl)
				before, err := proto.MarshalOptions{Deterministic: true}.Marshal(a)
				if err != nil {
					t.Fatal(err)
				}
				scramble(cl.ProtoReflect())
				after, _ := proto.MarshalOptions{Deterministic: true}.Marshal(a)
				if !bytes.Equal(before, after) {
					t.Fatalf("changing the clone changed the original")
				}
				b := c.new()
				randmsg.Fill(b.ProtoReflect(), r, randmsg.Options{Unknown: true})
				checkWKTEqual(t, c, a, b)
				m := proto.Clone(a)
				randmsg.Mutate(m.ProtoReflect(), r)
				checkWKTEqual(t, c, a, m)
			}
			var zero proto.Message = c.new()
			typedNil := zero.ProtoReflect().Type().Zero().Interface()
			if got := c.clone(typedNil); got.ProtoReflect().IsValid() {
				t.Errorf("clone of nil = %v, want nil", got)
			}
			checkWKTEqual(t, c, typedNil, zero)
			checkWKTEqual(t, c, typedNil, typedNil)
		})
	}
}

func TestWellKnownEqualEdgeCases(t *testing.T) {
	nan, negZero := math.NaN(), math.Copysign(0, -1)
	unk := func(m proto.Message) proto.Message {
		m.ProtoReflect().SetUnknown([]byte{0x08, 0x01})
		return m
	}
	cases := []struct {
		c    int
		a, b proto.Message
	}{
		{7, structpb.NewNumberValue(nan), structpb.NewNumberValue(nan)},
		{7, structpb.NewNumberValue(negZero), structpb.NewNumberValue(0)},
		{7, &structpb.Value{Kind: (*structpb.Value_StringValue)(nil)}, &structpb.Value{}},
		{7, &structpb.Value{Kind: (*structpb.Value_StringValue)(nil)}, structpb.NewStringValue("")},
		{7, &structpb.Value{Kind: &structpb.Value_StructValue{}}, structpb.NewStructValue(&structpb.Struct{})},
		{7, &structpb.Value{Kind: &structpb.Value_ListValue{}}, &structpb.Value{Kind: &structpb.Value_StructValue{}}},
		{7, structpb.NewNullValue(), &structpb.Value{}},
		{5, &structpb.Struct{Fields: map[string]*structpb.Value{"a": nil}}, &structpb.Struct{Fields: map[string]*structpb.Value{"a": {}}}},
		{5, &structpb.Struct{}, &structpb.Struct{Fields: map[string]*structpb.Value{}}},
		{6, &structpb.ListValue{Values: []*structpb.Value{nil}}, &structpb.ListValue{Values: []*structpb.Value{{}}}},
		{8, wrapperspb.Double(negZero), wrapperspb.Double(0)},
		{8, wrapperspb.Double(nan), wrapperspb.Double(nan)},
		{9, wrapperspb.Float(float32(negZero)), wrapperspb.Float(0)},
		{16, wrapperspb.Bytes(nil), wrapperspb.Bytes([]byte{})},
		{4, &anypb.Any{Value: []byte{}}, &anypb.Any{}},
		{4, &anypb.Any{TypeUrl: "a"}, &anypb.Any{TypeUrl: "b"}},
		{3, &fieldmaskpb.FieldMask{Paths: []string{}}, &fieldmaskpb.FieldMask{}},
		{0, unk(&timestamppb.Timestamp{}), &timestamppb.Timestamp{}},
		{1, unk(&durationpb.Duration{Seconds: 1}), unk(&durationpb.Duration{Seconds: 1})},
		{2, unk(&emptypb.Empty{}), &emptypb.Empty{}},
	}
	for _, tc := range cases {
		checkWKTEqual(t, wktCases[tc.c], tc.a, tc.b)
		if cl := wktCases[tc.c].clone(tc.a); !proto.Equal(cl, tc.a) {
			t.Errorf("%s: clone of %v = %v", wktCases[tc.c].name, tc.a, cl)
		}
	}
}
