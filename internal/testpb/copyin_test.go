package testpb_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/edgekit/edgekit/fieldmap"
	"github.com/edgekit/edgekit/internal/randmsg"
	"github.com/edgekit/edgekit/internal/reference"
	"github.com/edgekit/edgekit/internal/testpb"
	otherpb "github.com/edgekit/edgekit/internal/testpb/other"
)

func TestCopyInFieldsTop(t *testing.T) {
	middle := func(name string, leaf *testpb.Leaf, leaves ...*testpb.Leaf) *testpb.Middle {
		return &testpb.Middle{Name: name, Leaf: leaf, Leaves: leaves}
	}
	runCopyCases(t, []copyCase{
		{name: "nil field map copies nothing",
			dst: &testpb.Top{Tags: []string{"a"}}, src: &testpb.Top{Tags: []string{"b"}}, fm: nil,
			want: &testpb.Top{Tags: []string{"a"}}, count: 0},
		{name: "unrelated flag copies nothing",
			dst: &testpb.Top{Tags: []string{"a"}}, src: &testpb.Top{Tags: []string{"b"}}, fm: fmOf("21"),
			want: &testpb.Top{Tags: []string{"a"}}, count: 0},
		{name: "parent flag copies the whole sub-message",
			dst:  &testpb.Top{Middle: middle("d", leafOf("dl", 1))},
			src:  &testpb.Top{Middle: middle("s", nil, leafOf("x", 2))},
			fm:   fmOf(testpb.TopFieldMiddle),
			want: &testpb.Top{Middle: middle("s", nil, leafOf("x", 2))}, count: 1},
		{name: "parent flag with no src sub-message clears it",
			dst: &testpb.Top{Middle: middle("d", nil)}, src: &testpb.Top{}, fm: fmOf("2"),
			want: &testpb.Top{}, count: 1},
		{name: "parent flag and a child flag: the parent wins",
			dst: &testpb.Top{Middle: middle("d", leafOf("dl", 1))}, src: &testpb.Top{Middle: middle("s", nil)},
			fm: fmOf("2", "2.2.1"), want: &testpb.Top{Middle: middle("s", nil)}, count: 1},
		{name: "child flag copies one field",
			dst:  &testpb.Top{Middle: middle("d", leafOf("dl", 1))},
			src:  &testpb.Top{Middle: middle("s", leafOf("sl", 2))},
			fm:   fmOf(testpb.TopFieldMiddleLeafName),
			want: &testpb.Top{Middle: middle("d", leafOf("sl", 1))}, count: 1},
		{name: "child flag creates the sub-messages, each counted",
			dst: &testpb.Top{}, src: &testpb.Top{Middle: middle("s", leafOf("sl", 2))}, fm: fmOf("2.2.1"),
			want: &testpb.Top{Middle: middle("", leafOf("sl", 0))}, count: 3},
		{name: "child flag creates an empty sub-message for a zero field",
			dst: &testpb.Top{}, src: &testpb.Top{Middle: middle("", leafOf("", 2))}, fm: fmOf("2.2.1"),
			want: &testpb.Top{Middle: middle("", &testpb.Leaf{})}, count: 2},
		{name: "child flag with the sub-message on neither side does nothing",
			dst: &testpb.Top{Tags: []string{"a"}}, src: &testpb.Top{}, fm: fmOf("2.2.1"),
			want: &testpb.Top{Tags: []string{"a"}}, count: 0,
			check: func(t *testing.T, dst proto.Message) {
				if dst.(*testpb.Top).Middle != nil {
					t.Error("Middle created")
				}
			}},
		{name: "child flags read a nil src sub-message as empty",
			dst:  &testpb.Top{Middle: middle("d", leafOf("dl", 1))},
			src:  &testpb.Top{},
			fm:   fmOf("2.1", "2.2.1"),
			want: &testpb.Top{Middle: middle("", leafOf("", 1))}, count: 2},
		{name: "nil src reads as empty", nilSource: true,
			dst: &testpb.Top{Middle: middle("d", leafOf("dl", 1)), Tags: []string{"x"}, Choice: &testpb.Top_ChoiceNumber{ChoiceNumber: 1}},
			src: &testpb.Top{}, fm: fmOf("2.2.2", "3", "14"),
			want: &testpb.Top{Middle: middle("d", leafOf("dl", 0))}, count: 3},
		{name: "flag under a list copies the whole list",
			dst:  &testpb.Top{Middles: []*testpb.Middle{middle("a", nil)}},
			src:  &testpb.Top{Middles: []*testpb.Middle{middle("b", leafOf("c", 1)), middle("d", nil)}},
			fm:   fmOf(testpb.TopFieldMiddlesLeafName),
			want: &testpb.Top{Middles: []*testpb.Middle{middle("b", leafOf("c", 1)), middle("d", nil)}}, count: 1},
		{name: "flag under a list of a sub-message copies that list",
			dst:  &testpb.Top{Middle: middle("d", nil, leafOf("a", 1))},
			src:  &testpb.Top{Middle: middle("s", nil, leafOf("b", 2))},
			fm:   fmOf("2.3.1"),
			want: &testpb.Top{Middle: middle("d", nil, leafOf("b", 2))}, count: 1},
		{name: "replace with an empty list makes it nil",
			dst: &testpb.Top{Tags: []string{"a"}}, src: &testpb.Top{Tags: []string{}}, fm: fmOf("3"),
			want: &testpb.Top{}, count: 1,
			check: func(t *testing.T, dst proto.Message) {
				if dst.(*testpb.Top).Tags != nil {
					t.Error("Tags not nil")
				}
			}},
		{name: "replace with an equal list counts nothing",
			dst: &testpb.Top{Tags: []string{"a", "b"}}, src: &testpb.Top{Tags: []string{"a", "b"}}, fm: fmOf("3"),
			want: &testpb.Top{Tags: []string{"a", "b"}}, count: 0},
		{name: "add to a nil list, duplicates once",
			dst: &testpb.Top{}, src: &testpb.Top{Tags: []string{"a", "b", "a"}}, fm: fmOf("3:add"),
			want: &testpb.Top{Tags: []string{"a", "b"}}, count: 1},
		{name: "add keeps dst order and src order of the new elements",
			dst: &testpb.Top{Tags: []string{"b"}}, src: &testpb.Top{Tags: []string{"a", "b", "c", "a"}}, fm: fmOf("3:add"),
			want: &testpb.Top{Tags: []string{"b", "a", "c"}}, count: 1},
		{name: "add of present elements counts nothing",
			dst: &testpb.Top{Tags: []string{"a", "b"}}, src: &testpb.Top{Tags: []string{"b"}}, fm: fmOf("3:add"),
			want: &testpb.Top{Tags: []string{"a", "b"}}, count: 0},
		{name: "add compares messages with Equal",
			dst:  &testpb.Top{Middles: []*testpb.Middle{middle("a", nil)}},
			src:  &testpb.Top{Middles: []*testpb.Middle{middle("a", nil), middle("b", nil), middle("b", nil)}},
			fm:   fmOf("4:add"),
			want: &testpb.Top{Middles: []*testpb.Middle{middle("a", nil), middle("b", nil)}}, count: 1},
		{name: "add compares NaN equal to NaN",
			dst: &testpb.Top{Samples: []float64{math.NaN()}}, src: &testpb.Top{Samples: []float64{math.NaN(), 1}}, fm: fmOf("8:add"),
			want: &testpb.Top{Samples: []float64{math.NaN(), 1}}, count: 1},
		{name: "remove keeps the order of the others",
			dst: &testpb.Top{Tags: []string{"a", "b", "c", "b"}}, src: &testpb.Top{Tags: []string{"b", "x"}}, fm: fmOf("3:remove"),
			want: &testpb.Top{Tags: []string{"a", "c"}}, count: 1},
		{name: "remove of everything makes nil",
			dst: &testpb.Top{Tags: []string{"a", "a"}}, src: &testpb.Top{Tags: []string{"a"}}, fm: fmOf("3:remove"),
			want: &testpb.Top{}, count: 1,
			check: func(t *testing.T, dst proto.Message) {
				if dst.(*testpb.Top).Tags != nil {
					t.Error("Tags not nil")
				}
			}},
		{name: "remove from a nil list",
			dst: &testpb.Top{}, src: &testpb.Top{Tags: []string{"a"}}, fm: fmOf("3:remove"),
			want: &testpb.Top{}, count: 0},
		{name: "remove of messages and bytes",
			dst: &testpb.Top{Middles: []*testpb.Middle{middle("a", nil), middle("b", nil)}, Blobs: [][]byte{{1}, {2}}},
			src: &testpb.Top{Middles: []*testpb.Middle{middle("a", nil)}, Blobs: [][]byte{{2}}}, fm: fmOf("4:remove", "7:remove"),
			want: &testpb.Top{Middles: []*testpb.Middle{middle("b", nil)}, Blobs: [][]byte{{1}}}, count: 2},
		{name: "action on a flag under a list is replace",
			dst: &testpb.Top{Middles: []*testpb.Middle{middle("a", nil)}}, src: &testpb.Top{Middles: []*testpb.Middle{middle("b", nil)}},
			fm:   fmOf("4.1:add"),
			want: &testpb.Top{Middles: []*testpb.Middle{middle("b", nil)}}, count: 1},
		{name: "map add to nil",
			dst: &testpb.Top{}, src: &testpb.Top{Labels: map[string]string{"a": "1"}}, fm: fmOf("5:add"),
			want: &testpb.Top{Labels: map[string]string{"a": "1"}}, count: 1},
		{name: "map add replaces values of existing keys",
			dst:  &testpb.Top{Labels: map[string]string{"a": "1", "b": "2"}, LeafMap: map[int32]*testpb.Leaf{1: leafOf("x", 1)}},
			src:  &testpb.Top{Labels: map[string]string{"b": "3", "c": "4"}, LeafMap: map[int32]*testpb.Leaf{1: leafOf("y", 1), 2: leafOf("z", 2)}},
			fm:   fmOf("5:add", "6:add"),
			want: &testpb.Top{Labels: map[string]string{"a": "1", "b": "3", "c": "4"}, LeafMap: map[int32]*testpb.Leaf{1: leafOf("y", 1), 2: leafOf("z", 2)}}, count: 2},
		{name: "map add of present entries counts nothing",
			dst: &testpb.Top{Labels: map[string]string{"a": "1", "b": "2"}}, src: &testpb.Top{Labels: map[string]string{"b": "2"}}, fm: fmOf("5:add"),
			want: &testpb.Top{Labels: map[string]string{"a": "1", "b": "2"}}, count: 0},
		{name: "map remove deletes the keys of src",
			dst: &testpb.Top{Labels: map[string]string{"a": "1", "b": "2"}}, src: &testpb.Top{Labels: map[string]string{"b": "other", "z": "9"}}, fm: fmOf("5:remove"),
			want: &testpb.Top{Labels: map[string]string{"a": "1"}}, count: 1},
		{name: "map remove of every key makes nil",
			dst: &testpb.Top{BlobMap: map[string][]byte{"a": {1}}}, src: &testpb.Top{BlobMap: map[string][]byte{"a": nil}}, fm: fmOf("10:remove"),
			want: &testpb.Top{}, count: 1,
			check: func(t *testing.T, dst proto.Message) {
				if dst.(*testpb.Top).BlobMap != nil {
					t.Error("BlobMap not nil")
				}
			}},
		{name: "map replace",
			dst: &testpb.Top{StateMap: map[bool]testpb.State{true: 1}}, src: &testpb.Top{StateMap: map[bool]testpb.State{false: 2}}, fm: fmOf("11"),
			want: &testpb.Top{StateMap: map[bool]testpb.State{false: 2}}, count: 1},
		{name: "oneof: src member is copied over another member",
			dst: &testpb.Top{Choice: &testpb.Top_ChoiceNumber{ChoiceNumber: 5}}, src: &testpb.Top{Choice: &testpb.Top_ChoiceName{ChoiceName: "x"}},
			fm: fmOf("12"), want: &testpb.Top{Choice: &testpb.Top_ChoiceName{ChoiceName: "x"}}, count: 1},
		{name: "oneof: member unset in src clears dst",
			dst: &testpb.Top{Choice: &testpb.Top_ChoiceNumber{ChoiceNumber: 5}}, src: &testpb.Top{Choice: &testpb.Top_ChoiceName{ChoiceName: "x"}},
			fm: fmOf("14"), want: &testpb.Top{}, count: 1},
		{name: "oneof: member held by neither does nothing",
			dst: &testpb.Top{Choice: &testpb.Top_ChoiceNumber{ChoiceNumber: 5}}, src: &testpb.Top{Choice: &testpb.Top_ChoiceName{ChoiceName: "x"}},
			fm: fmOf("15"), want: &testpb.Top{Choice: &testpb.Top_ChoiceNumber{ChoiceNumber: 5}}, count: 0},
		{name: "oneof: both members flagged, setting visited first: the other finds nothing to clear",
			dst: &testpb.Top{Choice: &testpb.Top_ChoiceNumber{ChoiceNumber: 5}}, src: &testpb.Top{Choice: &testpb.Top_ChoiceName{ChoiceName: "x"}},
			fm: fmOf("12", "14"), want: &testpb.Top{Choice: &testpb.Top_ChoiceName{ChoiceName: "x"}}, count: 1},
		{name: "oneof: both members flagged, clearing visited first: two visits counted",
			dst: &testpb.Top{Choice: &testpb.Top_ChoiceName{ChoiceName: "x"}}, src: &testpb.Top{Choice: &testpb.Top_ChoiceNumber{ChoiceNumber: 5}},
			fm: fmOf("12", "14"), want: &testpb.Top{Choice: &testpb.Top_ChoiceNumber{ChoiceNumber: 5}}, count: 2},
		{name: "oneof: same member, same value",
			dst: &testpb.Top{Choice: &testpb.Top_ChoiceNumber{ChoiceNumber: 0}}, src: &testpb.Top{Choice: &testpb.Top_ChoiceNumber{ChoiceNumber: 0}},
			fm: fmOf("14"), want: &testpb.Top{Choice: &testpb.Top_ChoiceNumber{ChoiceNumber: 0}}, count: 0},
		{name: "oneof: zero member value is present",
			dst: &testpb.Top{}, src: &testpb.Top{Choice: &testpb.Top_ChoiceBytes{ChoiceBytes: []byte{}}},
			fm: fmOf("15"), want: &testpb.Top{Choice: &testpb.Top_ChoiceBytes{ChoiceBytes: []byte{}}}, count: 1},
		{name: "oneof message member: child flag creates the member",
			dst:  &testpb.Top{Choice: &testpb.Top_ChoiceNumber{ChoiceNumber: 5}},
			src:  &testpb.Top{Choice: &testpb.Top_ChoiceLeaf{ChoiceLeaf: leafOf("x", 3)}},
			fm:   fmOf(testpb.TopFieldChoiceLeafName),
			want: &testpb.Top{Choice: &testpb.Top_ChoiceLeaf{ChoiceLeaf: leafOf("x", 0)}}, count: 2},
		{name: "oneof message member: child flag reads another src member as empty",
			dst:  &testpb.Top{Choice: &testpb.Top_ChoiceLeaf{ChoiceLeaf: leafOf("x", 3)}},
			src:  &testpb.Top{Choice: &testpb.Top_ChoiceName{ChoiceName: "y"}},
			fm:   fmOf("13.1"),
			want: &testpb.Top{Choice: &testpb.Top_ChoiceLeaf{ChoiceLeaf: leafOf("", 3)}}, count: 1},
		{name: "oneof message member: child flag, held by neither",
			dst:  &testpb.Top{Choice: &testpb.Top_ChoiceNumber{ChoiceNumber: 5}},
			src:  &testpb.Top{Choice: &testpb.Top_ChoiceName{ChoiceName: "y"}},
			fm:   fmOf("13.1"),
			want: &testpb.Top{Choice: &testpb.Top_ChoiceNumber{ChoiceNumber: 5}}, count: 0},
		{name: "oneof message member: parent flag copies it whole",
			dst:  &testpb.Top{Choice: &testpb.Top_ChoiceLeaf{ChoiceLeaf: leafOf("x", 3)}},
			src:  &testpb.Top{Choice: &testpb.Top_ChoiceLeaf{ChoiceLeaf: leafOf("y", 0)}},
			fm:   fmOf("13"),
			want: &testpb.Top{Choice: &testpb.Top_ChoiceLeaf{ChoiceLeaf: leafOf("y", 0)}}, count: 1},
		{name: "message of another package, child flag",
			dst:  &testpb.Top{Label: &otherpb.Label{Name: "a", Weights: []int32{1}}},
			src:  &testpb.Top{Label: &otherpb.Label{Name: "b", Weights: []int32{2}}},
			fm:   fmOf("19.4"),
			want: &testpb.Top{Label: &otherpb.Label{Name: "a", Weights: []int32{2}}}, count: 1},
		{name: "list and map of another package",
			dst:  &testpb.Top{LabelMap: map[string]*otherpb.Label{"a": {Name: "a"}}},
			src:  &testpb.Top{LabelsOther: []*otherpb.Label{{Name: "x"}}, LabelMap: map[string]*otherpb.Label{"b": {Name: "b"}}},
			fm:   fmOf("20.1", "23:add"),
			want: &testpb.Top{LabelsOther: []*otherpb.Label{{Name: "x"}}, LabelMap: map[string]*otherpb.Label{"a": {Name: "a"}, "b": {Name: "b"}}}, count: 2},
		{name: "atomic field is one unit",
			dst: &testpb.Top{AtomicLeaf: leafOf("a", 1)}, src: &testpb.Top{AtomicLeaf: leafOf("b", 1)}, fm: fmOf("22"),
			want: &testpb.Top{AtomicLeaf: leafOf("b", 1)}, count: 1},
		{name: "well-known types are units",
			dst:  &testpb.Top{Wkt: &testpb.Wkt{Ts: timestamppb.New(timestampAt(1))}},
			src:  &testpb.Top{Wkt: &testpb.Wkt{Ts: timestamppb.New(timestampAt(2)), Times: []*timestamppb.Timestamp{timestamppb.New(timestampAt(3))}}},
			fm:   fmOf("18.1", "18.9"),
			want: &testpb.Top{Wkt: &testpb.Wkt{Ts: timestamppb.New(timestampAt(2)), Times: []*timestamppb.Timestamp{timestamppb.New(timestampAt(3))}}}, count: 2},
		{name: "empty message presence",
			dst: &testpb.Top{}, src: &testpb.Top{Empty: &testpb.Empty{}}, fm: fmOf("24"),
			want: &testpb.Top{Empty: &testpb.Empty{}}, count: 1},
		{name: "every leaf flag copies everything",
			dst: &testpb.Top{Tags: []string{"z"}, Choice: &testpb.Top_ChoiceNumber{ChoiceNumber: 1}}, src: topFixture(),
			fm: fmOf(testpb.TopAllFields...), want: topFixture(), count: 85},
	})
}

func TestCopyInFieldsOptionals(t *testing.T) {
	runCopyCases(t, []copyCase{
		{name: "unset in src clears dst",
			dst: &testpb.Optionals{OInt32: ptr(int32(5)), OString: ptr("x")}, src: &testpb.Optionals{}, fm: fmOf("3", "8"),
			want: &testpb.Optionals{}, count: 2},
		{name: "zero is present",
			dst: &testpb.Optionals{}, src: &testpb.Optionals{OInt32: ptr(int32(0)), OBool: ptr(false), OEnum: ptr(testpb.State_STATE_UNSPECIFIED)},
			fm: fmOf("3", "7", "10"), want: &testpb.Optionals{OInt32: ptr(int32(0)), OBool: ptr(false), OEnum: ptr(testpb.State_STATE_UNSPECIFIED)}, count: 3},
		{name: "empty bytes are present, nil bytes are not",
			dst: &testpb.Optionals{}, src: &testpb.Optionals{OBytes: []byte{}}, fm: fmOf("9"),
			want: &testpb.Optionals{OBytes: []byte{}}, count: 1},
		{name: "same value counts nothing",
			dst: &testpb.Optionals{OUint64: ptr(uint64(7))}, src: &testpb.Optionals{OUint64: ptr(uint64(7))}, fm: fmOf("6"),
			want: &testpb.Optionals{OUint64: ptr(uint64(7))}, count: 0},
		{name: "NaN over the same NaN is no change",
			dst: &testpb.Optionals{ODouble: ptr(math.NaN())}, src: &testpb.Optionals{ODouble: ptr(math.NaN())}, fm: fmOf("1"),
			want: &testpb.Optionals{ODouble: ptr(math.NaN())}, count: 0},
		{name: "-0 over +0 is a change",
			dst: &testpb.Optionals{ODouble: ptr(0.0), OFloat: ptr(float32(0))}, src: &testpb.Optionals{ODouble: ptr(math.Copysign(0, -1)), OFloat: ptr(float32(math.Copysign(0, -1)))},
			fm:   fmOf("1", "2"),
			want: &testpb.Optionals{ODouble: ptr(math.Copysign(0, -1)), OFloat: ptr(float32(math.Copysign(0, -1)))}, count: 2,
			check: func(t *testing.T, dst proto.Message) {
				if !math.Signbit(*dst.(*testpb.Optionals).ODouble) {
					t.Error("sign not copied")
				}
			}},
		{name: "optional message: child flag creates it",
			dst: &testpb.Optionals{}, src: &testpb.Optionals{OMessage: leafOf("x", 1)}, fm: fmOf("11.1"),
			want: &testpb.Optionals{OMessage: leafOf("x", 0)}, count: 2},
	})
}

func TestCopyInFieldsScalars(t *testing.T) {
	nan1, nan2 := math.Float64frombits(0x7ff8000000000001), math.Float64frombits(0x7ff8000000000002)
	runCopyCases(t, []copyCase{
		{name: "NaN over zero counts once",
			dst: &testpb.Scalars{}, src: &testpb.Scalars{FDouble: math.NaN(), FFloat: float32(math.NaN())}, fm: fmOf("1", "2"),
			want: &testpb.Scalars{FDouble: math.NaN(), FFloat: float32(math.NaN())}, count: 2},
		{name: "NaN over the same NaN is no change",
			dst: &testpb.Scalars{FDouble: nan1}, src: &testpb.Scalars{FDouble: nan1}, fm: fmOf("1"),
			want: &testpb.Scalars{FDouble: nan1}, count: 0},
		{name: "NaN over another NaN is a change (bit for bit)",
			dst: &testpb.Scalars{FDouble: nan1}, src: &testpb.Scalars{FDouble: nan2}, fm: fmOf("1"),
			want: &testpb.Scalars{FDouble: nan2}, count: 1,
			check: func(t *testing.T, dst proto.Message) {
				if math.Float64bits(dst.(*testpb.Scalars).FDouble) != math.Float64bits(nan2) {
					t.Error("NaN bits not copied")
				}
			}},
		{name: "-0 over +0 is a change",
			dst: &testpb.Scalars{}, src: &testpb.Scalars{FDouble: math.Copysign(0, -1)}, fm: fmOf("1"),
			want: &testpb.Scalars{FDouble: math.Copysign(0, -1)}, count: 1},
		{name: "every kind",
			dst: &testpb.Scalars{FInt32: 1, FString: "keep"}, src: topFixture().Scalars, fm: fmOf(testpb.ScalarsAllFields...),
			want: topFixture().Scalars, count: 16},
		{name: "nil and empty implicit bytes are the same",
			dst: &testpb.Scalars{FBytes: []byte{}}, src: &testpb.Scalars{}, fm: fmOf("15"),
			want: &testpb.Scalars{}, count: 0},
	})
}

func TestCopyInFieldsLegacy(t *testing.T) {
	runCopyCases(t, []copyCase{
		{name: "unset field with a default clears dst (the default is not copied)",
			dst: &testpb.Legacy{Count: ptr(int32(5))}, src: &testpb.Legacy{}, fm: fmOf("2"),
			want: &testpb.Legacy{}, count: 1,
			check: func(t *testing.T, dst proto.Message) {
				if dst.(*testpb.Legacy).Count != nil {
					t.Error("Count set")
				}
			}},
		{name: "explicit bytes: empty is present, unset clears",
			dst: &testpb.Legacy{Data: []byte{}}, src: &testpb.Legacy{}, fm: fmOf("4"),
			want: &testpb.Legacy{}, count: 1},
		{name: "group child flag",
			dst: &testpb.Legacy{}, src: &testpb.Legacy{Item: &testpb.Legacy_Item{Text: ptr("t"), Num: ptr(uint64(1))}}, fm: fmOf("9.10"),
			want: &testpb.Legacy{Item: &testpb.Legacy_Item{Text: ptr("t")}}, count: 2},
		{name: "recursion stop is copied whole",
			dst: &testpb.Legacy{Next: &testpb.Legacy{Name: ptr("a")}}, src: &testpb.Legacy{Next: &testpb.Legacy{Id: ptr("b")}}, fm: fmOf("7"),
			want: &testpb.Legacy{Next: &testpb.Legacy{Id: ptr("b")}}, count: 1},
		{name: "list actions are replace without list_actions",
			dst: &testpb.Legacy{Values: []int64{1}}, src: &testpb.Legacy{Values: []int64{2}}, fm: fmOf("5:add", "12:remove"),
			want: &testpb.Legacy{Values: []int64{2}}, count: 1},
		{name: "oneof of a closed enum",
			dst: &testpb.Legacy{Pick: &testpb.Legacy_PickName{PickName: "n"}}, src: &testpb.Legacy{Pick: &testpb.Legacy_PickMode{PickMode: testpb.Legacy_MODE_TWO}},
			fm:   fmOf("13", "14"),
			want: &testpb.Legacy{Pick: &testpb.Legacy_PickMode{PickMode: testpb.Legacy_MODE_TWO}}, count: 2},
		{name: "required field",
			dst: &testpb.Legacy{}, src: &testpb.Legacy{Id: ptr("")}, fm: fmOf("8"),
			want: &testpb.Legacy{Id: ptr("")}, count: 1},
	})
}

func TestCopyInFieldsModern(t *testing.T) {
	runCopyCases(t, []copyCase{
		{name: "implicit presence: zero is absent",
			dst: &testpb.Modern{Count: 5, Ratio: 1}, src: &testpb.Modern{}, fm: fmOf("2", "9"),
			want: &testpb.Modern{}, count: 2},
		{name: "explicit presence by default",
			dst: &testpb.Modern{}, src: &testpb.Modern{Name: ptr(""), Level: ptr(testpb.Level_LEVEL_UNSPECIFIED), Data: []byte{}}, fm: fmOf("1", "3", "8"),
			want: &testpb.Modern{Name: ptr(""), Level: ptr(testpb.Level_LEVEL_UNSPECIFIED), Data: []byte{}}, count: 3},
		{name: "implicit -0 is present",
			dst: &testpb.Modern{}, src: &testpb.Modern{Ratio: math.Copysign(0, -1)}, fm: fmOf("9"),
			want: &testpb.Modern{Ratio: math.Copysign(0, -1)}, count: 1},
		{name: "delimited message child flag",
			dst: &testpb.Modern{}, src: &testpb.Modern{Part: &testpb.Part{Label: ptr("l"), Weight: ptr(float32(1))}}, fm: fmOf("7.2"),
			want: &testpb.Modern{Part: &testpb.Part{Weight: ptr(float32(1))}}, count: 2},
		{name: "map of messages",
			dst: &testpb.Modern{Parts: map[string]*testpb.Part{"a": {}}}, src: &testpb.Modern{Parts: map[string]*testpb.Part{"b": {Label: ptr("b")}}}, fm: fmOf("10"),
			want: &testpb.Modern{Parts: map[string]*testpb.Part{"b": {Label: ptr("b")}}}, count: 1},
	})
}

func TestCopyInFieldsTree(t *testing.T) {
	tree := func(name string, left, right *testpb.Tree) *testpb.Tree {
		return &testpb.Tree{Name: name, Left: left, Right: right}
	}
	runCopyCases(t, []copyCase{
		{name: "recursion stops at the top type: copied whole",
			dst: tree("a", tree("l", tree("x", nil, nil), nil), nil), src: tree("b", tree("m", tree("ll", tree("lll", nil, nil), nil), nil), nil), fm: fmOf("2"),
			want: tree("a", tree("m", tree("ll", tree("lll", nil, nil), nil), nil), nil), count: 1},
		{name: "child flag of another type",
			dst: &testpb.Tree{}, src: &testpb.Tree{Branch: &testpb.Branch{Label: "y", Tree: tree("t", nil, nil)}}, fm: fmOf("5.1"),
			want: &testpb.Tree{Branch: &testpb.Branch{Label: "y"}}, count: 2},
		{name: "through another type back to the recursive one",
			dst:  &testpb.Tree{Branch: &testpb.Branch{Label: "x"}},
			src:  &testpb.Tree{Branch: &testpb.Branch{Label: "y", Tree: tree("t", tree("u", nil, nil), nil)}},
			fm:   fmOf("5.2"),
			want: &testpb.Tree{Branch: &testpb.Branch{Label: "x", Tree: tree("t", tree("u", nil, nil), nil)}}, count: 1},
		{name: "list of the recursive type",
			dst: &testpb.Tree{}, src: &testpb.Tree{Children: []*testpb.Tree{tree("c", nil, nil)}}, fm: fmOf("4.1"),
			want: &testpb.Tree{Children: []*testpb.Tree{tree("c", nil, nil)}}, count: 1},
	})
}

func TestCopyInFieldsNilReceiver(t *testing.T) {
	var dst *testpb.Top
	if n := dst.CopyInFields(topFixture(), fmOf(testpb.TopAllFields...)); n != 0 {
		t.Errorf("nil dst counted %d", n)
	}
	var src *testpb.Top
	m := &testpb.Top{}
	if n := m.CopyInFields(src, fmOf(testpb.TopAllFields...)); n != 0 || !proto.Equal(m, &testpb.Top{}) {
		t.Errorf("nil src into empty dst: %d changes, dst %v", n, m)
	}
	m = topFixture()
	if n := m.CopyInFields(nil, fmOf(testpb.TopFieldMiddle, testpb.TopFieldTags, testpb.TopFieldChoiceLeaf)); n != 3 || !proto.Equal(m, &testpb.Top{
		Key: m.Key, Middles: m.Middles, Labels: m.Labels, LeafMap: m.LeafMap, Blobs: m.Blobs, Samples: m.Samples, States: m.States, BlobMap: m.BlobMap,
		StateMap: m.StateMap, Scalars: m.Scalars, Optionals: m.Optionals, Wkt: m.Wkt, Label: m.Label, LabelsOther: m.LabelsOther,
		Password: m.Password, AtomicLeaf: m.AtomicLeaf, LabelMap: m.LabelMap, Empty: m.Empty,
	}) || m.Middle != nil || m.Tags != nil || m.Choice != nil {
		t.Errorf("nil src clears the flagged fields: %d changes, dst %v", n, m)
	}
	m = topFixture()
	if n := m.CopyInFields(nil, fmOf("2.2.1")); n != 1 || m.Middle.Leaf.Name != "" || m.Middle.Leaf.Value != 42 {
		t.Errorf("nil src, child flag: %d changes, dst %v", n, m)
	}
	var e *testpb.Empty
	if n := e.CopyInFields(nil, nil); n != 0 {
		t.Errorf("empty message: %d", n)
	}
}

// TestCopyInFieldsNoAliasing copies a fully populated message into empty
// and populated destinations with every flag and action, then checks that
// no pointer, slice or map of dst is reachable from src.
func TestCopyInFieldsNoAliasing(t *testing.T) {
	specs := [][]string{
		testpb.TopAllFields,
		{"2.2.1", "2.3", "4.1", "6", "13.1", "19.1", "20.2", "23"},
		{"3:add", "4:add", "5:add", "6:add", "7:add", "10:add", "20:add", "23:add"},
	}
	for i, spec := range specs {
		for _, dst := range []*testpb.Top{{}, {Middle: &testpb.Middle{Leaf: &testpb.Leaf{}}, Middles: []*testpb.Middle{{Name: "own"}}, Choice: &testpb.Top_ChoiceLeaf{ChoiceLeaf: &testpb.Leaf{}}}} {
			src := topFixture()
			dst.CopyInFields(src, fmOf(spec...))
			checkNoSharing(t, dst, src)
			before := snapshot(dst)
			mutateEverything(src.ProtoReflect())
			if !proto.Equal(dst, before) {
				t.Errorf("spec %d: mutating src changed dst", i)
			}
		}
	}
	// Random messages of every type.
	for _, f := range flaggedTypes(t) {
		r := randmsg.New(7)
		for range 10 {
			dst, src := f.mt.New(), f.mt.New()
			randmsg.Fill(dst, r, randmsg.Options{})
			randmsg.Fill(src, r, randmsg.Options{})
			f.CopyInFields(dst.Interface(), src.Interface(), randmsg.FieldMap(reference.NewSchema(f.mt.Descriptor()), r, true))
			checkNoSharing(t, dst.Interface(), src.Interface())
		}
	}
}

// checkNoSharing fails when a pointer, non-empty slice or map reachable
// through the exported fields of dst is also reachable from src.

// TestCopyInFieldsCountsUnitsUnderEqual pins the counting rule of
// docs/field-flags.md: only singular float fields compare bit for bit;
// lists, maps and sub-messages compare under Equal, so -0 over +0 in a list
// or another NaN inside a whole sub-message is no change.
func TestCopyInFieldsCountsUnitsUnderEqual(t *testing.T) {
	d := &testpb.Top{Samples: []float64{0}}
	if n := d.CopyInFields(&testpb.Top{Samples: []float64{math.Copysign(0, -1)}}, fmOf("8")); n != 0 {
		t.Errorf("-0 over +0 in a list counted %d", n)
	}
	d = &testpb.Top{Scalars: &testpb.Scalars{FDouble: math.NaN()}}
	s := &testpb.Top{Scalars: &testpb.Scalars{FDouble: math.Float64frombits(0x7ff8000000000009)}}
	if n := d.CopyInFields(s, fmOf("16")); n != 0 {
		t.Errorf("another NaN in a whole sub-message counted %d", n)
	}
	if n := d.CopyInFields(s, fmOf("16.1")); n != 1 {
		t.Errorf("another NaN in a singular field counted %d, want 1", n)
	}
}

// TestCopyInFieldsOtherMessageMap: a FieldMap knows its message; applying
// one of another message (whose flag numbers name unrelated fields) is a
// programming error that panics naming both messages, and ValidateFields
// reports it as an error. Maps bound to no schema still apply.
func TestCopyInFieldsOtherMessageMap(t *testing.T) {
	topMap, err := testpb.NewTopFieldMap("4")
	if err != nil {
		t.Fatal(err)
	}
	mid, src := &testpb.Middle{}, &testpb.Middle{Name: "n", Leaves: []*testpb.Leaf{leafOf("a", 1)}}
	func() {
		defer func() {
			msg, _ := recover().(string)
			if !strings.Contains(msg, "testpb.v1.Top") || !strings.Contains(msg, "testpb.v1.Middle") {
				t.Fatalf("panic %q does not name both messages", msg)
			}
		}()
		mid.CopyInFields(src, topMap)
		t.Fatal("CopyInFields applied a map of Top to a Middle")
	}()
	if err := mid.ValidateFields(topMap); !errors.Is(err, fieldmap.ErrSchemaMismatch) {
		t.Fatalf("ValidateFields = %v, want ErrSchemaMismatch", err)
	}
	if n := mid.CopyInFields(src, fieldmap.Of(testpb.MiddleFieldName)); n != 1 || mid.Name != "n" || mid.Leaves != nil {
		t.Fatalf("unbound map: count %d, %v", n, mid)
	}
}

// TestCopyInFieldsFromStringsDoesNotAllocate: a FieldMap built from flag
// strings with the generated constructor and applied in the same function
// lives on the stack (the constructor inlines into its caller and
// CopyInFields keeps no reference to the map), so applying a partial
// update costs no allocation beyond the copies it makes: here none, the
// fields being strings and numbers.
func TestCopyInFieldsFromStringsDoesNotAllocate(t *testing.T) {
	flags := []string{testpb.TopFieldKeyName, testpb.TopFieldMiddleLeafName, testpb.TopFieldMiddleLeafValue, testpb.TopFieldMiddleName}
	dst := topFixture()
	srcs := [2]*testpb.Top{topFixture(), topFixture()}
	srcs[1].Key.Name, srcs[1].Middle.Leaf.Name, srcs[1].Middle.Leaf.Value, srcs[1].Middle.Name = "k2", "l2", 99, "m2"
	i, total := 0, 0
	allocs := testing.AllocsPerRun(100, func() {
		i ^= 1
		fm, err := testpb.NewTopFieldMap(flags...)
		if err != nil {
			t.Fatal(err)
		}
		total += dst.CopyInFields(srcs[i], fm)
	})
	if allocs != 0 {
		t.Fatalf("NewTopFieldMap + CopyInFields allocate %v times per call", allocs)
	}
	if total != 101*4 || !proto.Equal(dst, srcs[1]) {
		t.Fatalf("the copies changed %d fields in all (want %d), last result %v", total, 101*4, dst)
	}
}
