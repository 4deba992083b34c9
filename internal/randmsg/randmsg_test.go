package randmsg_test

import (
	"math"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/edgekit/edgekit/fieldmap"
	"github.com/edgekit/edgekit/internal/randmsg"
	"github.com/edgekit/edgekit/internal/reference"
	"github.com/edgekit/edgekit/internal/reference/reftest"
)

func desc(t testing.TB, name protoreflect.FullName) protoreflect.MessageDescriptor {
	t.Helper()
	md, err := reftest.Message(name)
	if err != nil {
		t.Fatal(err)
	}
	return md
}

func fill(md protoreflect.MessageDescriptor, seed uint64, opts randmsg.Options) *dynamicpb.Message {
	m := dynamicpb.NewMessage(md)
	randmsg.Fill(m, randmsg.New(seed), opts)
	return m
}

func wire(t testing.TB, m proto.Message) string {
	t.Helper()
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestFillDeterministic(t *testing.T) {
	mds, err := reftest.Messages()
	if err != nil {
		t.Fatal(err)
	}
	opts := randmsg.Options{Unknown: true, UndefinedEnums: true}
	for _, md := range mds {
		distinct := map[string]bool{}
		for seed := range uint64(50) {
			a, b := fill(md, seed, opts), fill(md, seed, opts)
			if wire(t, a) != wire(t, b) {
				t.Fatalf("%s seed %d: two fills differ", md.FullName(), seed)
			}
			distinct[wire(t, a)] = true
			c, d := dynamicpb.NewMessage(md), dynamicpb.NewMessage(md)
			randmsg.Fill(c, randmsg.FromBytes([]byte{byte(seed)}), opts)
			randmsg.Fill(d, randmsg.FromBytes([]byte{byte(seed)}), opts)
			if wire(t, c) != wire(t, d) {
				t.Fatalf("%s bytes %d: two fills differ", md.FullName(), seed)
			}
		}
		if len(distinct) < 10 {
			t.Errorf("%s: only %d distinct messages in 50 seeds", md.FullName(), len(distinct))
		}
	}
	if randmsg.FromBytes([]byte("a")).Uint64() == randmsg.FromBytes([]byte("b")).Uint64() {
		t.Errorf("FromBytes ignores its input")
	}
}

// TestFillCoverage checks that, over many seeds, Fill reaches every field
// and the edge cases that matter.
func TestFillCoverage(t *testing.T) {
	const n = 400
	seen := map[string]bool{}
	note := func(k string) { seen[k] = true }
	for _, name := range []protoreflect.FullName{"reftest.v1.Scalars", "reftest.v1.Top", "reftest.v1.WellKnown", "reftest.v1.legacy.Old", "reftest.v1.ed.Ed"} {
		md := desc(t, name)
		for seed := range uint64(n) {
			m := fill(md, seed, randmsg.Options{})
			m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
				note("set " + string(fd.FullName()))
				switch {
				case fd.IsList():
					note("len>1 " + string(fd.FullName()))
				case fd.IsMap():
					if v.Map().Len() > 1 {
						note("len>1 " + string(fd.FullName()))
					}
				case fd.Kind() == protoreflect.DoubleKind:
					x := v.Float()
					switch {
					case math.IsNaN(x):
						note("NaN")
					case math.IsInf(x, 1):
						note("+Inf")
					case math.IsInf(x, -1):
						note("-Inf")
					case x == 0 && math.Signbit(x):
						note("-0")
					}
				case fd.Kind() == protoreflect.BytesKind && fd.HasPresence() && len(v.Bytes()) == 0:
					note("empty present bytes")
				case fd.Kind() == protoreflect.StringKind && len(v.String()) > len([]rune(v.String())):
					note("multi-byte string")
				}
				return true
			})
			for i := 0; i < md.Oneofs().Len(); i++ {
				if od := md.Oneofs().Get(i); !od.IsSynthetic() && m.WhichOneof(od) == nil {
					note("none of " + string(od.FullName()))
				}
			}
			if len(m.GetUnknown()) > 0 {
				t.Fatalf("unknown fields without Options.Unknown")
			}
		}
		fields := md.Fields()
		for i := 0; i < fields.Len(); i++ {
			fd := fields.Get(i)
			if !seen["set "+string(fd.FullName())] {
				t.Errorf("%s never set", fd.FullName())
			}
			if (fd.IsList() || fd.IsMap()) && !seen["len>1 "+string(fd.FullName())] {
				t.Errorf("%s never had several elements", fd.FullName())
			}
		}
		for i := 0; i < md.Oneofs().Len(); i++ {
			if od := md.Oneofs().Get(i); !od.IsSynthetic() && !seen["none of "+string(od.FullName())] {
				t.Errorf("oneof %s never empty", od.FullName())
			}
		}
	}
	for _, k := range []string{"NaN", "+Inf", "-Inf", "-0", "empty present bytes", "multi-byte string"} {
		if !seen[k] {
			t.Errorf("never produced: %s", k)
		}
	}
}

func TestFillOptions(t *testing.T) {
	md := desc(t, "reftest.v1.Top")
	undefined, unknown := 0, 0
	for seed := range uint64(300) {
		m := fill(md, seed, randmsg.Options{UndefinedEnums: true, Unknown: true})
		if reference.ValidateEnums(m) != nil {
			undefined++
		}
		if len(m.GetUnknown()) > 0 {
			unknown++
		}
		if err := reference.ValidateEnums(fill(md, seed, randmsg.Options{})); err != nil {
			t.Fatalf("undefined enum value without Options.UndefinedEnums: %v", err)
		}
	}
	if undefined == 0 || unknown == 0 {
		t.Errorf("in 300 seeds: %d messages with undefined enums, %d with unknown fields", undefined, unknown)
	}
	// Closed enums never get undefined values.
	old := desc(t, "reftest.v1.legacy.Old")
	for seed := range uint64(300) {
		if err := reference.ValidateEnums(fill(old, seed, randmsg.Options{UndefinedEnums: true})); err != nil {
			t.Fatalf("closed enum: %v", err)
		}
	}
}

// depth returns how deep messages nest in m (0 for no sub-messages).
func depth(m protoreflect.Message) int {
	d := 0
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		var subs []protoreflect.Message
		switch {
		case fd.IsList() && fd.Message() != nil:
			for i := 0; i < v.List().Len(); i++ {
				subs = append(subs, v.List().Get(i).Message())
			}
		case fd.IsMap() && fd.MapValue().Message() != nil:
			v.Map().Range(func(_ protoreflect.MapKey, v protoreflect.Value) bool {
				subs = append(subs, v.Message())
				return true
			})
		case !fd.IsList() && !fd.IsMap() && fd.Message() != nil:
			subs = append(subs, v.Message())
		}
		for _, s := range subs {
			d = max(d, 1+depth(s))
		}
		return true
	})
	return d
}

func TestFillDepth(t *testing.T) {
	for _, maxDepth := range []int{1, 2, 5} {
		deepest := 0
		for seed := range uint64(200) {
			m := fill(desc(t, "reftest.v1.Node"), seed, randmsg.Options{MaxDepth: maxDepth, MaxLen: 2})
			d := depth(m)
			if d > maxDepth {
				t.Fatalf("MaxDepth %d: depth %d", maxDepth, d)
			}
			deepest = max(deepest, d)
		}
		if deepest != maxDepth {
			t.Errorf("MaxDepth %d: deepest message only %d deep", maxDepth, deepest)
		}
	}
}

// TestFillWellKnown checks that well-known types hold valid content.
func TestFillWellKnown(t *testing.T) {
	md := desc(t, "reftest.v1.WellKnown")
	as := func(m protoreflect.Message, out proto.Message) {
		t.Helper()
		if err := proto.Unmarshal([]byte(wire(t, m.Interface())), out); err != nil {
			t.Fatal(err)
		}
	}
	for seed := range uint64(200) {
		m := fill(md, seed, randmsg.Options{})
		for _, name := range []protoreflect.Name{"ts", "at"} {
			if fd := md.Fields().ByName(name); m.Has(fd) {
				var ts timestamppb.Timestamp
				as(m.Get(fd).Message(), &ts)
				if err := ts.CheckValid(); err != nil {
					t.Errorf("seed %d: %s: %v", seed, name, err)
				}
			}
		}
		for _, name := range []protoreflect.Name{"dur", "after"} {
			if fd := md.Fields().ByName(name); m.Has(fd) {
				var d durationpb.Duration
				as(m.Get(fd).Message(), &d)
				if err := d.CheckValid(); err != nil {
					t.Errorf("seed %d: %s: %v", seed, name, err)
				}
			}
		}
		if fd := md.Fields().ByName("any"); m.Has(fd) {
			var a anypb.Any
			as(m.Get(fd).Message(), &a)
			if _, err := a.UnmarshalNew(); err != nil || !strings.HasPrefix(a.TypeUrl, "type.googleapis.com/google.protobuf.") {
				t.Errorf("seed %d: any %q: %v", seed, a.TypeUrl, err)
			}
		}
		// Struct, Value and ListValue are valid JSON values.
		if _, err := protojson.Marshal(m); err != nil {
			t.Errorf("seed %d: %v", seed, err)
		}
	}
}

func TestMutate(t *testing.T) {
	mds, err := reftest.Messages()
	if err != nil {
		t.Fatal(err)
	}
	for _, md := range mds {
		changed := 0
		const n = 200
		for seed := range uint64(n) {
			r := randmsg.New(seed)
			a := dynamicpb.NewMessage(md)
			randmsg.Fill(a, r, randmsg.Options{})
			b := proto.Clone(a).ProtoReflect()
			randmsg.Mutate(b, r)
			d := reference.DiffFields(a, b)
			if d.Count() > 0 {
				changed++
			}
			top := 0
			for _, f := range d.Fields() {
				if !strings.Contains(f, ".") {
					top++
				}
			}
			// At most three changes, each to one field or (through a
			// oneof) two.
			if top > 6 {
				t.Errorf("%s seed %d: mutation touched %d top-level fields: %v", md.FullName(), seed, top, d)
			}
		}
		if md.Fields().Len() > 1 && changed < n/2 {
			t.Errorf("%s: only %d of %d mutations changed the message", md.FullName(), changed, n)
		}
	}
}

func TestFieldMap(t *testing.T) {
	for _, name := range []protoreflect.FullName{"reftest.v1.Listy", "reftest.v1.Top"} {
		s := reference.NewSchema(desc(t, name))
		sizes := map[int]bool{}
		acts := map[fieldmap.Action]bool{}
		underList, parents := false, false
		for seed := range uint64(300) {
			for _, actions := range []bool{false, true} {
				fm := randmsg.FieldMap(s, randmsg.New(seed), actions)
				if err := s.Check(fm); err != nil {
					t.Fatalf("seed %d: %v", seed, err)
				}
				if fm.Schema() != s {
					t.Fatalf("map not bound to the schema")
				}
				sizes[fm.Count()] = true
				for _, flag := range fm.Fields() {
					f, _ := s.Lookup(flag)
					a := fm.ListAction(flag)
					if a != fieldmap.Replace && !actions {
						t.Fatalf("action %v without actions", a)
					}
					acts[a] = true
					parents = parents || f.Kind == fieldmap.KindMessage
					underList = underList || !f.Leaf && f.Kind != fieldmap.KindMessage
				}
			}
		}
		if !sizes[0] || !sizes[len(s.Fields())] || len(sizes) < 5 {
			t.Errorf("%s: map sizes %v: want empty, full and more", name, sizes)
		}
		if !parents || !underList {
			t.Errorf("%s: parents %v, flags under lists %v", name, parents, underList)
		}
		wantActs := name == "reftest.v1.Listy"
		if acts[fieldmap.Add] != wantActs || acts[fieldmap.Remove] != wantActs {
			t.Errorf("%s: actions seen %v", name, acts)
		}
	}
}

func TestNilAndInvalid(t *testing.T) {
	md := desc(t, "reftest.v1.Top")
	r := randmsg.New(1)
	randmsg.Fill(nil, r, randmsg.Options{})
	randmsg.Mutate(nil, r)
	zero := dynamicpb.NewMessageType(md).Zero()
	randmsg.Fill(zero, r, randmsg.Options{})
	randmsg.Mutate(zero, r)
}
