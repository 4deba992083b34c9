package reference_test

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/edgekit/edgekit/fieldmap"
	"github.com/edgekit/edgekit/internal/reference"
)

func TestCopyInFields(t *testing.T) {
	tests := []struct {
		name      string
		msg       protoreflect.FullName
		dst, src  string
		flags     []string
		want      string
		wantCount int
	}{
		{"scalar", "reftest.v1.Top", `id: "a" tags: "x"`, `id: "b" tags: "y"`, []string{"id"}, `id: "b" tags: "x"`, 1},
		{"same value counts 0", "reftest.v1.Top", `id: "a"`, `id: "a"`, []string{"id"}, `id: "a"`, 0},
		{"implicit unset clears", "reftest.v1.Top", `id: "a"`, ``, []string{"id"}, ``, 1},
		{"unflagged kept", "reftest.v1.Top", `id: "a" nums: 1`, `id: "b" nums: 2`, []string{"nums"}, `id: "a" nums: 2`, 1},
		{"no flags", "reftest.v1.Top", `id: "a"`, `id: "b"`, nil, `id: "a"`, 0},
		{"optional presence copied", "reftest.v1.Scalars", ``, `o_int32: 0 o_string: ""`, []string{"o_int32", "o_string", "o_double"}, `o_int32: 0 o_string: ""`, 2},
		{"optional unset clears", "reftest.v1.Scalars", `o_int32: 0 o_double: 1`, ``, []string{"o_int32", "o_double"}, ``, 2},
		{"optional bytes empty vs unset", "reftest.v1.Scalars", ``, `o_bytes: ""`, []string{"o_bytes"}, `o_bytes: ""`, 1},
		{"parent flag copies whole sub-message", "reftest.v1.Top",
			`middle { note: "d" leaf { name: "d" value: 1 } }`, `middle { leaf { name: "s" } }`,
			[]string{"middle"}, `middle { leaf { name: "s" } }`, 1},
		{"parent flag with nil src clears", "reftest.v1.Top", `middle { note: "d" }`, ``, []string{"middle"}, ``, 1},
		{"parent flag, empty vs nil differ", "reftest.v1.Top", ``, `middle {}`, []string{"middle"}, `middle {}`, 1},
		{"child flag recurses", "reftest.v1.Top",
			`middle { note: "d" leaf { name: "d" value: 1 } }`, `middle { note: "s" leaf { name: "s" value: 2 } }`,
			[]string{"middle.leaf.name"}, `middle { note: "d" leaf { name: "s" value: 1 } }`, 1},
		{"child flag creates sub-messages", "reftest.v1.Top",
			``, `middle { note: "s" leaf { name: "s" value: 2 } }`,
			[]string{"middle.leaf.name"}, `middle { leaf { name: "s" } }`, 3},
		{"child flag, same value only creates", "reftest.v1.Top",
			``, `middle { leaf { } }`,
			[]string{"middle.leaf.name"}, `middle { leaf { } }`, 2},
		{"child flag, nil src reads empty", "reftest.v1.Top",
			`middle { note: "d" leaf { name: "d" value: 1 } }`, ``,
			[]string{"middle.leaf.name", "middle.note"}, `middle { leaf { value: 1 } }`, 2},
		{"child flag, both nil", "reftest.v1.Top", `id: "a"`, `id: "b"`, []string{"middle.leaf.name"}, `id: "a"`, 0},
		{"flag under list selects the list", "reftest.v1.Top",
			`middles { note: "d" } middles { note: "e" }`, `middles { note: "s" leaf { value: 3 } }`,
			[]string{"middles.leaf.value"}, `middles { note: "s" leaf { value: 3 } }`, 1},
		{"list replace with empty src", "reftest.v1.Top", `nums: [1, 2]`, ``, []string{"nums"}, ``, 1},
		{"list equal counts 0", "reftest.v1.Top", `nums: [1, 2]`, `nums: [1, 2]`, []string{"nums"}, `nums: [1, 2]`, 0},
		{"map replace", "reftest.v1.Top", `counts { key: "a" value: 1 }`, `counts { key: "b" value: 2 }`, []string{"counts"}, `counts { key: "b" value: 2 }`, 1},
		{"map under parent flag", "reftest.v1.Top", `middle { by_name { key: "a" value { name: "x" } } }`, `middle { by_name { key: "b" value {} } }`,
			[]string{"middle"}, `middle { by_name { key: "b" value {} } }`, 1},
		{"oneof scalar member set", "reftest.v1.Top", `leaf { name: "d" }`, `text: "s"`, []string{"text"}, `text: "s"`, 1},
		{"oneof scalar member unset clears", "reftest.v1.Top", `text: "d"`, `number: 5`, []string{"text"}, ``, 1},
		{"oneof scalar member unset, other member kept", "reftest.v1.Top", `number: 4`, `number: 5`, []string{"text"}, `number: 4`, 0},
		{"oneof message member recursion replaces other member", "reftest.v1.Top",
			`text: "d"`, `leaf { name: "s" value: 2 }`, []string{"leaf.name"}, `leaf { name: "s" }`, 2},
		{"oneof message member recursion, src holds other", "reftest.v1.Top",
			`leaf { name: "d" value: 2 }`, `text: "s"`, []string{"leaf.name"}, `leaf { value: 2 }`, 1},
		{"oneof message member whole", "reftest.v1.Top",
			`leaf { name: "d" value: 2 }`, `text: "s"`, []string{"leaf"}, ``, 1},
		{"oneof two members flagged", "reftest.v1.Top",
			`leaf { name: "d" }`, `text: "s"`, []string{"leaf", "text"}, `text: "s"`, 1}, // text (8) is visited first and replaces leaf (9)
		{"proto3 optional message recursion", "reftest.v1.Top", ``, `opt_leaf { name: "s" }`, []string{"opt_leaf.name"}, `opt_leaf { name: "s" }`, 2},
		{"atomic field is one unit", "reftest.v1.Top", `atomic_leaf { name: "d" value: 1 }`, `atomic_leaf { name: "s" }`, []string{"atomic_leaf"}, `atomic_leaf { name: "s" }`, 1},
		{"empty message unit", "reftest.v1.Top", ``, `none {}`, []string{"none"}, `none {}`, 1},
		{"recursion stop is one unit", "reftest.v1.Node", `next { name: "d" next { name: "x" } }`, `next { name: "s" }`, []string{"next"}, `next { name: "s" }`, 1},
		{"recursion through Tree", "reftest.v1.Node", `tree { size: 1 root { name: "d" } }`, `tree { size: 2 root { name: "s" } }`, []string{"tree.root"}, `tree { size: 1 root { name: "s" } }`, 1},
		{"well-known unit", "reftest.v1.WellKnown", `ts { seconds: 1 nanos: 2 }`, `ts { seconds: 3 }`, []string{"ts"}, `ts { seconds: 3 }`, 1},
		{"well-known oneof", "reftest.v1.WellKnown", `at { seconds: 1 }`, `after { seconds: 3 }`, []string{"after", "at"}, `after { seconds: 3 }`, 2}, // at cleared, after set
		{"proto2 presence of zero", "reftest.v1.legacy.Old", ``, `a: 0 s: "x" level: LOW`, []string{"a", "s", "level", "d"}, `a: 0 s: "x" level: LOW`, 3},
		{"proto2 unset clears to default", "reftest.v1.legacy.Old", `a: 1 s: "y"`, ``, []string{"a", "s"}, ``, 2},
		{"proto2 group child", "reftest.v1.legacy.Old", `Grp { g: 1 secret: "d" }`, `Grp { g: 2 secret: "s" }`, []string{"grp.g"}, `Grp { g: 2 secret: "d" }`, 1},
		{"proto2 oneof message member", "reftest.v1.legacy.Old", `pa: 1`, `ps { x: 0 }`, []string{"ps.x"}, `ps { x: 0 }`, 2},
		{"edition explicit presence", "reftest.v1.ed.Ed", ``, `explicit: 0 implicit: 0 name: ""`, []string{"explicit", "implicit", "name"}, `explicit: 0 name: ""`, 2},
		{"edition delimited child", "reftest.v1.ed.Ed", `part { x: 1 }`, `part { x: 2 secret: "s" }`, []string{"part.x"}, `part { x: 2 }`, 1},
		{"list actions ignored without the option", "reftest.v1.Top", `nums: [1, 2]`, `nums: [3]`, []string{"nums:replace"}, `nums: [3]`, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst, src := msg(t, tt.msg, tt.dst), msg(t, tt.msg, tt.src)
			srcBefore := clone(src)
			n := reference.CopyInFields(dst, src, fm(t, dst.Descriptor(), tt.flags...))
			if want := msg(t, tt.msg, tt.want); !proto.Equal(dst.Interface(), want.Interface()) {
				t.Errorf("dst = {%s}, want {%s}", text(dst), tt.want)
			}
			if n != tt.wantCount {
				t.Errorf("count = %d, want %d", n, tt.wantCount)
			}
			if !proto.Equal(src.Interface(), srcBefore.Interface()) {
				t.Errorf("src changed: {%s}", text(src))
			}
		})
	}
}

func TestCopyInFieldsListActions(t *testing.T) {
	tests := []struct {
		name      string
		dst, src  string
		flags     []string
		want      string
		wantCount int
	}{
		{"add appends missing", `nums: [1, 2]`, `nums: [2, 3, 3, 4]`, []string{"nums:add"}, `nums: [1, 2, 3, 4]`, 1},
		{"add nothing new", `nums: [1, 2]`, `nums: [2, 1]`, []string{"nums:add"}, `nums: [1, 2]`, 0},
		{"add to empty", ``, `nums: [5, 5]`, []string{"nums:add"}, `nums: [5]`, 1},
		{"add empty src", `nums: [1]`, ``, []string{"nums:add"}, `nums: [1]`, 0},
		{"add NaN equals NaN", `doubles: [nan]`, `doubles: [nan, 0]`, []string{"doubles:add"}, `doubles: [nan, 0]`, 1},
		{"add -0 equals +0", `doubles: [0]`, `doubles: [-0]`, []string{"doubles:add"}, `doubles: [0]`, 0},
		{"add messages by Equal", `leaves { name: "a" }`, `leaves { name: "a" } leaves { name: "b" } leaves { name: "b" }`,
			[]string{"leaves:add"}, `leaves { name: "a" } leaves { name: "b" }`, 1},
		{"remove", `nums: [1, 2, 3, 2]`, `nums: [2, 9]`, []string{"nums:remove"}, `nums: [1, 3]`, 1},
		{"remove all gives nil", `nums: [1, 1]`, `nums: [1]`, []string{"nums:remove"}, ``, 1},
		{"remove none", `nums: [1]`, `nums: [2]`, []string{"nums:remove"}, `nums: [1]`, 0},
		{"remove from empty", ``, `nums: [2]`, []string{"nums:remove"}, ``, 0},
		{"remove messages", `leaves { name: "a" } leaves { name: "b" }`, `leaves { name: "a" }`, []string{"leaves:remove"}, `leaves { name: "b" }`, 1},
		{"remove bytes", `blobs: ["a", "b"]`, `blobs: ["b"]`, []string{"blobs:remove"}, `blobs: ["a"]`, 1},
		{"map add", `names { key: 1 value: "a" } names { key: 2 value: "b" }`, `names { key: 2 value: "c" } names { key: 3 value: "d" }`,
			[]string{"names:add"}, `names { key: 1 value: "a" } names { key: 2 value: "c" } names { key: 3 value: "d" }`, 1},
		{"map add same", `names { key: 1 value: "a" }`, `names { key: 1 value: "a" }`, []string{"names:add"}, `names { key: 1 value: "a" }`, 0},
		{"map remove by key", `names { key: 1 value: "a" } names { key: 2 value: "b" }`, `names { key: 2 value: "zzz" } names { key: 7 value: "" }`,
			[]string{"names:remove"}, `names { key: 1 value: "a" }`, 1},
		{"map remove all gives nil", `by_name { key: "a" value {} }`, `by_name { key: "a" value { name: "x" } }`, []string{"by_name:remove"}, ``, 1},
		{"nested list add", `inner { tags: "a" }`, `inner { tags: ["a", "b"] }`, []string{"inner.tags:add"}, `inner { tags: ["a", "b"] }`, 1},
		{"nested map remove", `inner { m { key: "a" value: 1 } }`, `inner { m { key: "a" value: 2 } }`, []string{"inner.m:remove"}, `inner {}`, 1},
		{"replace", `nums: [1, 2]`, `nums: [3]`, []string{"nums:replace"}, `nums: [3]`, 1},
		{"child of a list flag means replace", `middles { note: "a" }`, `middles { note: "b" }`, []string{"middles.leaves"}, `middles { note: "b" }`, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst, src := msg(t, "reftest.v1.Listy", tt.dst), msg(t, "reftest.v1.Listy", tt.src)
			n := reference.CopyInFields(dst, src, fm(t, dst.Descriptor(), tt.flags...))
			if want := msg(t, "reftest.v1.Listy", tt.want); !proto.Equal(dst.Interface(), want.Interface()) {
				t.Errorf("dst = {%s}, want {%s}", text(dst), tt.want)
			}
			if n != tt.wantCount {
				t.Errorf("count = %d, want %d", n, tt.wantCount)
			}
		})
	}
}

// TestCopyInFieldsFloats checks that changes are counted bit for bit.
// TestListActionsWithoutEffectRefused: an action on a flag under a list
// (the flag selects the whole list) or below a set flag (which copies the
// whole sub-message) would be accepted and then ignored; Parse refuses it
// with an error naming the flag.
func TestListActionsWithoutEffectRefused(t *testing.T) {
	s := reference.NewSchema(desc(t, "reftest.v1.Listy"))
	for _, tc := range []struct{ elems []string }{
		{[]string{"middles.leaves:add"}},
		{[]string{"middles.leaves:remove"}},
		{[]string{"inner", "inner.tags:add"}},
	} {
		_, err := s.Parse(tc.elems...)
		if !errors.Is(err, fieldmap.ErrListAction) {
			t.Fatalf("Parse(%v) = %v, want ErrListAction", tc.elems, err)
		}
		bad := tc.elems[len(tc.elems)-1]
		bad = bad[:strings.IndexByte(bad, ':')]
		flag, ferr := s.FlagOf(bad)
		if ferr != nil {
			t.Fatal(ferr)
		}
		if !strings.Contains(err.Error(), strconv.Quote(flag)) {
			t.Errorf("error %q does not name flag %s", err, flag)
		}
	}
	// The same actions where they take effect are accepted.
	if _, err := s.Parse("middles:add", "inner.tags:add"); err != nil {
		t.Fatal(err)
	}
}

func TestCopyInFieldsFloats(t *testing.T) {
	md := desc(t, "reftest.v1.Scalars")
	fdD := md.Fields().ByName("f_double")
	fdF := md.Fields().ByName("f_float")
	fdO := md.Fields().ByName("o_double")
	negZero := math.Copysign(0, -1)
	otherNaN := math.Float64frombits(math.Float64bits(math.NaN()) ^ 1)
	tests := []struct {
		name     string
		fd       protoreflect.FieldDescriptor
		dst, src float64
		dstSet   bool
		want     int
	}{
		{"NaN over NaN", fdD, math.NaN(), math.NaN(), true, 0},
		{"NaN over other NaN", fdD, math.NaN(), otherNaN, true, 1},
		{"-0 over +0 implicit", fdD, 0, negZero, false, 1},
		{"+0 over -0 implicit", fdD, negZero, 0, true, 1},
		{"-0 over +0 float", fdF, 0, negZero, false, 1},
		{"-0 over +0 explicit", fdO, 0, negZero, true, 1},
		{"Inf over Inf", fdD, math.Inf(1), math.Inf(1), true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst, src := dynamicpb.NewMessage(md), dynamicpb.NewMessage(md)
			set := func(m protoreflect.Message, x float64) {
				if tt.fd.Kind() == protoreflect.FloatKind {
					m.Set(tt.fd, protoreflect.ValueOfFloat32(float32(x)))
				} else {
					m.Set(tt.fd, protoreflect.ValueOfFloat64(x))
				}
			}
			if tt.dstSet {
				set(dst, tt.dst)
			}
			set(src, tt.src)
			if got := reference.CopyInFields(dst, src, fm(t, md, string(tt.fd.Name()))); got != tt.want {
				t.Errorf("count = %d, want %d", got, tt.want)
			}
			if bits(t, dst) != bits(t, src) {
				t.Errorf("dst = {%s}, want {%s}", text(dst), text(src))
			}
			// The same under a parent flag, inside a sub-message.
			top := desc(t, "reftest.v1.Top")
			tdst, tsrc := dynamicpb.NewMessage(top), dynamicpb.NewMessage(top)
			sf := top.Fields().ByName("scalars")
			tdst.Set(sf, protoreflect.ValueOfMessage(dst))
			tsrc.Set(sf, protoreflect.ValueOfMessage(clone(src)))
			if got := reference.CopyInFields(tdst, tsrc, fm(t, top, "scalars")); got != 0 {
				t.Errorf("whole sub-message copy over a bit-identical one counts %d", got)
			}
		})
	}
}

func TestCopyInFieldsNilAndInvalid(t *testing.T) {
	dst := msg(t, "reftest.v1.Top", `id: "a" middle { note: "x" }`)
	if n := reference.CopyInFields(dst, nil, fm(t, dst.Descriptor(), "id", "middle.note")); n != 2 {
		t.Errorf("nil src: count %d, want 2", n)
	}
	if want := msg(t, "reftest.v1.Top", `middle {}`); !proto.Equal(dst.Interface(), want.Interface()) {
		t.Errorf("nil src: dst = {%s}", text(dst))
	}
	invalid := dynamicpb.NewMessageType(dst.Descriptor()).Zero()
	if n := reference.CopyInFields(dst, invalid, fm(t, dst.Descriptor(), "middle")); n != 1 || dst.Has(dst.Descriptor().Fields().ByName("middle")) {
		t.Errorf("invalid src: count %d, dst {%s}", n, text(dst))
	}
	if n := reference.CopyInFields(invalid, dst, fm(t, dst.Descriptor(), "id")); n != 0 {
		t.Errorf("invalid dst: count %d", n)
	}
	if n := reference.CopyInFields(nil, dst, fm(t, dst.Descriptor(), "id")); n != 0 {
		t.Errorf("nil dst: count %d", n)
	}
	other := msg(t, "reftest.v1.Middle", `note: "x"`)
	if n := reference.CopyInFields(dst, other, fm(t, dst.Descriptor(), "id")); n != 0 {
		t.Errorf("other type: count %d", n)
	}
	if n := reference.CopyInFields(dst, msg(t, "reftest.v1.Top", `id: "z"`), nil); n != 0 {
		t.Errorf("nil field map: count %d", n)
	}
	// A FieldMap bound to no schema works too.
	if n := reference.CopyInFields(dst, msg(t, "reftest.v1.Top", `id: "z"`), fieldmap.Of("2")); n != 1 {
		t.Errorf("unbound field map: count %d", n)
	}
}

// TestCopyInFieldsNoAliasing scribbles over src after a copy of everything
// and checks that dst did not change.
func TestCopyInFieldsNoAliasing(t *testing.T) {
	for _, name := range []protoreflect.FullName{"reftest.v1.Top", "reftest.v1.Listy"} {
		src := msg(t, name, allText[name])
		md := src.Descriptor()
		for _, flags := range [][]string{{"*"}, {"*parents"}} {
			dst := dynamicpb.NewMessage(md)
			var m *fieldmap.FieldMap
			if flags[0] == "*" {
				m = reference.NewSchema(md).All()
			} else {
				m = reference.NewSchema(md).NewFieldMap()
				for _, f := range reference.Schema(md) {
					m.Set(f.Flag)
				}
			}
			reference.CopyInFields(dst, src, m)
			if !proto.Equal(dst.Interface(), src.Interface()) {
				t.Fatalf("%s %v: copy of all differs: {%s}", name, flags, text(dst))
			}
			snapshot := clone(dst)
			scribble(clone(src)) // sanity: scribble works on a copy
			scribble(src)
			if !proto.Equal(dst.Interface(), snapshot.Interface()) {
				t.Errorf("%s %v: dst changed with src: {%s}", name, flags, text(dst))
			}
			src = msg(t, name, allText[name])
		}
	}
}

var allText = map[protoreflect.FullName]string{
	"reftest.v1.Top": `middle { leaf { name: "a" } leaves { name: "b" } by_name { key: "k" value { name: "v" } } }
		id: "x" nums: [1, 2] tags: "t" middles { note: "n" leaf { value: 3 } } counts { key: "c" value: 4 }
		leaves { key: 5 value { secret: "s" } } leaf { name: "o" } opt_leaf { name: "p" }
		scalars { f_bytes: "b" o_bytes: "" f_double: 1 } atomic_leaf { name: "q" } none {} blob: "blob"
		doubles: [1, 2] blobs: ["x", ""] flags { key: true value: COLOR_RED } ratios { key: 1 value: 0.5 }`,
	"reftest.v1.Listy": `nums: [1] leaves { name: "a" } by_name { key: "k" value { name: "v" } } names { key: 1 value: "n" }
		inner { tags: "t" m { key: "k" value: 1 } } doubles: [nan] blobs: ["b"] middles { leaf { name: "x" } }`,
}

// scribble destroys m in place: it flips every byte of every bytes value,
// empties every list and map object and clears every field, depth first.
func scribble(m protoreflect.Message) {
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList():
			l := v.List()
			for i := 0; i < l.Len(); i++ {
				scribbleValue(fd, l.Get(i))
			}
			l.Truncate(0)
		case fd.IsMap():
			mp := v.Map()
			var keys []protoreflect.MapKey
			mp.Range(func(k protoreflect.MapKey, v protoreflect.Value) bool {
				scribbleValue(fd.MapValue(), v)
				keys = append(keys, k)
				return true
			})
			for _, k := range keys {
				mp.Clear(k)
			}
		default:
			scribbleValue(fd, v)
		}
		return true
	})
	m.Range(func(fd protoreflect.FieldDescriptor, _ protoreflect.Value) bool {
		m.Clear(fd)
		return true
	})
}

func scribbleValue(fd protoreflect.FieldDescriptor, v protoreflect.Value) {
	switch fd.Kind() {
	case protoreflect.BytesKind:
		b := v.Bytes()
		for i := range b {
			b[i] ^= 0xff
		}
	case protoreflect.MessageKind, protoreflect.GroupKind:
		scribble(v.Message())
	}
}
