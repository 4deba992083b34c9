package fieldmap

import (
	"math"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

func TestEqualUnknown(t *testing.T) {
	field := func(num protowire.Number, v uint64) []byte {
		b := protowire.AppendTag(nil, num, protowire.VarintType)
		return protowire.AppendVarint(b, v)
	}
	cat := func(bs ...[]byte) []byte {
		var out []byte
		for _, b := range bs {
			out = append(out, b...)
		}
		return out
	}
	f1a, f1b, f2 := field(1, 5), field(1, 6), field(2, 7)
	tests := []struct {
		name string
		a, b []byte
		want bool
	}{
		{"both nil", nil, nil, true},
		{"nil and empty", nil, []byte{}, true},
		{"same bytes", cat(f1a, f2), cat(f1a, f2), true},
		{"other numbers reordered", cat(f1a, f2), cat(f2, f1a), true},
		{"same number reordered", cat(f1a, f1b), cat(f1b, f1a), false},
		{"different value", cat(f1a, f2), cat(f1b, f2), false},
		{"different length", f1a, cat(f1a, f2), false},
		{"one side missing", f1a, nil, false},
		{"malformed same", []byte{0xff, 0xff}, []byte{0xff, 0xff}, true},
		{"malformed different", []byte{0xff, 0xff}, []byte{0xff, 0xfe}, false},
		{"malformed after field", cat(f2, []byte{0x80}), cat(f1a, []byte{0x80}), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := EqualUnknown(tt.a, tt.b); got != tt.want {
				t.Errorf("EqualUnknown(%x, %x) = %v, want %v", tt.a, tt.b, got, tt.want)
			}
			if got := EqualUnknown(tt.b, tt.a); got != tt.want {
				t.Errorf("EqualUnknown(%x, %x) = %v, want %v (swapped)", tt.b, tt.a, got, tt.want)
			}
		})
	}
}

func TestEqualElem(t *testing.T) {
	type msg struct{ n int }
	eq := func(a, b *msg) bool {
		if a == nil || b == nil {
			return a == nil && b == nil
		}
		return a.n == b.n
	}
	empty, one := &msg{}, &msg{n: 1}
	tests := []struct {
		name string
		a, b *msg
		want bool
	}{
		{"nil nil", nil, nil, true},
		{"nil empty", nil, empty, true},
		{"empty nil", empty, nil, true},
		{"nil non-empty", nil, one, false},
		{"non-empty nil", one, nil, false},
		{"equal", &msg{n: 1}, one, true},
	}
	for _, tt := range tests {
		if got := EqualElem(tt.a, tt.b, eq); got != tt.want {
			t.Errorf("%s: EqualElem = %v, want %v", tt.name, got, tt.want)
		}
	}
	if !EqualMessageListFunc([]*msg{nil, one}, []*msg{empty, {n: 1}}, eq) {
		t.Error("EqualMessageListFunc: nil element differs from empty")
	}
	if EqualMessageListFunc([]*msg{nil}, []*msg{one}, eq) || EqualMessageListFunc([]*msg{nil}, nil, eq) {
		t.Error("EqualMessageListFunc: unequal lists compare equal")
	}
	if !EqualMessageListFunc[*msg](nil, []*msg{}, eq) {
		t.Error("EqualMessageListFunc: nil and empty lists differ")
	}
	if !EqualMessageMapFunc(map[int]*msg{1: nil}, map[int]*msg{1: empty}, eq) {
		t.Error("EqualMessageMapFunc: nil value differs from empty")
	}
	if EqualMessageMapFunc(map[int]*msg{1: nil}, map[int]*msg{2: nil}, eq) || EqualMessageMapFunc(map[int]*msg{1: one}, map[int]*msg{1: nil}, eq) {
		t.Error("EqualMessageMapFunc: unequal maps compare equal")
	}
	if !EqualMessageMapFunc[int, *msg](nil, map[int]*msg{}, eq) {
		t.Error("EqualMessageMapFunc: nil and empty maps differ")
	}
}

// TestEqualNilElem checks the comparison generated Equal methods make when
// one of two list elements, map values or oneof members is nil: nil equals
// nil and any message proto.Equal to an empty one, and nothing else.
func TestEqualNilElem(t *testing.T) {
	withUnknown := &wrapperspb.Int64Value{}
	withUnknown.ProtoReflect().SetUnknown(protowire.AppendVarint(protowire.AppendTag(nil, 9, protowire.VarintType), 1))
	tests := []struct {
		name string
		m    proto.Message // the non-nil side, or a nil pointer for both nil
		want bool
	}{
		{"both nil", (*wrapperspb.Int64Value)(nil), true},
		{"empty", &wrapperspb.Int64Value{}, true},
		{"a field set", &wrapperspb.Int64Value{Value: 1}, false},
		{"implicit float -0", &wrapperspb.DoubleValue{Value: math.Copysign(0, -1)}, false},
		{"implicit float +0", &wrapperspb.DoubleValue{}, true},
		{"empty string", &wrapperspb.StringValue{}, true},
		{"unknown fields only", withUnknown, false},
		{"typed nil oneof wrapper", &structpb.Value{Kind: (*structpb.Value_NumberValue)(nil)}, true},
		{"oneof member set to its zero", &structpb.Value{Kind: &structpb.Value_NumberValue{}}, false},
		{"empty list", &structpb.ListValue{Values: []*structpb.Value{}}, true},
		{"list of one nil", &structpb.ListValue{Values: []*structpb.Value{nil}}, false},
		{"empty sub-message", &structpb.Value{Kind: &structpb.Value_StructValue{StructValue: &structpb.Struct{}}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nilOf := tt.m.ProtoReflect().Type().Zero().Interface() // a nil pointer of the same type
			if got := EqualNilElem(nilOf, tt.m); got != tt.want {
				t.Errorf("EqualNilElem(nil, %v) = %v, want %v", tt.m, got, tt.want)
			}
			if got := EqualNilElem(tt.m, nilOf); got != tt.want {
				t.Errorf("EqualNilElem(%v, nil) = %v, want %v", tt.m, got, tt.want)
			}
			if tt.m.ProtoReflect().IsValid() {
				empty := tt.m.ProtoReflect().New().Interface()
				if ref := proto.Equal(tt.m, empty); ref != tt.want {
					t.Errorf("proto.Equal(%v, empty) = %v, the test wants %v", tt.m, ref, tt.want)
				}
			}
		})
	}
}
