package reference_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/edgekit/edgekit/fieldmap"
	"github.com/edgekit/edgekit/internal/reference"
)

func TestValidateEnums(t *testing.T) {
	tests := []struct {
		msg  protoreflect.FullName
		in   string
		want *fieldmap.InvalidEnumError
	}{
		{"reftest.v1.Top", `leaf { color: COLOR_RED } colors: [1, 2]`, nil},
		{"reftest.v1.Top", `scalars { f_enum: 7 }`, &fieldmap.InvalidEnumError{Message: "reftest.v1.Top", Field: "scalars.f_enum", Enum: "reftest.v1.Color", Value: 7}},
		{"reftest.v1.Top", `colors: [1, -3, 9]`, &fieldmap.InvalidEnumError{Message: "reftest.v1.Top", Field: "colors", Enum: "reftest.v1.Color", Value: -3}},
		{"reftest.v1.Top", `flags { key: true value: 5 } flags { key: false value: 4 }`, &fieldmap.InvalidEnumError{Message: "reftest.v1.Top", Field: "flags", Enum: "reftest.v1.Color", Value: 4}},
		// Depth first in field order: all of middle (1) is searched
		// before scalars (13).
		{"reftest.v1.Top", `scalars { f_enum: 8 } middle { leaves { color: 1 } leaves { color: 9 } }`, &fieldmap.InvalidEnumError{Message: "reftest.v1.Top", Field: "middle.leaves.color", Enum: "reftest.v1.Color", Value: 9}},
		{"reftest.v1.Top", `leaves { key: 2 value { color: 6 } } leaves { key: 1 value { color: 5 } }`, &fieldmap.InvalidEnumError{Message: "reftest.v1.Top", Field: "leaves.color", Enum: "reftest.v1.Color", Value: 5}},
		{"reftest.v1.ed.Ed", `parts { open: 3 }`, &fieldmap.InvalidEnumError{Message: "reftest.v1.ed.Ed", Field: "parts.open", Enum: "reftest.v1.ed.Open", Value: 3}},
		{"reftest.v1.legacy.Old", `level: HIGH child { level: LOW }`, nil},
	}
	for _, tt := range tests {
		err := reference.ValidateEnums(msg(t, tt.msg, tt.in))
		var got *fieldmap.InvalidEnumError
		if err != nil && !errors.As(err, &got) {
			t.Fatalf("%s: error %T %v", tt.in, err, err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ValidateEnums(%s) (-want +got):\n%s", tt.in, diff)
		}
		if err != nil && !errors.Is(err, fieldmap.ErrInvalidEnum) {
			t.Errorf("error does not match ErrInvalidEnum")
		}
	}
	// A closed enum holding an undefined value set through reflection is
	// reported too.
	old := dynamicpb.NewMessage(desc(t, "reftest.v1.legacy.Old"))
	old.Set(old.Descriptor().Fields().ByName("level"), protoreflect.ValueOfEnum(42))
	if err := reference.ValidateEnums(old); err == nil {
		t.Errorf("closed enum with value 42: no error")
	}
	if err := reference.ValidateEnums(nil); err != nil {
		t.Errorf("nil message: %v", err)
	}
}
