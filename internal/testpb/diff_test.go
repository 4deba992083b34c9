package testpb_test

import (
	"math"
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/edgekit/edgekit/internal/testpb"
	otherpb "github.com/edgekit/edgekit/internal/testpb/other"
)

func TestDiffFieldsTable(t *testing.T) {
	tests := []struct {
		name string
		a, b proto.Message
		want []string
	}{
		{"identical", topFixture(), topFixture(), nil},
		{"nil and empty", (*testpb.Top)(nil), &testpb.Top{}, nil},
		{"nil and a sub-message", (*testpb.Top)(nil), &testpb.Top{Middle: &testpb.Middle{}}, []string{"2"}},
		{"deep scalar adds its ancestors", &testpb.Top{Middle: &testpb.Middle{Leaf: leafOf("a", 1)}}, &testpb.Top{Middle: &testpb.Middle{Leaf: leafOf("b", 1)}},
			[]string{"2", "2.2", "2.2.1"}},
		{"sub-message on one side", &testpb.Top{Middle: &testpb.Middle{Leaf: &testpb.Leaf{}}}, &testpb.Top{Middle: &testpb.Middle{}},
			[]string{"2", "2.2"}},
		{"list element differs: the list", &testpb.Top{Middles: []*testpb.Middle{{Name: "a"}}}, &testpb.Top{Middles: []*testpb.Middle{{Name: "b"}}},
			[]string{"4"}},
		{"nil and empty list are equal", &testpb.Top{Tags: []string{}, Labels: map[string]string{}}, &testpb.Top{}, nil},
		{"map value", &testpb.Top{LeafMap: map[int32]*testpb.Leaf{1: {}}}, &testpb.Top{LeafMap: map[int32]*testpb.Leaf{1: {Name: "x"}}}, []string{"6"}},
		{"oneof switches member", &testpb.Top{Choice: &testpb.Top_ChoiceName{ChoiceName: "x"}}, &testpb.Top{Choice: &testpb.Top_ChoiceNumber{}},
			[]string{"12", "14"}},
		{"oneof message member child", &testpb.Top{Choice: &testpb.Top_ChoiceLeaf{ChoiceLeaf: leafOf("a", 1)}}, &testpb.Top{Choice: &testpb.Top_ChoiceLeaf{ChoiceLeaf: leafOf("a", 2)}},
			[]string{"13", "13.2"}},
		{"oneof message member against another member", &testpb.Top{Choice: &testpb.Top_ChoiceLeaf{ChoiceLeaf: &testpb.Leaf{}}}, &testpb.Top{Choice: &testpb.Top_ChoiceName{}},
			[]string{"12", "13"}},
		{"NaN equals NaN", &testpb.Scalars{FDouble: math.NaN()}, &testpb.Scalars{FDouble: math.NaN()}, nil},
		{"-0 differs from +0 without presence", &testpb.Top{Scalars: &testpb.Scalars{}}, &testpb.Top{Scalars: &testpb.Scalars{FDouble: math.Copysign(0, -1)}},
			[]string{"16", "16.1"}},
		{"optional zero against unset", &testpb.Top{Optionals: &testpb.Optionals{OInt32: ptr(int32(0))}}, &testpb.Top{Optionals: &testpb.Optionals{}},
			[]string{"17", "17.3"}},
		{"other package", &testpb.Top{Label: &otherpb.Label{Color: 1}}, &testpb.Top{Label: &otherpb.Label{}}, []string{"19", "19.2"}},
		{"well-known unit", &testpb.Top{Wkt: &testpb.Wkt{Ts: timestamppb.New(timestampAt(1))}}, &testpb.Top{Wkt: &testpb.Wkt{Ts: timestamppb.New(timestampAt(2))}},
			[]string{"18", "18.1"}},
		{"proto2 default is not presence", &testpb.Legacy{Count: ptr(int32(7))}, &testpb.Legacy{}, []string{"2"}},
		{"group child", &testpb.Legacy{Item: &testpb.Legacy_Item{Num: ptr(uint64(1))}}, &testpb.Legacy{Item: &testpb.Legacy_Item{}}, []string{"9", "9.11"}},
		{"recursion stop", &testpb.Tree{Left: &testpb.Tree{Left: &testpb.Tree{Name: "x"}}}, &testpb.Tree{Left: &testpb.Tree{Left: &testpb.Tree{}}},
			[]string{"2"}},
		{"through another type", &testpb.Tree{Branch: &testpb.Branch{Tree: &testpb.Tree{Name: "x"}}}, &testpb.Tree{Branch: &testpb.Branch{Tree: &testpb.Tree{}}},
			[]string{"5", "5.2"}},
		{"edition implicit", &testpb.Modern{Count: 1}, &testpb.Modern{}, []string{"2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := flaggedOf(t, tt.a.ProtoReflect().Type())
			got := f.DiffFields(tt.a, tt.b)
			if got == nil {
				t.Fatal("nil FieldMap")
			}
			if !slices.Equal(got.Fields(), tt.want) && !(len(tt.want) == 0 && got.Count() == 0) {
				t.Errorf("DiffFields = %v, want %v", got.Fields(), tt.want)
			}
			if got.Schema() == nil || got.Schema().Message() != string(tt.a.ProtoReflect().Descriptor().FullName()) {
				t.Errorf("not bound to the schema of %s: %v", tt.a.ProtoReflect().Descriptor().FullName(), got.Schema())
			}
			if back := f.DiffFields(tt.b, tt.a); !slices.Equal(back.Fields(), got.Fields()) {
				t.Errorf("not symmetric: %v and %v", got.Fields(), back.Fields())
			}
			if err := got.Schema().Check(got); err != nil {
				t.Errorf("flags not in the schema: %v", err)
			}
		})
	}
	var a, b *testpb.Top
	if fm := a.DiffFields(b); fm == nil || fm.Count() != 0 {
		t.Errorf("nil against nil: %v", fm)
	}
}

// newPair returns two random messages of f's type: independent, or the
// second a mutation of the first (small diffs).
