package fieldmap_test

import (
	"errors"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/edgekit/edgekit/fieldmap"
)

func TestEnumErrorAt(t *testing.T) {
	if fieldmap.EnumErrorAt(nil, "a.M", "f") != nil {
		t.Error("EnumErrorAt(nil) is not nil")
	}
	in := &fieldmap.InvalidEnumError{Message: "a.Sub", Field: "x.kind", Enum: "a.Kind", Value: 9}
	err := fieldmap.EnumErrorAt(in, "a.M", "sub")
	want := fieldmap.InvalidEnumError{Message: "a.M", Field: "sub.x.kind", Enum: "a.Kind", Value: 9}
	var got *fieldmap.InvalidEnumError
	if !errors.As(err, &got) || *got != want {
		t.Fatalf("EnumErrorAt = %#v, want %#v", err, want)
	}
	if *in != (fieldmap.InvalidEnumError{Message: "a.Sub", Field: "x.kind", Enum: "a.Kind", Value: 9}) {
		t.Errorf("EnumErrorAt changed its argument: %#v", in)
	}
	other := errors.New("boom")
	if err := fieldmap.EnumErrorAt(other, "a.M", "sub"); !errors.Is(err, other) || err.Error() != "a.M.sub: boom" {
		t.Errorf("EnumErrorAt(other) = %v", err)
	}
}

func TestValidateEnumsAtReflection(t *testing.T) {
	if err := fieldmap.ValidateEnumsAt(nil, "a.M", "f"); err != nil {
		t.Errorf("nil message: %v", err)
	}
	if err := fieldmap.ValidateEnumsAt((*structpb.Struct)(nil), "a.M", "f"); err != nil {
		t.Errorf("typed nil message: %v", err)
	}
	// Several invalid values in a map: the least key wins, every time.
	st := &structpb.Struct{Fields: map[string]*structpb.Value{}}
	for _, k := range []string{"q", "d", "m", "b", "z", "c"} {
		st.Fields[k] = &structpb.Value{Kind: &structpb.Value_NullValue{NullValue: structpb.NullValue(k[0])}}
	}
	st.Fields["a"] = structpb.NewStringValue("fine")
	for range 20 {
		err := fieldmap.ValidateEnumsAt(st, "a.M", "st")
		want := fieldmap.InvalidEnumError{Message: "a.M", Field: "st.fields.null_value", Enum: "google.protobuf.NullValue", Value: 'b'}
		var got *fieldmap.InvalidEnumError
		if !errors.As(err, &got) || *got != want || !errors.Is(err, fieldmap.ErrInvalidEnum) {
			t.Fatalf("ValidateEnumsAt = %#v, want %#v", err, want)
		}
	}
	// Lists by index.
	lv := &structpb.ListValue{Values: []*structpb.Value{
		structpb.NewNullValue(),
		{Kind: &structpb.Value_NullValue{NullValue: 3}},
		{Kind: &structpb.Value_NullValue{NullValue: 4}},
	}}
	var got *fieldmap.InvalidEnumError
	if err := fieldmap.ValidateEnumsAt(lv, "a.M", "l"); !errors.As(err, &got) || got.Value != 3 || got.Field != "l.values.null_value" {
		t.Errorf("list: %v", err)
	}
	if err := fieldmap.ValidateEnumsAt(structpb.NewNullValue(), "a.M", "v"); err != nil {
		t.Errorf("valid value: %v", err)
	}
}
