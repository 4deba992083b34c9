package testpb_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/known/timestamppb"

	_ "github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/fieldmap"
	_ "github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/internal/randmsg"
	"github.com/edgekit/edgekit/internal/reference"
	"github.com/edgekit/edgekit/internal/testpb"
	otherpb "github.com/edgekit/edgekit/internal/testpb/other"
)

// flagMessages are the proto packages whose messages carry generated
// CopyInFields and DiffFields methods.
var flagMessages = []string{"testpb.", "edgeproto.", "fluidos."}

// flagged adapts the generated CopyInFields and DiffFields methods of one
// message type to proto.Message arguments, through the method set.
type flagged struct {
	mt     protoreflect.MessageType
	typ    reflect.Type // *T
	copyIn reflect.Value
	diff   reflect.Value
}

// flaggedOf returns the adapter of the type of m; it fails the test when
// the type lacks a generated method.
func flaggedOf(t testing.TB, mt protoreflect.MessageType) flagged {
	t.Helper()
	typ := reflect.TypeOf(mt.Zero().Interface())
	c, ok1 := typ.MethodByName("CopyInFields")
	d, ok2 := typ.MethodByName("DiffFields")
	if !ok1 || !ok2 {
		t.Fatalf("%v has no generated CopyInFields or DiffFields method", typ)
	}
	return flagged{mt: mt, typ: typ, copyIn: c.Func, diff: d.Func}
}

// value turns m (possibly a nil interface) into a reflect.Value of f's type.
func (f flagged) value(m proto.Message) reflect.Value {
	if m == nil {
		return reflect.Zero(f.typ)
	}
	return reflect.ValueOf(m)
}

func (f flagged) CopyInFields(dst, src proto.Message, fm *fieldmap.FieldMap) int {
	return int(f.copyIn.Call([]reflect.Value{f.value(dst), f.value(src), reflect.ValueOf(fm)})[0].Int())
}

func (f flagged) DiffFields(a, b proto.Message) *fieldmap.FieldMap {
	return f.diff.Call([]reflect.Value{f.value(a), f.value(b)})[0].Interface().(*fieldmap.FieldMap)
}

// flaggedTypes returns the adapters of every registered message type of
// flagMessages, sorted by name: every one must have the methods.
func flaggedTypes(t testing.TB) []flagged {
	t.Helper()
	var mts []protoreflect.MessageType
	protoregistry.GlobalTypes.RangeMessages(func(mt protoreflect.MessageType) bool {
		name := string(mt.Descriptor().FullName())
		for _, p := range flagMessages {
			if strings.HasPrefix(name, p) && !mt.Descriptor().IsMapEntry() {
				mts = append(mts, mt)
				break
			}
		}
		return true
	})
	slices.SortFunc(mts, func(a, b protoreflect.MessageType) int {
		return strings.Compare(string(a.Descriptor().FullName()), string(b.Descriptor().FullName()))
	})
	out := make([]flagged, 0, len(mts))
	for _, mt := range mts {
		out = append(out, flaggedOf(t, mt))
	}
	if len(out) < 20 {
		t.Fatalf("only %d message types registered", len(out))
	}
	return out
}

// fmOf builds an unvalidated FieldMap; a flag may end in ":add" or ":remove".
func fmOf(specs ...string) *fieldmap.FieldMap {
	fm := &fieldmap.FieldMap{}
	for _, s := range specs {
		flag, act, _ := strings.Cut(s, ":")
		switch act {
		case "add":
			fm.SetAction(flag, fieldmap.Add)
		case "remove":
			fm.SetAction(flag, fieldmap.Remove)
		default:
			fm.Set(flag)
		}
	}
	return fm
}

func pv[T any](v T) *T { return &v }

// snapshot deep-copies m with its generated Clone method when it has one:
// proto.Clone drops implicit-presence -0 floats.
func snapshot(m proto.Message) proto.Message {
	if meth := reflect.ValueOf(m).MethodByName("Clone"); meth.IsValid() {
		if c, ok := meth.Call(nil)[0].Interface().(proto.Message); ok {
			return c
		}
	}
	return proto.Clone(m)
}

func leafOf(name string, value int64) *testpb.Leaf { return &testpb.Leaf{Name: name, Value: value} }

// ciFullTop is a Top with every field set at every depth, without unknown
// fields.
func ciFullTop() *testpb.Top {
	leaf := func(n string) *testpb.Leaf {
		return &testpb.Leaf{Name: n, Value: 42, State: testpb.State_STATE_ON, Token: "tok-" + n}
	}
	middle := func(n string) *testpb.Middle {
		return &testpb.Middle{Name: n, Leaf: leaf(n + "-leaf"), Leaves: []*testpb.Leaf{leaf(n + "-a"), leaf(n + "-b")}}
	}
	label := func(n string) *otherpb.Label {
		return &otherpb.Label{Name: n, Color: otherpb.Color_COLOR_GREEN, Secret: "s", Weights: []int32{1, 2, 3}}
	}
	return &testpb.Top{
		Key: &testpb.Key{Organization: "org", Name: "name", Version: 3, State: testpb.State_STATE_OFF,
			Sub: &testpb.SubKey{Region: "eu", Zone: 7, Edge: true}},
		Middle:   middle("m"),
		Tags:     []string{"a", "b", "c", "d"},
		Middles:  []*testpb.Middle{middle("m1"), middle("m2"), middle("m3")},
		Labels:   map[string]string{"env": "prod", "tier": "edge", "team": "x"},
		LeafMap:  map[int32]*testpb.Leaf{1: leaf("one"), 2: leaf("two"), 3: leaf("three")},
		Blobs:    [][]byte{[]byte("blob1"), []byte("blob2")},
		Samples:  []float64{1.5, math.NaN(), math.Inf(-1), 0},
		States:   []testpb.State{testpb.State_STATE_ON, testpb.State_STATE_OFF},
		BlobMap:  map[string][]byte{"x": []byte("xx"), "y": []byte("yy")},
		StateMap: map[bool]testpb.State{true: testpb.State_STATE_ON, false: testpb.State_STATE_OFF},
		Choice:   &testpb.Top_ChoiceLeaf{ChoiceLeaf: leaf("choice")},
		Scalars: &testpb.Scalars{FDouble: 1.25, FFloat: 2.5, FInt32: -3, FInt64: -4, FUint32: 5, FUint64: 6,
			FSint32: -7, FSint64: -8, FFixed32: 9, FFixed64: 10, FSfixed32: -11, FSfixed64: -12, FBool: true,
			FString: "héllo", FBytes: []byte{1, 2, 3}, FEnum: testpb.State_STATE_ON},
		Optionals: &testpb.Optionals{ODouble: pv(1.0), OFloat: pv(float32(2)), OInt32: pv(int32(3)),
			OInt64: pv(int64(4)), OUint32: pv(uint32(5)), OUint64: pv(uint64(6)), OBool: pv(true),
			OString: pv("s"), OBytes: []byte("b"), OEnum: pv(testpb.State_STATE_OFF), OMessage: leaf("opt")},
		Wkt: &testpb.Wkt{
			Ts:    timestamppb.New(timestampAt(1700000000)),
			Times: []*timestamppb.Timestamp{timestamppb.New(timestampAt(1)), timestamppb.New(timestampAt(2))},
		},
		Label:       label("l"),
		LabelsOther: []*otherpb.Label{label("l1"), label("l2")},
		Password:    "secret",
		AtomicLeaf:  leaf("atomic"),
		LabelMap:    map[string]*otherpb.Label{"k1": label("k1"), "k2": label("k2")},
		Empty:       &testpb.Empty{},
	}
}

// copyCase is one CopyInFields table case: dst.CopyInFields(src, fm) must
// turn dst into want and return count.
type copyCase struct {
	name      string
	dst, src  proto.Message
	fm        *fieldmap.FieldMap
	want      proto.Message
	count     int
	check     func(t *testing.T, dst proto.Message) // extra assertions, optional
	nilSource bool                                  // call with a nil src of dst's type
}

func runCopyCases(t *testing.T, cases []copyCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := flaggedOf(t, tc.dst.ProtoReflect().Type())
			src := tc.src
			if tc.nilSource {
				src = nil
			}
			var srcBefore proto.Message
			if src != nil {
				srcBefore = snapshot(src)
			}
			// The reference agrees on every table case.
			refDst := snapshot(tc.dst)
			var refSrc protoreflect.Message
			if src != nil {
				refSrc = snapshot(src).ProtoReflect()
			}
			refCount := reference.CopyInFields(refDst.ProtoReflect(), refSrc, tc.fm)

			got := f.CopyInFields(tc.dst, src, tc.fm)
			if got != tc.count {
				t.Errorf("count = %d, want %d", got, tc.count)
			}
			if !proto.Equal(tc.dst, tc.want) {
				t.Errorf("dst =\n  %v\nwant\n  %v", tc.dst, tc.want)
			}
			if refCount != tc.count || !proto.Equal(refDst, tc.want) {
				t.Errorf("reference disagrees with the table: count %d, dst %v", refCount, refDst)
			}
			if src != nil && !proto.Equal(src, srcBefore) {
				t.Errorf("src changed: %v", src)
			}
			if tc.check != nil {
				tc.check(t, tc.dst)
			}
			if src != nil {
				checkNoSharing(t, tc.dst, src)
			}
			// Copying again changes nothing.
			if again := f.CopyInFields(tc.dst, src, tc.fm); again != 0 && !hasListAction(tc.fm) {
				t.Errorf("second copy counted %d changes", again)
			}
		})
	}
}

func hasListAction(fm *fieldmap.FieldMap) bool {
	return strings.Contains(fm.String(), ":")
}

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
			dst: &testpb.Top{Tags: []string{"z"}, Choice: &testpb.Top_ChoiceNumber{ChoiceNumber: 1}}, src: ciFullTop(),
			fm: fmOf(testpb.TopAllFields...), want: ciFullTop(), count: 77},
	})
}

func TestCopyInFieldsOptionals(t *testing.T) {
	runCopyCases(t, []copyCase{
		{name: "unset in src clears dst",
			dst: &testpb.Optionals{OInt32: pv(int32(5)), OString: pv("x")}, src: &testpb.Optionals{}, fm: fmOf("3", "8"),
			want: &testpb.Optionals{}, count: 2},
		{name: "zero is present",
			dst: &testpb.Optionals{}, src: &testpb.Optionals{OInt32: pv(int32(0)), OBool: pv(false), OEnum: pv(testpb.State_STATE_UNSPECIFIED)},
			fm: fmOf("3", "7", "10"), want: &testpb.Optionals{OInt32: pv(int32(0)), OBool: pv(false), OEnum: pv(testpb.State_STATE_UNSPECIFIED)}, count: 3},
		{name: "empty bytes are present, nil bytes are not",
			dst: &testpb.Optionals{}, src: &testpb.Optionals{OBytes: []byte{}}, fm: fmOf("9"),
			want: &testpb.Optionals{OBytes: []byte{}}, count: 1},
		{name: "same value counts nothing",
			dst: &testpb.Optionals{OUint64: pv(uint64(7))}, src: &testpb.Optionals{OUint64: pv(uint64(7))}, fm: fmOf("6"),
			want: &testpb.Optionals{OUint64: pv(uint64(7))}, count: 0},
		{name: "NaN over the same NaN is no change",
			dst: &testpb.Optionals{ODouble: pv(math.NaN())}, src: &testpb.Optionals{ODouble: pv(math.NaN())}, fm: fmOf("1"),
			want: &testpb.Optionals{ODouble: pv(math.NaN())}, count: 0},
		{name: "-0 over +0 is a change",
			dst: &testpb.Optionals{ODouble: pv(0.0), OFloat: pv(float32(0))}, src: &testpb.Optionals{ODouble: pv(math.Copysign(0, -1)), OFloat: pv(float32(math.Copysign(0, -1)))},
			fm:   fmOf("1", "2"),
			want: &testpb.Optionals{ODouble: pv(math.Copysign(0, -1)), OFloat: pv(float32(math.Copysign(0, -1)))}, count: 2,
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
			dst: &testpb.Scalars{FInt32: 1, FString: "keep"}, src: ciFullTop().Scalars, fm: fmOf(testpb.ScalarsAllFields...),
			want: ciFullTop().Scalars, count: 16},
		{name: "nil and empty implicit bytes are the same",
			dst: &testpb.Scalars{FBytes: []byte{}}, src: &testpb.Scalars{}, fm: fmOf("15"),
			want: &testpb.Scalars{}, count: 0},
	})
}

func TestCopyInFieldsLegacy(t *testing.T) {
	runCopyCases(t, []copyCase{
		{name: "unset field with a default clears dst (the default is not copied)",
			dst: &testpb.Legacy{Count: pv(int32(5))}, src: &testpb.Legacy{}, fm: fmOf("2"),
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
			dst: &testpb.Legacy{}, src: &testpb.Legacy{Item: &testpb.Legacy_Item{Text: pv("t"), Num: pv(uint64(1))}}, fm: fmOf("9.10"),
			want: &testpb.Legacy{Item: &testpb.Legacy_Item{Text: pv("t")}}, count: 2},
		{name: "recursion stop is copied whole",
			dst: &testpb.Legacy{Next: &testpb.Legacy{Name: pv("a")}}, src: &testpb.Legacy{Next: &testpb.Legacy{Id: pv("b")}}, fm: fmOf("7"),
			want: &testpb.Legacy{Next: &testpb.Legacy{Id: pv("b")}}, count: 1},
		{name: "list actions are replace without list_actions",
			dst: &testpb.Legacy{Values: []int64{1}}, src: &testpb.Legacy{Values: []int64{2}}, fm: fmOf("5:add", "12:remove"),
			want: &testpb.Legacy{Values: []int64{2}}, count: 1},
		{name: "oneof of a closed enum",
			dst: &testpb.Legacy{Pick: &testpb.Legacy_PickName{PickName: "n"}}, src: &testpb.Legacy{Pick: &testpb.Legacy_PickMode{PickMode: testpb.Legacy_MODE_TWO}},
			fm:   fmOf("13", "14"),
			want: &testpb.Legacy{Pick: &testpb.Legacy_PickMode{PickMode: testpb.Legacy_MODE_TWO}}, count: 2},
		{name: "required field",
			dst: &testpb.Legacy{}, src: &testpb.Legacy{Id: pv("")}, fm: fmOf("8"),
			want: &testpb.Legacy{Id: pv("")}, count: 1},
	})
}

func TestCopyInFieldsModern(t *testing.T) {
	runCopyCases(t, []copyCase{
		{name: "implicit presence: zero is absent",
			dst: &testpb.Modern{Count: 5, Ratio: 1}, src: &testpb.Modern{}, fm: fmOf("2", "9"),
			want: &testpb.Modern{}, count: 2},
		{name: "explicit presence by default",
			dst: &testpb.Modern{}, src: &testpb.Modern{Name: pv(""), Level: pv(testpb.Level_LEVEL_UNSPECIFIED), Data: []byte{}}, fm: fmOf("1", "3", "8"),
			want: &testpb.Modern{Name: pv(""), Level: pv(testpb.Level_LEVEL_UNSPECIFIED), Data: []byte{}}, count: 3},
		{name: "implicit -0 is present",
			dst: &testpb.Modern{}, src: &testpb.Modern{Ratio: math.Copysign(0, -1)}, fm: fmOf("9"),
			want: &testpb.Modern{Ratio: math.Copysign(0, -1)}, count: 1},
		{name: "delimited message child flag",
			dst: &testpb.Modern{}, src: &testpb.Modern{Part: &testpb.Part{Label: pv("l"), Weight: pv(float32(1))}}, fm: fmOf("7.2"),
			want: &testpb.Modern{Part: &testpb.Part{Weight: pv(float32(1))}}, count: 2},
		{name: "map of messages",
			dst: &testpb.Modern{Parts: map[string]*testpb.Part{"a": {}}}, src: &testpb.Modern{Parts: map[string]*testpb.Part{"b": {Label: pv("b")}}}, fm: fmOf("10"),
			want: &testpb.Modern{Parts: map[string]*testpb.Part{"b": {Label: pv("b")}}}, count: 1},
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
	if n := dst.CopyInFields(ciFullTop(), fmOf(testpb.TopAllFields...)); n != 0 {
		t.Errorf("nil dst counted %d", n)
	}
	var src *testpb.Top
	m := &testpb.Top{}
	if n := m.CopyInFields(src, fmOf(testpb.TopAllFields...)); n != 0 || !proto.Equal(m, &testpb.Top{}) {
		t.Errorf("nil src into empty dst: %d changes, dst %v", n, m)
	}
	m = ciFullTop()
	if n := m.CopyInFields(nil, fmOf(testpb.TopFieldMiddle, testpb.TopFieldTags, testpb.TopFieldChoiceLeaf)); n != 3 || !proto.Equal(m, &testpb.Top{
		Key: m.Key, Middles: m.Middles, Labels: m.Labels, LeafMap: m.LeafMap, Blobs: m.Blobs, Samples: m.Samples, States: m.States, BlobMap: m.BlobMap,
		StateMap: m.StateMap, Scalars: m.Scalars, Optionals: m.Optionals, Wkt: m.Wkt, Label: m.Label, LabelsOther: m.LabelsOther,
		Password: m.Password, AtomicLeaf: m.AtomicLeaf, LabelMap: m.LabelMap, Empty: m.Empty,
	}) || m.Middle != nil || m.Tags != nil || m.Choice != nil {
		t.Errorf("nil src clears the flagged fields: %d changes, dst %v", n, m)
	}
	m = ciFullTop()
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
			src := ciFullTop()
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
func checkNoSharing(t *testing.T, dst, src proto.Message) {
	t.Helper()
	seen := map[uintptr]string{}
	walkRefs(reflect.ValueOf(src), "src", func(p uintptr, path string) { seen[p] = path })
	walkRefs(reflect.ValueOf(dst), "dst", func(p uintptr, path string) {
		if sp, ok := seen[p]; ok {
			t.Errorf("%T: %s shares memory with %s", dst, path, sp)
		}
	})
}

// walkRefs calls fn with the address of every pointer, non-empty slice and
// map reachable from v through exported fields.
func walkRefs(v reflect.Value, path string, fn func(uintptr, string)) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return
		}
		fn(v.Pointer(), path)
		walkRefs(v.Elem(), path, fn)
	case reflect.Interface:
		if !v.IsNil() {
			walkRefs(v.Elem(), path, fn)
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				walkRefs(v.Field(i), path+"."+v.Type().Field(i).Name, fn)
			}
		}
	case reflect.Slice:
		if v.Len() == 0 {
			return
		}
		fn(v.Pointer(), path)
		for i := 0; i < v.Len(); i++ {
			walkRefs(v.Index(i), fmt.Sprintf("%s[%d]", path, i), fn)
		}
	case reflect.Map:
		if v.IsNil() {
			return
		}
		fn(v.Pointer(), path)
		iter := v.MapRange()
		for iter.Next() {
			walkRefs(iter.Value(), fmt.Sprintf("%s[%v]", path, iter.Key()), fn)
		}
	}
}

func TestDiffFieldsTable(t *testing.T) {
	tests := []struct {
		name string
		a, b proto.Message
		want []string
	}{
		{"identical", ciFullTop(), ciFullTop(), nil},
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
		{"optional zero against unset", &testpb.Top{Optionals: &testpb.Optionals{OInt32: pv(int32(0))}}, &testpb.Top{Optionals: &testpb.Optionals{}},
			[]string{"17", "17.3"}},
		{"other package", &testpb.Top{Label: &otherpb.Label{Color: 1}}, &testpb.Top{Label: &otherpb.Label{}}, []string{"19", "19.2"}},
		{"well-known unit", &testpb.Top{Wkt: &testpb.Wkt{Ts: timestamppb.New(timestampAt(1))}}, &testpb.Top{Wkt: &testpb.Wkt{Ts: timestamppb.New(timestampAt(2))}},
			[]string{"18", "18.1"}},
		{"proto2 default is not presence", &testpb.Legacy{Count: pv(int32(7))}, &testpb.Legacy{}, []string{"2"}},
		{"group child", &testpb.Legacy{Item: &testpb.Legacy_Item{Num: pv(uint64(1))}}, &testpb.Legacy{Item: &testpb.Legacy_Item{}}, []string{"9", "9.11"}},
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
func newPair(f flagged, r *rand.Rand, opts randmsg.Options) (a, b protoreflect.Message) {
	a = f.mt.New()
	randmsg.Fill(a, r, opts)
	if r.IntN(2) == 0 {
		b = snapshot(a.Interface()).ProtoReflect()
		randmsg.Mutate(b, r)
	} else {
		b = f.mt.New()
		randmsg.Fill(b, r, opts)
	}
	return a, b
}

// checkCopyAgainstReference copies src into dst with fm, and into clones of
// both with the reference, and compares the results and the counts.
func checkCopyAgainstReference(t testing.TB, f flagged, dst, src protoreflect.Message, fm *fieldmap.FieldMap) {
	t.Helper()
	refDst, refSrc := snapshot(dst.Interface()), snapshot(src.Interface())
	before := snapshot(dst.Interface())
	want := reference.CopyInFields(refDst.ProtoReflect(), refSrc.ProtoReflect(), fm)
	got := f.CopyInFields(dst.Interface(), src.Interface(), fm)
	if !proto.Equal(dst.Interface(), refDst) {
		t.Fatalf("%s: fm %v\ndst    %v\nsrc    %v\ngot    %v\nwant   %v", f.mt.Descriptor().FullName(), fm, before, src.Interface(), dst.Interface(), refDst)
	}
	if got != want {
		t.Fatalf("%s: fm %v: count %d, reference %d\ndst %v\nsrc %v", f.mt.Descriptor().FullName(), fm, got, want, before, src.Interface())
	}
	if !proto.Equal(src.Interface(), refSrc) {
		t.Fatalf("%s: src changed", f.mt.Descriptor().FullName())
	}
}

// checkDiff compares DiffFields with the reference and checks the
// invariant: copying the diff makes a equal to b, and leaves no diff.
func checkDiff(t testing.TB, f flagged, a, b protoreflect.Message) {
	t.Helper()
	name := f.mt.Descriptor().FullName()
	got := f.DiffFields(a.Interface(), b.Interface())
	want := reference.DiffFields(a, b)
	if !slices.Equal(got.Fields(), want.Fields()) {
		t.Fatalf("%s: DiffFields = %v, reference %v\na %v\nb %v", name, got, want, a, b)
	}
	n := f.CopyInFields(a.Interface(), b.Interface(), got)
	if !proto.Equal(a.Interface(), b.Interface()) {
		t.Fatalf("%s: after copying the diff %v, not equal:\na %v\nb %v", name, got, a, b)
	}
	if (n == 0) != (got.Count() == 0) {
		t.Fatalf("%s: diff %v but copy counted %d", name, got, n)
	}
	if again := f.DiffFields(a.Interface(), b.Interface()); again.Count() != 0 {
		t.Fatalf("%s: second diff %v", name, again)
	}
}

func TestCopyInFieldsMatchesReference(t *testing.T) {
	for _, f := range flaggedTypes(t) {
		t.Run(string(f.mt.Descriptor().FullName()), func(t *testing.T) {
			t.Parallel()
			r := randmsg.New(1)
			schema := reference.NewSchema(f.mt.Descriptor())
			for range 200 {
				dst, src := newPair(f, r, randmsg.Options{Unknown: r.IntN(4) == 0})
				checkCopyAgainstReference(t, f, dst, src, randmsg.FieldMap(schema, r, true))
			}
			// nil src
			dst := f.mt.New()
			randmsg.Fill(dst, r, randmsg.Options{})
			refDst := snapshot(dst.Interface())
			all := schema.All()
			if got, want := f.CopyInFields(dst.Interface(), nil, all), reference.CopyInFields(refDst.ProtoReflect(), nil, all); got != want || !proto.Equal(dst.Interface(), refDst) {
				t.Fatalf("nil src: count %d, reference %d; dst %v, reference %v", got, want, dst, refDst)
			}
		})
	}
}

func TestDiffFieldsMatchesReference(t *testing.T) {
	for _, f := range flaggedTypes(t) {
		t.Run(string(f.mt.Descriptor().FullName()), func(t *testing.T) {
			t.Parallel()
			r := randmsg.New(2)
			for range 200 {
				a, b := newPair(f, r, randmsg.Options{})
				checkDiff(t, f, a, b)
			}
			// nil on either side reads as empty.
			b := f.mt.New()
			randmsg.Fill(b, r, randmsg.Options{})
			want := reference.DiffFields(f.mt.Zero(), b).Fields()
			if got := f.DiffFields(nil, b.Interface()).Fields(); !slices.Equal(got, want) {
				t.Fatalf("nil a: %v, reference %v", got, want)
			}
			if got := f.DiffFields(b.Interface(), nil).Fields(); !slices.Equal(got, want) {
				t.Fatalf("nil b: %v, reference %v", got, want)
			}
		})
	}
}

// fuzzTarget picks the message type and the messages of one fuzz input.
func fuzzTarget(t *testing.T, types []flagged, data []byte) (flagged, *rand.Rand) {
	r := randmsg.FromBytes(data)
	return types[r.IntN(len(types))], r
}

func FuzzCopyInFields(f *testing.F) {
	for _, s := range []string{"", "top", "legacy", "tree", "\x00\x01\x02", "modern edition"} {
		f.Add([]byte(s))
	}
	types := flaggedTypes(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		ft, r := fuzzTarget(t, types, data)
		dst, src := newPair(ft, r, randmsg.Options{Unknown: r.IntN(4) == 0, UndefinedEnums: true})
		checkCopyAgainstReference(t, ft, dst, src, randmsg.FieldMap(reference.NewSchema(ft.mt.Descriptor()), r, true))
	})
}

func FuzzDiffFields(f *testing.F) {
	for _, s := range []string{"", "top", "legacy", "tree", "\x00\x01\x02", "modern edition"} {
		f.Add([]byte(s))
	}
	types := flaggedTypes(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		ft, r := fuzzTarget(t, types, data)
		a, b := newPair(ft, r, randmsg.Options{UndefinedEnums: true})
		checkDiff(t, ft, a, b)
	})
}

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
