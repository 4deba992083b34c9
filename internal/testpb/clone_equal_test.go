package testpb_test

import (
	"bytes"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	_ "github.com/edgekit/edgekit/edgeproto"
	_ "github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/internal/randmsg"
	"github.com/edgekit/edgekit/internal/testpb"
	otherpb "github.com/edgekit/edgekit/internal/testpb/other"
)

// generatedPackages are the proto packages whose messages carry generated
// Clone and Equal methods.
var generatedPackages = []string{"testpb.", "edgeproto.", "fluidos."}

// generatedTypes lists every registered message type of generatedPackages,
// map entries excluded, sorted by name.
func generatedTypes(t testing.TB) []protoreflect.MessageType {
	t.Helper()
	var out []protoreflect.MessageType
	protoregistry.GlobalTypes.RangeMessages(func(mt protoreflect.MessageType) bool {
		name := string(mt.Descriptor().FullName())
		for _, p := range generatedPackages {
			if strings.HasPrefix(name, p) && !mt.Descriptor().IsMapEntry() && !skipsFeatures(mt.Descriptor()) {
				out = append(out, mt)
				break
			}
		}
		return true
	})
	if len(out) == 0 {
		t.Fatal("no generated message types registered")
	}
	// RangeMessages has no defined order; sort for reproducible runs.
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].Descriptor().FullName() < out[j-1].Descriptor().FullName(); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// genClone calls the generated Clone method of m.
func genClone(t testing.TB, m proto.Message) proto.Message {
	t.Helper()
	meth := reflect.ValueOf(m).MethodByName("Clone")
	if !meth.IsValid() {
		t.Fatalf("%T has no Clone method", m)
	}
	return meth.Call(nil)[0].Interface().(proto.Message)
}

// genEqual calls the generated Equal method of a.
func genEqual(t testing.TB, a, b proto.Message) bool {
	t.Helper()
	meth := reflect.ValueOf(a).MethodByName("Equal")
	if !meth.IsValid() {
		t.Fatalf("%T has no Equal method", a)
	}
	return meth.Call([]reflect.Value{reflect.ValueOf(b)})[0].Bool()
}

// checkEqual asserts that the generated Equal agrees with proto.Equal on
// (a, b) and (b, a), and returns proto.Equal's answer.
func checkEqual(t testing.TB, a, b proto.Message) bool {
	t.Helper()
	want := proto.Equal(a, b)
	if got := genEqual(t, a, b); got != want {
		t.Errorf("generated Equal = %v, proto.Equal = %v\na: %v\nb: %v", got, want, a, b)
	}
	if got := genEqual(t, b, a); got != want {
		t.Errorf("generated Equal (swapped) = %v, proto.Equal = %v\na: %v\nb: %v", got, want, b, a)
	}
	return want
}

func TestEqualMatchesProtoEqual(t *testing.T) {
	nan := math.NaN()
	negZero := math.Copysign(0, -1)
	tests := []struct {
		name string
		a, b proto.Message
		want bool
	}{
		{"nil nil", (*testpb.Top)(nil), (*testpb.Top)(nil), true},
		{"nil empty", (*testpb.Top)(nil), &testpb.Top{}, false},
		{"empty empty", &testpb.Top{}, &testpb.Top{}, true},
		{"full full", fullTop(), fullTop(), true},
		{"full empty", fullTop(), &testpb.Top{}, false},

		{"NaN NaN double", &testpb.Scalars{FDouble: nan}, &testpb.Scalars{FDouble: nan}, true},
		{"NaN NaN float", &testpb.Scalars{FFloat: float32(nan)}, &testpb.Scalars{FFloat: float32(nan)}, true},
		{"NaN 0 double", &testpb.Scalars{FDouble: nan}, &testpb.Scalars{}, false},
		{"NaN NaN optional", &testpb.Optionals{ODouble: ptr(nan)}, &testpb.Optionals{ODouble: ptr(nan)}, true},
		{"NaN NaN optional float", &testpb.Optionals{OFloat: ptr(float32(nan))}, &testpb.Optionals{OFloat: ptr(float32(nan))}, true},
		{"NaN NaN list", &testpb.Top{Samples: []float64{nan}}, &testpb.Top{Samples: []float64{nan}}, true},
		{"NaN NaN edition implicit", &testpb.Modern{Ratio: nan}, &testpb.Modern{Ratio: nan}, true},
		{"implicit -0 +0 double", &testpb.Scalars{FDouble: negZero}, &testpb.Scalars{}, false},
		{"implicit -0 +0 float", &testpb.Scalars{FFloat: float32(negZero)}, &testpb.Scalars{}, false},
		{"implicit -0 -0", &testpb.Scalars{FDouble: negZero}, &testpb.Scalars{FDouble: negZero}, true},
		{"edition implicit -0 +0", &testpb.Modern{Ratio: negZero}, &testpb.Modern{}, false},
		{"optional -0 +0", &testpb.Optionals{ODouble: ptr(negZero)}, &testpb.Optionals{ODouble: ptr(0.0)}, true},
		{"optional 0 unset", &testpb.Optionals{ODouble: ptr(0.0)}, &testpb.Optionals{}, false},
		{"optional false unset", &testpb.Optionals{OBool: ptr(false)}, &testpb.Optionals{}, false},
		{"optional empty string unset", &testpb.Optionals{OString: ptr("")}, &testpb.Optionals{}, false},
		{"optional enum differs", &testpb.Optionals{OEnum: ptr(testpb.State_STATE_ON)}, &testpb.Optionals{OEnum: ptr(testpb.State_STATE_OFF)}, false},
		{"list -0 +0", &testpb.Top{Samples: []float64{negZero}}, &testpb.Top{Samples: []float64{0}}, true},

		{"nil sub-message vs empty", &testpb.Top{}, &testpb.Top{Middle: &testpb.Middle{}}, false},
		{"empty sub-messages", &testpb.Top{Middle: &testpb.Middle{}}, &testpb.Top{Middle: &testpb.Middle{}}, true},
		{"nil vs empty message without fields", &testpb.Top{}, &testpb.Top{Empty: &testpb.Empty{}}, false},
		{"optional message nil vs empty", &testpb.Optionals{}, &testpb.Optionals{OMessage: &testpb.Leaf{}}, false},
		{"nil vs empty list", &testpb.Top{}, &testpb.Top{Tags: []string{}}, true},
		{"nil vs empty message list", &testpb.Top{}, &testpb.Top{Middles: []*testpb.Middle{}}, true},
		{"nil vs empty map", &testpb.Top{}, &testpb.Top{Labels: map[string]string{}}, true},
		{"nil vs empty message map", &testpb.Top{}, &testpb.Top{LeafMap: map[int32]*testpb.Leaf{}}, true},
		{"list order", &testpb.Top{Tags: []string{"a", "b"}}, &testpb.Top{Tags: []string{"b", "a"}}, false},
		{"list length", &testpb.Top{Tags: []string{"a"}}, &testpb.Top{Tags: []string{"a", "a"}}, false},
		{"map value differs", &testpb.Top{Labels: map[string]string{"a": "1"}}, &testpb.Top{Labels: map[string]string{"a": "2"}}, false},
		{"map key differs", &testpb.Top{Labels: map[string]string{"a": "1"}}, &testpb.Top{Labels: map[string]string{"b": "1"}}, false},
		{"message map value differs", &testpb.Top{LeafMap: map[int32]*testpb.Leaf{1: {Name: "a"}}}, &testpb.Top{LeafMap: map[int32]*testpb.Leaf{1: {Name: "b"}}}, false},
		{"list element differs deep", &testpb.Top{Middles: []*testpb.Middle{{Leaf: &testpb.Leaf{Value: 1}}}}, &testpb.Top{Middles: []*testpb.Middle{{Leaf: &testpb.Leaf{Value: 2}}}}, false},
		{"enum list", &testpb.Top{States: []testpb.State{1}}, &testpb.Top{States: []testpb.State{2}}, false},

		{"implicit bytes nil vs empty", &testpb.Scalars{}, &testpb.Scalars{FBytes: []byte{}}, true},
		{"explicit bytes nil vs empty", &testpb.Optionals{}, &testpb.Optionals{OBytes: []byte{}}, false},
		{"explicit bytes empty vs empty", &testpb.Optionals{OBytes: []byte{}}, &testpb.Optionals{OBytes: []byte{}}, true},
		{"edition bytes nil vs empty", &testpb.Modern{}, &testpb.Modern{Data: []byte{}}, false},
		{"repeated bytes nil vs empty element", &testpb.Top{Blobs: [][]byte{nil}}, &testpb.Top{Blobs: [][]byte{{}}}, true},
		{"bytes map nil vs empty value", &testpb.Top{BlobMap: map[string][]byte{"a": nil}}, &testpb.Top{BlobMap: map[string][]byte{"a": {}}}, true},
		{"edition explicit string unset vs empty", &testpb.Modern{}, &testpb.Modern{Name: ptr("")}, false},
		{"edition implicit int 0 vs unset", &testpb.Modern{Count: 0}, &testpb.Modern{}, true},
		{"edition closed enum", &testpb.Modern{Closed: ptr(testpb.Closed_CLOSED_ZERO)}, &testpb.Modern{}, false},
		{"edition delimited message", &testpb.Modern{Part: &testpb.Part{Weight: ptr(float32(nan))}}, &testpb.Modern{Part: &testpb.Part{Weight: ptr(float32(nan))}}, true},

		{"oneof unset vs unset", &testpb.Top{}, &testpb.Top{}, true},
		{"oneof unset vs zero member", &testpb.Top{}, &testpb.Top{Choice: &testpb.Top_ChoiceName{}}, false},
		{"oneof different members", &testpb.Top{Choice: &testpb.Top_ChoiceName{}}, &testpb.Top{Choice: &testpb.Top_ChoiceNumber{}}, false},
		{"oneof same member same value", &testpb.Top{Choice: &testpb.Top_ChoiceNumber{ChoiceNumber: 3}}, &testpb.Top{Choice: &testpb.Top_ChoiceNumber{ChoiceNumber: 3}}, true},
		{"oneof same member other value", &testpb.Top{Choice: &testpb.Top_ChoiceNumber{ChoiceNumber: 3}}, &testpb.Top{Choice: &testpb.Top_ChoiceNumber{ChoiceNumber: 4}}, false},
		{"oneof bytes nil vs empty", &testpb.Top{Choice: &testpb.Top_ChoiceBytes{}}, &testpb.Top{Choice: &testpb.Top_ChoiceBytes{ChoiceBytes: []byte{}}}, true},
		{"oneof message empty vs empty", &testpb.Top{Choice: &testpb.Top_ChoiceLeaf{ChoiceLeaf: &testpb.Leaf{}}}, &testpb.Top{Choice: &testpb.Top_ChoiceLeaf{ChoiceLeaf: &testpb.Leaf{}}}, true},
		{"oneof message differs", &testpb.Top{Choice: &testpb.Top_ChoiceLeaf{ChoiceLeaf: &testpb.Leaf{Name: "a"}}}, &testpb.Top{Choice: &testpb.Top_ChoiceLeaf{ChoiceLeaf: &testpb.Leaf{}}}, false},
		{"oneof typed nil wrapper vs unset", &testpb.Top{Choice: (*testpb.Top_ChoiceName)(nil)}, &testpb.Top{}, true},
		{"oneof typed nil wrappers of two members", &testpb.Top{Choice: (*testpb.Top_ChoiceName)(nil)}, &testpb.Top{Choice: (*testpb.Top_ChoiceLeaf)(nil)}, true},
		{"oneof typed nil wrapper vs set", &testpb.Top{Choice: (*testpb.Top_ChoiceName)(nil)}, &testpb.Top{Choice: &testpb.Top_ChoiceName{}}, false},
		{"oneof typed nil wrapper vs other member", &testpb.Top{Choice: (*testpb.Top_ChoiceName)(nil)}, &testpb.Top{Choice: &testpb.Top_ChoiceNumber{}}, false},
		{"oneof other-message member", &testpb.Secrets{Cred: &testpb.Secrets_CredUser{CredUser: "u"}}, &testpb.Secrets{Cred: &testpb.Secrets_CredToken{CredToken: "u"}}, false},

		{"unknown same", withUnknown(&testpb.Leaf{}, unknown(9, 1)), withUnknown(&testpb.Leaf{}, unknown(9, 1)), true},
		{"unknown differs", withUnknown(&testpb.Leaf{}, unknown(9, 1)), withUnknown(&testpb.Leaf{}, unknown(9, 2)), false},
		{"unknown one side", withUnknown(&testpb.Leaf{}, unknown(9, 1)), &testpb.Leaf{}, false},
		{"unknown numbers reordered", withUnknown(&testpb.Leaf{}, unknown(9, 1), unknown(10, 2)), withUnknown(&testpb.Leaf{}, unknown(10, 2), unknown(9, 1)), true},
		{"unknown same number reordered", withUnknown(&testpb.Leaf{}, unknown(9, 1), unknown(9, 2)), withUnknown(&testpb.Leaf{}, unknown(9, 2), unknown(9, 1)), false},
		{"unknown deep", &testpb.Top{Middle: &testpb.Middle{Leaf: withUnknown(&testpb.Leaf{}, unknown(9, 1))}}, &testpb.Top{Middle: &testpb.Middle{Leaf: &testpb.Leaf{}}}, false},
		{"unknown in message without fields", withUnknown(&testpb.Empty{}, unknown(1, 1)), &testpb.Empty{}, false},

		{"well-known equal", &testpb.Wkt{Ts: timestamppb.New(timestampAt(5)), Any: mustAny(&testpb.Leaf{Name: "x"})}, &testpb.Wkt{Ts: timestamppb.New(timestampAt(5)), Any: mustAny(&testpb.Leaf{Name: "x"})}, true},
		{"timestamp differs", &testpb.Wkt{Ts: timestamppb.New(timestampAt(5))}, &testpb.Wkt{Ts: timestamppb.New(timestampAt(6))}, false},
		{"timestamp nil vs zero", &testpb.Wkt{}, &testpb.Wkt{Ts: &timestamppb.Timestamp{}}, false},
		{"wrapper nil vs zero", &testpb.Wkt{}, &testpb.Wkt{Str: wrapperspb.String("")}, false},
		{"any differs", &testpb.Wkt{Any: mustAny(&testpb.Leaf{Name: "x"})}, &testpb.Wkt{Any: mustAny(&testpb.Leaf{Name: "y"})}, false},
		{"struct NaN", &testpb.Wkt{Val: structpb.NewNumberValue(nan)}, &testpb.Wkt{Val: structpb.NewNumberValue(nan)}, true},
		{"duration map", &testpb.Wkt{Durs: map[string]*durationpb.Duration{"a": durationpb.New(1)}}, &testpb.Wkt{Durs: map[string]*durationpb.Duration{"a": durationpb.New(2)}}, false},
		{"other package equal", &testpb.Top{Label: &otherpb.Label{Name: "a", Weights: []int32{1}}}, &testpb.Top{Label: &otherpb.Label{Name: "a", Weights: []int32{1}}}, true},
		{"other package differs", &testpb.Top{LabelsOther: []*otherpb.Label{{Color: 1}}}, &testpb.Top{LabelsOther: []*otherpb.Label{{Color: 2}}}, false},
		{"other package map", &testpb.Top{LabelMap: map[string]*otherpb.Label{"a": {}}}, &testpb.Top{LabelMap: map[string]*otherpb.Label{"a": {Name: "n"}}}, false},
		{"recursive equal", &testpb.Tree{Left: &testpb.Tree{Branch: &testpb.Branch{Tree: &testpb.Tree{Name: "x"}}}}, &testpb.Tree{Left: &testpb.Tree{Branch: &testpb.Branch{Tree: &testpb.Tree{Name: "x"}}}}, true},
		{"recursive differs deep", &testpb.Tree{Children: []*testpb.Tree{{Right: &testpb.Tree{Name: "x"}}}}, &testpb.Tree{Children: []*testpb.Tree{{Right: &testpb.Tree{Name: "y"}}}}, false},
		{"nested message type", &testpb.Outer{InnerMap: map[string]*testpb.Outer_Inner{"a": {Kind: 1}}}, &testpb.Outer{InnerMap: map[string]*testpb.Outer_Inner{"a": {Kind: 1}}}, true},

		{"proto2 equal", &testpb.Legacy{Id: ptr("a"), Count: ptr(int32(7))}, &testpb.Legacy{Id: ptr("a"), Count: ptr(int32(7))}, true},
		{"proto2 default vs unset", &testpb.Legacy{Count: ptr(int32(7))}, &testpb.Legacy{}, false},
		{"proto2 group", &testpb.Legacy{Item: &testpb.Legacy_Item{Text: ptr("")}}, &testpb.Legacy{Item: &testpb.Legacy_Item{}}, false},
		{"proto2 group equal", &testpb.Legacy_Item{Num: ptr(uint64(1))}, &testpb.Legacy_Item{Num: ptr(uint64(1))}, true},
		{"proto2 oneof enum", &testpb.Legacy{Pick: &testpb.Legacy_PickMode{}}, &testpb.Legacy{Pick: &testpb.Legacy_PickName{}}, false},
		{"proto2 extension set vs unset", withExtension(&testpb.Legacy{}, "note"), &testpb.Legacy{}, false},
		{"proto2 extension equal", withExtension(&testpb.Legacy{}, "note"), withExtension(&testpb.Legacy{}, "note"), true},
		{"proto2 extension differs", withExtension(&testpb.Legacy{}, "a"), withExtension(&testpb.Legacy{}, "b"), false},
		{"proto2 nil vs empty", (*testpb.Legacy)(nil), &testpb.Legacy{}, false},
		{"proto2 nil vs nil", (*testpb.Legacy)(nil), (*testpb.Legacy)(nil), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := checkEqual(t, tt.a, tt.b); got != tt.want {
				t.Errorf("proto.Equal = %v, the table expects %v", got, tt.want)
			}
			if !genEqual(t, tt.a, tt.a) || !genEqual(t, tt.b, tt.b) {
				t.Errorf("a message differs from itself")
			}
		})
	}
}

// TestEqualNilMembers covers nil messages held in oneof wrappers, which the
// proto runtime reads as empty messages.
func TestEqualNilMembers(t *testing.T) {
	nilLeaf := &testpb.Top{Choice: &testpb.Top_ChoiceLeaf{}}
	tests := []struct {
		name string
		a, b proto.Message
		want bool
	}{
		{"nil nil", nilLeaf, &testpb.Top{Choice: &testpb.Top_ChoiceLeaf{}}, true},
		{"nil empty", nilLeaf, &testpb.Top{Choice: &testpb.Top_ChoiceLeaf{ChoiceLeaf: &testpb.Leaf{}}}, true},
		{"nil non-empty", nilLeaf, &testpb.Top{Choice: &testpb.Top_ChoiceLeaf{ChoiceLeaf: &testpb.Leaf{Name: "x"}}}, false},
		{"nil unset", nilLeaf, &testpb.Top{}, false},
		{"nil other member", nilLeaf, &testpb.Top{Choice: &testpb.Top_ChoiceName{}}, false},
		{"secrets nil empty", &testpb.Secrets{Cred: &testpb.Secrets_CredLeaf{}}, &testpb.Secrets{Cred: &testpb.Secrets_CredLeaf{CredLeaf: &testpb.Leaf{}}}, true},
		{"list nil nil", &testpb.Top{Middles: []*testpb.Middle{nil}}, &testpb.Top{Middles: []*testpb.Middle{nil}}, true},
		{"map nil nil", &testpb.Top{LeafMap: map[int32]*testpb.Leaf{1: nil}}, &testpb.Top{LeafMap: map[int32]*testpb.Leaf{1: nil}}, true},
		// The inline loops over lists and maps of messages, of this package
		// and of another.
		{"map nil empty", &testpb.Top{LeafMap: map[int32]*testpb.Leaf{1: nil}}, &testpb.Top{LeafMap: map[int32]*testpb.Leaf{1: {}}}, true},
		{"map nil non-empty", &testpb.Top{LeafMap: map[int32]*testpb.Leaf{1: nil}}, &testpb.Top{LeafMap: map[int32]*testpb.Leaf{1: {Name: "x"}}}, false},
		{"map nil value, key differs", &testpb.Top{LeafMap: map[int32]*testpb.Leaf{1: nil}}, &testpb.Top{LeafMap: map[int32]*testpb.Leaf{2: nil}}, false},
		{"map key differs, same length", &testpb.Top{LeafMap: map[int32]*testpb.Leaf{1: {}, 2: {}}}, &testpb.Top{LeafMap: map[int32]*testpb.Leaf{1: {}, 3: {}}}, false},
		{"other package map nil empty", &testpb.Top{LabelMap: map[string]*otherpb.Label{"a": nil}}, &testpb.Top{LabelMap: map[string]*otherpb.Label{"a": {}}}, true},
		{"other package map key differs", &testpb.Top{LabelMap: map[string]*otherpb.Label{"a": nil}}, &testpb.Top{LabelMap: map[string]*otherpb.Label{"b": nil}}, false},
		{"other package list nil empty", &testpb.Top{LabelsOther: []*otherpb.Label{nil}}, &testpb.Top{LabelsOther: []*otherpb.Label{{}}}, true},
		{"other package list nil non-empty", &testpb.Top{LabelsOther: []*otherpb.Label{{Name: "n"}}}, &testpb.Top{LabelsOther: []*otherpb.Label{nil}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := checkEqual(t, tt.a, tt.b); got != tt.want {
				t.Errorf("proto.Equal = %v, the table expects %v", got, tt.want)
			}
		})
	}
}

func mustAny(m proto.Message) *anypb.Any {
	a, err := anypb.New(m)
	if err != nil {
		panic(err)
	}
	return a
}

func withExtension(m *testpb.Legacy, note string) *testpb.Legacy {
	proto.SetExtension(m, testpb.E_LegacyNote, note)
	return m
}

func TestCloneNil(t *testing.T) {
	for _, mt := range generatedTypes(t) {
		typedNil := reflect.Zero(reflect.TypeOf(mt.Zero().Interface())).Interface().(proto.Message)
		c := genClone(t, typedNil)
		if !reflect.ValueOf(c).IsNil() {
			t.Errorf("%s: nil.Clone() = %v, want nil", mt.Descriptor().FullName(), c)
		}
		empty := mt.New().Interface()
		if genEqual(t, typedNil, empty) || genEqual(t, empty, typedNil) {
			t.Errorf("%s: nil Equal empty", mt.Descriptor().FullName())
		}
		if !genEqual(t, typedNil, typedNil) {
			t.Errorf("%s: nil not Equal nil", mt.Descriptor().FullName())
		}
		if c := genClone(t, empty); !proto.Equal(c, empty) || reflect.ValueOf(c).IsNil() {
			t.Errorf("%s: Clone of empty = %v", mt.Descriptor().FullName(), c)
		}
	}
}

func TestCloneFull(t *testing.T) {
	m := fullTop()
	c := m.Clone()
	if !proto.Equal(c, m) || !c.Equal(m) {
		t.Fatalf("Clone differs:\n got %v\nwant %v", c, m)
	}
	if c == m {
		t.Fatal("Clone returned its receiver")
	}
	// A clone of a clone of a message with unknown fields keeps them too.
	if cc := c.Clone(); !proto.Equal(cc, m) {
		t.Fatalf("second Clone differs")
	}
}

func TestCloneKeepsUnknownFields(t *testing.T) {
	m := &testpb.Top{
		Middle:  &testpb.Middle{Leaf: withUnknown(&testpb.Leaf{}, unknown(50, 3))},
		Middles: []*testpb.Middle{withUnknown(&testpb.Middle{}, unknown(51, 4))},
		LeafMap: map[int32]*testpb.Leaf{1: withUnknown(&testpb.Leaf{}, unknown(52, 5))},
		Choice:  &testpb.Top_ChoiceLeaf{ChoiceLeaf: withUnknown(&testpb.Leaf{}, unknown(53, 6))},
		Label:   withUnknown(&otherpb.Label{}, unknown(54, 7)),
	}
	withUnknown(m, unknown(100, 1), unknown(101, 2))
	c := m.Clone()
	for _, p := range []struct {
		name      string
		got, want protoreflect.Message
	}{
		{"top", c.ProtoReflect(), m.ProtoReflect()},
		{"middle.leaf", c.Middle.Leaf.ProtoReflect(), m.Middle.Leaf.ProtoReflect()},
		{"middles[0]", c.Middles[0].ProtoReflect(), m.Middles[0].ProtoReflect()},
		{"leaf_map[1]", c.LeafMap[1].ProtoReflect(), m.LeafMap[1].ProtoReflect()},
		{"choice_leaf", c.GetChoiceLeaf().ProtoReflect(), m.GetChoiceLeaf().ProtoReflect()},
		{"label", c.Label.ProtoReflect(), m.Label.ProtoReflect()},
	} {
		g, w := p.got.GetUnknown(), p.want.GetUnknown()
		if len(w) == 0 || !bytes.Equal(g, w) {
			t.Errorf("%s: unknown fields %x, want %x", p.name, g, w)
		}
		if len(g) > 0 && &g[0] == &w[0] {
			t.Errorf("%s: unknown fields share memory with the original", p.name)
		}
	}
	l := withUnknown(&testpb.Legacy{Id: ptr("x")}, unknown(300, 1))
	withExtension(l, "n")
	lc := l.Clone()
	if !proto.Equal(lc, l) || !bytes.Equal(lc.ProtoReflect().GetUnknown(), l.ProtoReflect().GetUnknown()) {
		t.Errorf("Legacy Clone lost unknown fields or extensions: %v", lc)
	}
}

func TestCloneOneofTypedNilWrapper(t *testing.T) {
	m := &testpb.Top{Choice: (*testpb.Top_ChoiceBytes)(nil)}
	c := m.Clone()
	if c.Choice != nil {
		t.Errorf("Clone of a typed nil wrapper holds %#v, want no member", c.Choice)
	}
	if !proto.Equal(c, m) {
		t.Errorf("Clone differs from original")
	}
}

// marshal encodes m deterministically: the snapshot the aliasing test
// compares, bytes of unknown fields included.
func marshal(t testing.TB, m proto.Message) []byte {
	t.Helper()
	b, err := proto.MarshalOptions{Deterministic: true, AllowPartial: true}.Marshal(m)
	if err != nil {
		t.Fatalf("marshal %T: %v", m, err)
	}
	return b
}

// mutateEverything changes every populated field reachable from m in place:
// bytes (values and unknown fields) are overwritten in their existing
// memory, sub-messages, list elements and map values are changed through
// their existing references, scalars get other values. It returns how many
// values it changed.
func mutateEverything(m protoreflect.Message) int {
	n := 0
	if u := m.GetUnknown(); len(u) > 0 {
		for i := range u {
			u[i] ^= 0x5a
		}
		n++
	}
	var fds []protoreflect.FieldDescriptor
	m.Range(func(fd protoreflect.FieldDescriptor, _ protoreflect.Value) bool {
		fds = append(fds, fd)
		return true
	})
	for _, fd := range fds {
		switch {
		case fd.IsList():
			l := m.Mutable(fd).List()
			for i := 0; i < l.Len(); i++ {
				if v, ok := mutateValue(fd, l.Get(i), &n); ok {
					l.Set(i, v)
				}
			}
		case fd.IsMap():
			mp := m.Mutable(fd).Map()
			var keys []protoreflect.MapKey
			mp.Range(func(k protoreflect.MapKey, _ protoreflect.Value) bool {
				keys = append(keys, k)
				return true
			})
			for _, k := range keys {
				if v, ok := mutateValue(fd.MapValue(), mp.Get(k), &n); ok {
					mp.Set(k, v)
				}
			}
		case fd.Message() != nil:
			mutateValue(fd, m.Mutable(fd), &n)
		default:
			if v, ok := mutateValue(fd, m.Get(fd), &n); ok {
				m.Set(fd, v)
			}
		}
	}
	return n
}

// mutateValue changes v in place (messages, bytes) or returns a new value
// to store (other scalars).
func mutateValue(fd protoreflect.FieldDescriptor, v protoreflect.Value, n *int) (protoreflect.Value, bool) {
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		*n += mutateEverything(v.Message())
		return v, false
	case protoreflect.BytesKind:
		b := v.Bytes()
		if len(b) == 0 {
			*n++
			return protoreflect.ValueOfBytes([]byte("new")), true
		}
		for i := range b {
			b[i] ^= 0xa5
		}
		*n++
		return v, false
	}
	*n++
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(!v.Bool()), true
	case protoreflect.EnumKind:
		return protoreflect.ValueOfEnum(v.Enum() ^ 1), true
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return protoreflect.ValueOfInt32(int32(v.Int()) + 1), true
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return protoreflect.ValueOfInt64(v.Int() + 1), true
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return protoreflect.ValueOfUint32(uint32(v.Uint()) + 1), true
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return protoreflect.ValueOfUint64(v.Uint() + 1), true
	case protoreflect.FloatKind:
		return protoreflect.ValueOfFloat32(float32(v.Float()) + 1.5), true
	case protoreflect.DoubleKind:
		return protoreflect.ValueOfFloat64(v.Float() + 1.5), true
	case protoreflect.StringKind:
		return protoreflect.ValueOfString(v.String() + "~"), true
	}
	*n--
	return v, false
}

// checkNoAliasing clones m, mutates everything reachable from the clone and
// checks that m did not change.
func checkNoAliasing(t *testing.T, m proto.Message) {
	t.Helper()
	// The snapshot is the encoding: proto.Clone would not do, since it drops
	// implicit-presence -0 floats.
	before := marshal(t, m)
	c := genClone(t, m)
	changed := mutateEverything(c.ProtoReflect())
	if after := marshal(t, m); !bytes.Equal(before, after) {
		t.Fatalf("%T: mutating the clone (%d changes) changed the original:\nbefore %x\nafter  %x", m, changed, before, after)
	}
}

func TestCloneNoAliasing(t *testing.T) {
	t.Run("full Top", func(t *testing.T) {
		m := fullTop()
		before := marshal(t, m)
		c := m.Clone()
		if n := mutateEverything(c.ProtoReflect()); n < 100 {
			t.Fatalf("only %d values mutated: the walk does not reach everything", n)
		}
		if !bytes.Equal(before, marshal(t, m)) {
			t.Fatalf("mutating the clone changed the original")
		}
		if proto.Equal(c, m) {
			t.Fatalf("mutating the clone changed nothing")
		}
	})
	for _, mt := range generatedTypes(t) {
		t.Run(string(mt.Descriptor().FullName()), func(t *testing.T) {
			for seed := range uint64(20) {
				m := mt.New()
				randmsg.Fill(m, randmsg.New(seed), randmsg.Options{Unknown: true, UndefinedEnums: true})
				checkNoAliasing(t, m.Interface())
			}
		})
	}
}

// changeOneField returns a clone of m with one random field cleared (when
// m has any populated) or populated at random.
func changeOneField(t testing.TB, m proto.Message, r *rand.Rand) proto.Message {
	c := genClone(t, m).ProtoReflect()
	var set []protoreflect.FieldDescriptor
	c.Range(func(fd protoreflect.FieldDescriptor, _ protoreflect.Value) bool {
		set = append(set, fd)
		return true
	})
	if len(set) > 0 && r.IntN(2) == 0 {
		c.Clear(set[r.IntN(len(set))])
		return c.Interface()
	}
	fds := c.Descriptor().Fields()
	if fds.Len() == 0 {
		c.SetUnknown(append(c.GetUnknown(), unknown(99, r.Uint64N(3))...))
		return c.Interface()
	}
	fd := fds.Get(r.IntN(fds.Len()))
	c.Clear(fd)
	// Fill a fresh message and copy that one field over.
	tmp := c.Type().New()
	randmsg.Fill(tmp, r, randmsg.Options{})
	if tmp.Has(fd) {
		c.Set(fd, tmp.Get(fd))
	}
	return c.Interface()
}

func TestCloneEqualProperties(t *testing.T) {
	opts := randmsg.Options{Unknown: true, UndefinedEnums: true}
	for _, mt := range generatedTypes(t) {
		t.Run(string(mt.Descriptor().FullName()), func(t *testing.T) {
			r := randmsg.New(uint64(len(mt.Descriptor().FullName())))
			for range 50 {
				a := mt.New()
				randmsg.Fill(a, r, opts)
				am := a.Interface()

				c := genClone(t, am)
				if !proto.Equal(c, am) {
					t.Fatalf("Clone differs from original:\n got %v\nwant %v", c, am)
				}
				if !checkEqual(t, c, am) || !genEqual(t, am, am) {
					t.Fatalf("generated Equal rejects a clone")
				}

				b := mt.New()
				randmsg.Fill(b, r, opts)
				checkEqual(t, am, b.Interface())

				mut := proto.Clone(am)
				randmsg.Mutate(mut.ProtoReflect(), r)
				checkEqual(t, am, mut)

				checkEqual(t, am, changeOneField(t, am, r))
			}
		})
	}
}

// FuzzEqual compares the generated Equal with proto.Equal on message pairs
// derived from the input: decoded from it as a Top (unknown fields and
// all), or generated from it by randmsg, then cloned and changed.
func FuzzEqual(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("seed"))
	f.Add(marshal(f, fullTop()))
	f.Add(marshal(f, &testpb.Scalars{FDouble: math.Copysign(0, -1), FFloat: float32(math.NaN())}))
	f.Add(marshal(f, &testpb.Optionals{OBytes: []byte{}, ODouble: ptr(math.NaN())}))
	f.Add(append(marshal(f, &testpb.Top{Choice: &testpb.Top_ChoiceBytes{}}), unknown(77, 1)...))
	types := generatedTypes(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		r := randmsg.FromBytes(data)
		var a proto.Message
		if top := new(testpb.Top); proto.Unmarshal(data, top) == nil && r.IntN(2) == 0 {
			a = top
		} else {
			mt := types[r.IntN(len(types))]
			m := mt.New()
			randmsg.Fill(m, r, randmsg.Options{Unknown: true, UndefinedEnums: true})
			a = m.Interface()
		}
		c := genClone(t, a)
		if !proto.Equal(c, a) {
			t.Fatalf("Clone differs from original")
		}
		checkEqual(t, a, c)
		b := proto.Clone(a)
		randmsg.Mutate(b.ProtoReflect(), r)
		checkEqual(t, a, b)
		checkEqual(t, a, changeOneField(t, a, r))
		other := a.ProtoReflect().Type().New()
		randmsg.Fill(other, r, randmsg.Options{})
		checkEqual(t, a, other.Interface())
	})
}
