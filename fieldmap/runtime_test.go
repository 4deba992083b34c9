package fieldmap_test

import (
	"math"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/edgekit/edgekit/fieldmap"
)

func TestCloneEqualWellKnown(t *testing.T) {
	ts := &timestamppb.Timestamp{Seconds: 12, Nanos: 34}
	withUnknown := &timestamppb.Timestamp{Seconds: 1}
	withUnknown.ProtoReflect().SetUnknown([]byte{0x18, 0x01}) // field 3 varint 1
	st, _ := structpb.NewStruct(map[string]any{"a": 1.5, "b": []any{"x", true}})
	msgs := []proto.Message{
		ts, withUnknown, &durationpb.Duration{Seconds: -3, Nanos: -5},
		wrapperspb.String("hi"), st,
		wrapperspb.Double(math.Copysign(0, -1)), wrapperspb.Float(float32(math.Copysign(0, -1))),
	}
	for _, m := range msgs {
		c := fieldmap.Clone(m)
		if c == m {
			t.Fatalf("%T: Clone returned the same pointer", m)
		}
		if !proto.Equal(c, m) || !fieldmap.Equal(c, m) {
			t.Fatalf("%T: clone not equal: %v vs %v", m, c, m)
		}
	}
	if fieldmap.Equal(ts, &timestamppb.Timestamp{Seconds: 12}) {
		t.Fatal("different timestamps equal")
	}
	if fieldmap.Equal(&timestamppb.Timestamp{Seconds: 1}, withUnknown) {
		t.Fatal("unknown fields ignored by Equal")
	}
	var nilTS *timestamppb.Timestamp
	if fieldmap.Clone(nilTS) != nil || !fieldmap.Equal(nilTS, nil) || fieldmap.Equal(nilTS, &timestamppb.Timestamp{}) {
		t.Fatal("nil handling wrong")
	}
	var nilStruct *structpb.Struct
	if fieldmap.Clone(nilStruct) != nil {
		t.Fatal("Clone(nil Struct) not nil")
	}
}

func TestFloatRules(t *testing.T) {
	nan, negZero := math.NaN(), math.Copysign(0, -1)
	cases := []struct {
		a, b                       float64
		equal, implicitEqual, same bool
	}{
		{1, 1, true, true, true},
		{nan, nan, true, true, true},
		{nan, 1, false, false, false},
		{0, negZero, true, false, false},
		{negZero, negZero, true, true, true},
		{math.Inf(1), math.Inf(1), true, true, true},
		{negZero, 0, true, false, false},
		{1, 2, false, false, false},
		{0, 0, true, true, true},
	}
	for _, c := range cases {
		if got := fieldmap.EqualFloat64(c.a, c.b); got != c.equal {
			t.Errorf("EqualFloat64(%v, %v) = %v", c.a, c.b, got)
		}
		if got := fieldmap.EqualImplicitFloat64(c.a, c.b); got != c.implicitEqual {
			t.Errorf("EqualImplicitFloat64(%v, %v) = %v", c.a, c.b, got)
		}
		if got := fieldmap.SameFloat64(c.a, c.b); got != c.same {
			t.Errorf("SameFloat64(%v, %v) = %v", c.a, c.b, got)
		}
		a32, b32 := float32(c.a), float32(c.b)
		if got := fieldmap.EqualFloat32(a32, b32); got != c.equal {
			t.Errorf("EqualFloat32(%v, %v) = %v", a32, b32, got)
		}
		if got := fieldmap.EqualImplicitFloat32(a32, b32); got != c.implicitEqual {
			t.Errorf("EqualImplicitFloat32(%v, %v) = %v", a32, b32, got)
		}
	}
	// NaNs with different bits are equal, implicit presence or not.
	nan2, nan32, nan32b := math.Float64frombits(0x7ff8000000000001), float32(nan), math.Float32frombits(0x7fc00001)
	if !fieldmap.EqualImplicitFloat64(nan, nan2) || !fieldmap.EqualFloat64(nan, nan2) {
		t.Error("NaNs with different payloads differ")
	}
	if !fieldmap.EqualImplicitFloat32(nan32, nan32b) || !fieldmap.EqualFloat32(nan32, nan32b) {
		t.Error("float32 NaNs with different payloads differ")
	}
}

func TestPresenceHelpers(t *testing.T) {
	if fieldmap.CloneBytes(nil) != nil {
		t.Fatal("CloneBytes(nil) not nil")
	}
	if b := fieldmap.CloneBytes([]byte{}); b == nil || len(b) != 0 {
		t.Fatal("CloneBytes(empty) lost presence")
	}
	if fieldmap.EqualBytesPresence(nil, []byte{}) || !fieldmap.EqualBytesPresence([]byte{1}, []byte{1}) {
		t.Fatal("EqualBytesPresence wrong")
	}
	one, one2, two := 1, 1, 2
	if !fieldmap.EqualPtr(&one, &one2) || fieldmap.EqualPtr(&one, &two) || fieldmap.EqualPtr(&one, nil) || !fieldmap.EqualPtr[int](nil, nil) {
		t.Fatal("EqualPtr wrong")
	}
	p := fieldmap.ClonePtr(&one)
	*p = 5
	if one != 1 {
		t.Fatal("ClonePtr aliases")
	}
	nan := math.NaN()
	if !fieldmap.EqualPtrFloat64(&nan, &nan) || fieldmap.EqualPtrFloat64(&nan, nil) {
		t.Fatal("EqualPtrFloat64 wrong")
	}
}

func TestGenericCollections(t *testing.T) {
	eq := func(a, b []byte) bool { return string(a) == string(b) }
	if !fieldmap.EqualListFunc[[]byte](nil, [][]byte{}, eq) {
		t.Fatal("nil and empty lists differ")
	}
	if fieldmap.EqualListFunc([][]byte{{1}}, [][]byte{{2}}, eq) {
		t.Fatal("different lists equal")
	}
	if !fieldmap.EqualMapFunc(map[string][]byte{"a": {1}}, map[string][]byte{"a": {1}}, eq) ||
		fieldmap.EqualMapFunc(map[string][]byte{"a": {1}}, map[string][]byte{"b": {1}}, eq) {
		t.Fatal("EqualMapFunc wrong")
	}
	src := [][]byte{{1, 2}}
	c := fieldmap.CloneListFunc(src, fieldmap.CloneBytes)
	c[0][0] = 9
	if src[0][0] != 1 {
		t.Fatal("CloneListFunc aliases")
	}
	if fieldmap.CloneListFunc[int](nil, nil) != nil || fieldmap.CloneMapFunc[int, int](nil, nil) != nil {
		t.Fatal("nil not kept")
	}
}
