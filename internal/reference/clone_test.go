package reference_test

import (
	"math"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/edgekit/edgekit/internal/reference"
)

// TestCloneKeepsNegativeZero uses a generated proto3 message with an
// implicit-presence double: -0 is present (it marshals, and proto.Equal
// tells it from +0), so a clone and a copy must keep it.
func TestCloneKeepsNegativeZero(t *testing.T) {
	negZero := &wrapperspb.DoubleValue{Value: math.Copysign(0, -1)}
	c := reference.Clone(negZero).(*wrapperspb.DoubleValue)
	if !math.Signbit(c.Value) || !reference.Equal(c, negZero) {
		t.Errorf("Clone lost -0")
	}
	if reference.Equal(c, &wrapperspb.DoubleValue{}) {
		t.Errorf("-0 equals +0 in an implicit-presence field")
	}
	dst := &wrapperspb.DoubleValue{}
	fm := fm(t, dst.ProtoReflect().Descriptor(), "1")
	if n := reference.CopyInFields(dst.ProtoReflect(), negZero.ProtoReflect(), fm); n != 1 || !math.Signbit(dst.Value) {
		t.Errorf("CopyInFields of -0: count %d, value %v", n, dst.Value)
	}
	if reference.Clone(nil) != nil {
		t.Errorf("Clone(nil) != nil")
	}
	if c := reference.Clone((*wrapperspb.DoubleValue)(nil)); c.ProtoReflect().IsValid() {
		t.Errorf("Clone of a typed nil is valid")
	}
	withUnknown := &wrapperspb.StringValue{Value: "x"}
	withUnknown.ProtoReflect().SetUnknown([]byte{0x40, 0x01})
	cu := reference.Clone(withUnknown)
	if !proto.Equal(cu, withUnknown) {
		t.Errorf("Clone lost unknown fields")
	}
	cu.ProtoReflect().GetUnknown()[1] = 2
	if withUnknown.ProtoReflect().GetUnknown()[1] != 1 {
		t.Errorf("Clone shares unknown bytes")
	}
}
