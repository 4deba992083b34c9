package testpb_test

import (
	"errors"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/known/structpb"

	_ "github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/fieldmap"
	_ "github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/internal/randmsg"
	"github.com/edgekit/edgekit/internal/reference"
	"github.com/edgekit/edgekit/internal/testpb"
	otherpb "github.com/edgekit/edgekit/internal/testpb/other"
)

// vrkTypes lists the registered message types of the packages generated
// with every feature (map entries excluded), sorted by name.
func vrkTypes(t testing.TB) []protoreflect.MessageType {
	t.Helper()
	var out []protoreflect.MessageType
	protoregistry.GlobalTypes.RangeMessages(func(mt protoreflect.MessageType) bool {
		name := string(mt.Descriptor().FullName())
		for _, p := range []string{"testpb.", "edgeproto.", "fluidos."} {
			if strings.HasPrefix(name, p) && !mt.Descriptor().IsMapEntry() && !skipsFeatures(mt.Descriptor()) {
				out = append(out, mt)
				break
			}
		}
		return true
	})
	if len(out) < 20 {
		t.Fatalf("only %d generated message types registered", len(out))
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].Descriptor().FullName() < out[j-1].Descriptor().FullName(); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

type enumValidator interface{ ValidateEnums() error }

// genValidate calls the generated ValidateEnums of m.
func genValidate(t testing.TB, m proto.Message) error {
	t.Helper()
	v, ok := m.(enumValidator)
	if !ok {
		t.Fatalf("%T has no generated ValidateEnums", m)
	}
	return v.ValidateEnums()
}

// sameEnumError reports whether two ValidateEnums results are the same.
func sameEnumError(a, b error) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	var x, y *fieldmap.InvalidEnumError
	return errors.As(a, &x) && errors.As(b, &y) && *x == *y
}

func TestValidateEnumsPositions(t *testing.T) {
	st := func(v int32) testpb.State { return testpb.State(v) }
	leaf := func(v int32) *testpb.Leaf { return &testpb.Leaf{Name: "l", State: st(v)} }
	cases := []struct {
		name  string
		msg   proto.Message
		field string // "" when valid
		enum  string
		value int32
	}{
		{"valid top", &testpb.Top{Middle: &testpb.Middle{Leaf: leaf(2)}, States: []testpb.State{0, 1, 2}}, "", "", 0},
		{"empty", &testpb.Top{}, "", "", 0},
		{"scalar", &testpb.Scalars{FEnum: 7}, "f_enum", "testpb.v1.State", 7},
		{"negative", &testpb.Scalars{FEnum: -1}, "f_enum", "testpb.v1.State", -1},
		{"nested", &testpb.Top{Middle: &testpb.Middle{Leaf: leaf(9)}}, "middle.leaf.state", "testpb.v1.State", 9},
		{"key", &testpb.Top{Key: &testpb.Key{State: 3}}, "key.state", "testpb.v1.State", 3},
		{"list", &testpb.Top{States: []testpb.State{1, 2, 5, 6}}, "states", "testpb.v1.State", 5},
		{"list of messages", &testpb.Top{Middles: []*testpb.Middle{{}, {Leaves: []*testpb.Leaf{leaf(1), nil, leaf(-4), leaf(8)}}}},
			"middles.leaves.state", "testpb.v1.State", -4},
		{"map value", &testpb.Top{StateMap: map[bool]testpb.State{true: 7, false: 8}}, "state_map", "testpb.v1.State", 8},
		{"map value true only", &testpb.Top{StateMap: map[bool]testpb.State{true: 7, false: 1}}, "state_map", "testpb.v1.State", 7},
		{"map of messages", &testpb.Top{LeafMap: map[int32]*testpb.Leaf{3: leaf(30), -1: leaf(31), 2: leaf(1), -5: nil}},
			"leaf_map.state", "testpb.v1.State", 31},
		{"oneof message", &testpb.Top{Choice: &testpb.Top_ChoiceLeaf{ChoiceLeaf: leaf(4)}}, "choice_leaf.state", "testpb.v1.State", 4},
		{"oneof nil message", &testpb.Top{Choice: &testpb.Top_ChoiceLeaf{}}, "", "", 0},
		{"oneof scalar", &testpb.Legacy{Pick: &testpb.Legacy_PickMode{PickMode: 9}}, "pick_mode", "testpb.v1.Legacy.Mode", 9},
		{"optional", &testpb.Optionals{OEnum: vrkPtr(st(6))}, "o_enum", "testpb.v1.State", 6},
		{"optional nested", &testpb.Top{Optionals: &testpb.Optionals{OMessage: leaf(12)}}, "optionals.o_message.state", "testpb.v1.State", 12},
		{"optional valid", &testpb.Optionals{OEnum: vrkPtr(st(2))}, "", "", 0},
		{"other package", &testpb.Top{Label: &otherpb.Label{Color: 9}}, "label.color", "testpb.other.v1.Color", 9},
		{"other package list", &testpb.Top{LabelsOther: []*otherpb.Label{{Color: 1}, {Color: 3}}}, "labels_other.color", "testpb.other.v1.Color", 3},
		{"other package map", &testpb.Top{LabelMap: map[string]*otherpb.Label{"b": {Color: 11}, "a": {Color: 10}, "c": {Color: 2}}},
			"label_map.color", "testpb.other.v1.Color", 10},
		{"well-known", &testpb.Top{Wkt: &testpb.Wkt{Val: &structpb.Value{Kind: &structpb.Value_NullValue{NullValue: 3}}}},
			"wkt.val.null_value", "google.protobuf.NullValue", 3},
		{"nested enum type", &testpb.Outer{InnerMap: map[string]*testpb.Outer_Inner{"x": {Kind: 1}, "y": {Kind: 5}}},
			"inner_map.kind", "testpb.v1.Outer.Inner.Kind", 5},
		{"field order", &testpb.Top{Key: &testpb.Key{State: 40}, States: []testpb.State{41}}, "key.state", "testpb.v1.State", 40},
		{"open enum, editions", &testpb.Modern{Level: vrkPtr(testpb.Level(5))}, "level", "testpb.v1.Level", 5},
		{"closed enum, editions", &testpb.Modern{Closed: vrkPtr(testpb.Closed(7))}, "closed", "testpb.v1.Closed", 7},
		{"closed enum, proto2", &testpb.Legacy{Mode: vrkPtr(testpb.Legacy_Mode(3))}, "mode", "testpb.v1.Legacy.Mode", 3},
		{"closed enum map, proto2", &testpb.Legacy{Modes: map[string]testpb.Legacy_Mode{"a": 1, "b": 99}}, "modes", "testpb.v1.Legacy.Mode", 99},
		{"recursive", &testpb.Legacy{Next: &testpb.Legacy{Next: &testpb.Legacy{Mode: vrkPtr(testpb.Legacy_Mode(-2))}}},
			"next.next.mode", "testpb.v1.Legacy.Mode", -2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := genValidate(t, c.msg)
			ref := reference.ValidateEnums(c.msg.ProtoReflect())
			if !sameEnumError(err, ref) {
				t.Errorf("ValidateEnums = %v, reference says %v", err, ref)
			}
			if c.field == "" {
				if err != nil {
					t.Fatalf("ValidateEnums = %v, want nil", err)
				}
				return
			}
			want := fieldmap.InvalidEnumError{Message: string(c.msg.ProtoReflect().Descriptor().FullName()), Field: c.field, Enum: c.enum, Value: c.value}
			var got *fieldmap.InvalidEnumError
			if !errors.As(err, &got) || *got != want {
				t.Fatalf("ValidateEnums = %#v, want %#v", err, want)
			}
			if !errors.Is(err, fieldmap.ErrInvalidEnum) {
				t.Errorf("error %v does not match ErrInvalidEnum", err)
			}
		})
	}
}

func TestValidateEnumsNil(t *testing.T) {
	for _, m := range []enumValidator{(*testpb.Top)(nil), (*testpb.Legacy)(nil), (*testpb.Modern)(nil), (*otherpb.Label)(nil)} {
		if err := m.ValidateEnums(); err != nil {
			t.Errorf("(%T)(nil).ValidateEnums() = %v", m, err)
		}
	}
}

// TestValidateEnumsMatchesReference fills every generated type at random,
// with undefined open enum values now and then, and holds ValidateEnums to
// the reference.
func TestValidateEnumsMatchesReference(t *testing.T) {
	const seeds = 150
	found := 0
	for _, mt := range vrkTypes(t) {
		for seed := range uint64(seeds) {
			m := mt.New().Interface()
			randmsg.Fill(m.ProtoReflect(), randmsg.New(seed), randmsg.Options{UndefinedEnums: true, MaxDepth: 4, MaxLen: 4})
			err := genValidate(t, m)
			ref := reference.ValidateEnums(m.ProtoReflect())
			if !sameEnumError(err, ref) {
				t.Fatalf("%s seed %d: ValidateEnums = %v, reference says %v", mt.Descriptor().FullName(), seed, err, ref)
			}
			if err != nil {
				found++
			}
		}
	}
	if found == 0 {
		t.Fatal("no random message held an undefined enum value: the test proves nothing")
	}
	t.Logf("%d random messages held an undefined enum value", found)
}

type fieldsValidator interface {
	ValidateFields(*fieldmap.FieldMap) error
}

func TestValidateFields(t *testing.T) {
	withAction := func(flag string, act fieldmap.Action) *fieldmap.FieldMap {
		fm := fieldmap.Of()
		fm.SetAction(flag, act)
		return fm
	}
	all, err := testpb.NewTopFieldMap(testpb.TopAllFields...)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		msg  fieldsValidator
		fm   *fieldmap.FieldMap
		want error // nil, fieldmap.ErrUnknownField or fieldmap.ErrListAction
	}{
		{"nil", &testpb.Top{}, nil, nil},
		{"empty", &testpb.Top{}, fieldmap.Of(), nil},
		{"all", &testpb.Top{}, all, nil},
		{"nested flags", &testpb.Top{}, fieldmap.Of(testpb.TopFieldMiddleLeafState, testpb.TopFieldKeySubRegion, testpb.TopFieldMiddlesLeavesName), nil},
		{"add on list", &testpb.Top{}, withAction(testpb.TopFieldTags, fieldmap.Add), nil},
		{"remove on map", &testpb.Top{}, withAction(testpb.TopFieldLeafMap, fieldmap.Remove), nil},
		{"nil receiver", (*testpb.Top)(nil), fieldmap.Of(testpb.TopFieldTags), nil},
		{"unknown flag", &testpb.Top{}, fieldmap.Of(testpb.TopFieldTags, "99"), fieldmap.ErrUnknownField},
		{"unknown nested flag", &testpb.Top{}, fieldmap.Of("2.2.99"), fieldmap.ErrUnknownField},
		{"below a map", &testpb.Top{}, fieldmap.Of(testpb.TopFieldLeafMap + ".1"), fieldmap.ErrUnknownField},
		{"flag of another message", &testpb.Leaf{}, fieldmap.Of(testpb.TopFieldLeafMap), fieldmap.ErrUnknownField},
		{"add on scalar", &testpb.Top{}, withAction(testpb.TopFieldPassword, fieldmap.Add), fieldmap.ErrListAction},
		{"remove on message", &testpb.Top{}, withAction(testpb.TopFieldMiddle, fieldmap.Remove), fieldmap.ErrListAction},
		{"add without list actions", &testpb.Middle{}, withAction(testpb.MiddleFieldLeaves, fieldmap.Add), fieldmap.ErrListAction},
		{"remove without list actions", &testpb.Outer{}, withAction(testpb.OuterFieldInnerMap, fieldmap.Remove), fieldmap.ErrListAction},
		{"replace without list actions", &testpb.Middle{}, withAction(testpb.MiddleFieldLeaves, fieldmap.Replace), nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.msg.ValidateFields(c.fm)
			switch {
			case c.want == nil && err != nil:
				t.Fatalf("ValidateFields = %v, want nil", err)
			case c.want != nil && !errors.Is(err, c.want):
				t.Fatalf("ValidateFields = %v, want %v", err, c.want)
			}
			if c.want == fieldmap.ErrUnknownField {
				var ue *fieldmap.UnknownFieldError
				if !errors.As(err, &ue) || ue.Message != string(c.msg.(proto.Message).ProtoReflect().Descriptor().FullName()) {
					t.Errorf("error %#v does not name the message", err)
				}
			}
		})
	}
}

// TestValidateFieldsMatchesSchema draws random field maps, with actions,
// and compares ValidateFields with the schema the message publishes.
func TestValidateFieldsMatchesSchema(t *testing.T) {
	type schemaOwner interface {
		FieldSchema() *fieldmap.Schema
		fieldsValidator
	}
	for _, mt := range vrkTypes(t) {
		m, ok := mt.New().Interface().(schemaOwner)
		if !ok {
			t.Fatalf("%s has no FieldSchema or ValidateFields", mt.Descriptor().FullName())
		}
		r := randmsg.New(7)
		for range 20 {
			fm := randmsg.FieldMap(m.FieldSchema(), r, true)
			if got, want := m.ValidateFields(fm), m.FieldSchema().Check(fm); (got == nil) != (want == nil) || (got != nil && got.Error() != want.Error()) {
				t.Fatalf("%s: ValidateFields(%v) = %v, Schema.Check says %v", mt.Descriptor().FullName(), fm, got, want)
			}
		}
	}
}

func vrkPtr[T any](v T) *T { return &v }
