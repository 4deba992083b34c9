package reference_test

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/edgekit/edgekit/fieldmap"
	"github.com/edgekit/edgekit/internal/reference"
	"github.com/edgekit/edgekit/internal/reference/reftest"
)

const (
	S = fieldmap.KindScalar
	M = fieldmap.KindMessage
	L = fieldmap.KindList
	P = fieldmap.KindMap
)

// f is a compact expected Field: flag, path, kind, leaf, list actions.
func f(flag, path string, kind fieldmap.Kind, leaf, actions bool) fieldmap.Field {
	return fieldmap.Field{Flag: flag, Path: path, Kind: kind, Leaf: leaf, ListActions: actions}
}

func TestSchemaHandWritten(t *testing.T) {
	tests := []struct {
		msg  protoreflect.FullName
		want []fieldmap.Field
	}{{
		msg: "reftest.v1.Middle",
		want: []fieldmap.Field{
			f("1", "leaf", M, false, false),
			f("1.1", "leaf.name", S, true, false),
			f("1.2", "leaf.value", S, true, false),
			f("1.3", "leaf.color", S, true, false),
			f("1.4", "leaf.secret", S, true, false),
			f("2", "leaves", L, true, false),
			f("2.1", "leaves.name", S, false, false),
			f("2.2", "leaves.value", S, false, false),
			f("2.3", "leaves.color", S, false, false),
			f("2.4", "leaves.secret", S, false, false),
			f("3", "note", S, true, false),
			f("4", "by_name", P, true, false),
		},
	}, {
		// Recursion stops at the first repetition of a type on the path.
		msg: "reftest.v1.Node",
		want: []fieldmap.Field{
			f("1", "name", S, true, false),
			f("2", "next", S, true, false),
			f("3", "children", L, true, false),
			f("4", "tree", M, false, false),
			f("4.1", "tree.root", S, true, false),
			f("4.2", "tree.size", S, true, false),
			f("5", "named", P, true, false),
		},
	}, {
		// Proto2 with a group, a oneof message member and an extension
		// (which has no flag).
		msg: "reftest.v1.legacy.Old",
		want: []fieldmap.Field{
			f("1", "a", S, true, false),
			f("2", "s", S, true, false),
			f("3", "b", S, true, false),
			f("4", "level", S, true, false),
			f("5", "levels", L, true, false),
			f("6", "child", S, true, false),
			f("7", "grp", M, false, false),
			f("7.8", "grp.g", S, true, false),
			f("7.9", "grp.secret", S, true, false),
			f("10", "packed", L, true, false),
			f("11", "d", S, true, false),
			f("12", "by_name", P, true, false),
			f("13", "pa", S, true, false),
			f("14", "ps", M, false, false),
			f("14.1", "ps.x", S, true, false),
			f("14.2", "ps.y", S, true, false),
			f("14.3", "ps.level", S, true, false),
			f("15", "sub", M, false, false),
			f("15.1", "sub.x", S, true, false),
			f("15.2", "sub.y", S, true, false),
			f("15.3", "sub.level", S, true, false),
		},
	}, {
		// Edition 2023, list actions enabled, an atomic field.
		msg: "reftest.v1.ed.Ed",
		want: []fieldmap.Field{
			f("1", "explicit", S, true, false),
			f("2", "implicit", S, true, false),
			f("3", "mode", S, true, false),
			f("4", "open", S, true, false),
			f("5", "part", M, false, false),
			f("5.1", "part.x", S, true, false),
			f("5.2", "part.secret", S, true, false),
			f("5.3", "part.open", S, true, false),
			f("6", "nums", L, true, true),
			f("7", "name", S, true, false),
			f("8", "f", S, true, false),
			f("9", "parts", L, true, true),
			f("9.1", "parts.x", S, false, false),
			f("9.2", "parts.secret", S, false, false),
			f("9.3", "parts.open", S, false, false),
			f("10", "by_name", P, true, true),
			f("11", "atomic_part", S, true, false),
			f("12", "data", S, true, false),
			f("13", "g", S, true, false),
		},
	}}
	for _, tt := range tests {
		t.Run(string(tt.msg), func(t *testing.T) {
			md := desc(t, tt.msg)
			if diff := cmp.Diff(tt.want, reference.Schema(md)); diff != "" {
				t.Errorf("Schema (-want +got):\n%s", diff)
			}
			s := reference.NewSchema(md)
			if s.Message() != string(tt.msg) {
				t.Errorf("NewSchema message = %q", s.Message())
			}
			var leaves []string
			for _, f := range tt.want {
				if f.Leaf {
					leaves = append(leaves, f.Flag)
				}
			}
			if diff := cmp.Diff(leaves, s.Leaves()); diff != "" {
				t.Errorf("Leaves (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSchemaStops checks the kinds of the fields below which there are no
// flags, and the list action marks of a message enabling them.
func TestSchemaStops(t *testing.T) {
	kinds := func(name protoreflect.FullName) map[string]fieldmap.Field {
		out := map[string]fieldmap.Field{}
		for _, f := range reference.Schema(desc(t, name)) {
			out[f.Path] = f
		}
		return out
	}
	top := kinds("reftest.v1.Top")
	for path, want := range map[string]fieldmap.Kind{
		"middle": M, "middle.leaf": M, "middle.leaf.name": S, "middle.leaves": L,
		"middle.leaves.name": S, "middle.by_name": P, "middles": L, "middles.leaf": M,
		"middles.leaf.name": S, "middles.leaves": L, "nums": L, "counts": P, "leaves": P,
		"text": S, "leaf": M, "leaf.name": S, "mid": M, "mid.leaf.value": S, "number": S,
		"opt_leaf": M, "scalars": M, "scalars.o_float": S,
		"atomic_leaf": S, "none": S, "blob": S, "flags": P, "ratios": P, "colors": L,
	} {
		if got, ok := top[path]; !ok || got.Kind != want {
			t.Errorf("Top %s: kind %v (present %v), want %v", path, got.Kind, ok, want)
		}
	}
	for _, path := range []string{"atomic_leaf.name", "none.x", "leaves.name", "counts.key"} {
		if _, ok := top[path]; ok {
			t.Errorf("Top %s has a flag, want none", path)
		}
	}
	if f := top["middles.leaf.name"]; f.Leaf {
		t.Errorf("flag under a list is a leaf: %+v", f)
	}
	if len(top) != len(reference.Schema(desc(t, "reftest.v1.Top"))) {
		t.Errorf("duplicate paths in Top")
	}

	for _, f := range reference.Schema(desc(t, "reftest.v1.WellKnown")) {
		if f.Kind == M || f.Kind == P && f.Path != "values" || f.Kind == L && f.Path != "stamps" {
			t.Errorf("WellKnown %s: kind %v", f.Path, f.Kind)
		}
		if slices.Contains([]byte(f.Flag), '.') {
			t.Errorf("WellKnown has a flag below a well-known type: %s", f.Flag)
		}
	}

	listy := kinds("reftest.v1.Listy")
	for path, want := range map[string]bool{
		"nums": true, "leaves": true, "by_name": true, "names": true, "inner": false,
		"inner.tags": true, "inner.m": true, "doubles": true, "blobs": true, "middles": true,
		"leaves.name": false, "middles.leaves": false, "middles.by_name": false, "middles.leaf": false,
	} {
		if got := listy[path].ListActions; got != want {
			t.Errorf("Listy %s: ListActions %v, want %v", path, got, want)
		}
	}
	for _, f := range reference.Schema(desc(t, "reftest.v1.Top")) {
		if f.ListActions {
			t.Errorf("Top %s: ListActions without the message option", f.Path)
		}
	}
}

// TestSchemaOrder checks flag order: parents before children, children by
// field number, every flag once.
func TestSchemaOrder(t *testing.T) {
	mds, err := reftest.Messages()
	if err != nil {
		t.Fatal(err)
	}
	for _, md := range mds {
		fields := reference.Schema(md)
		flags := make([]string, len(fields))
		for i, f := range fields {
			flags[i] = f.Flag
		}
		if !slices.IsSortedFunc(flags, fieldmap.CompareFlags) {
			t.Errorf("%s: flags not in flag order: %v", md.FullName(), flags)
		}
		if len(slices.Compact(slices.Clone(flags))) != len(flags) {
			t.Errorf("%s: duplicate flags", md.FullName())
		}
		if err := reference.NewSchema(md).Check(reference.NewSchema(md).All()); err != nil {
			t.Errorf("%s: All does not check: %v", md.FullName(), err)
		}
	}
}

// TestSchemaOptionsAsUnknownFields builds descriptors whose edgekit
// options are unknown fields of the options messages (as when descriptor
// protos are read by a program that does not link the options package),
// and checks that list_actions and atomic are still read.
func TestSchemaOptionsAsUnknownFields(t *testing.T) {
	files, err := reftest.Files()
	if err != nil {
		t.Fatal(err)
	}
	fdp := protodesc.ToFileDescriptorProto(files.FindFileByPath("reftest/kinds.proto"))
	b, err := proto.Marshal(fdp)
	if err != nil {
		t.Fatal(err)
	}
	var raw descriptorpb.FileDescriptorProto
	if err := (proto.UnmarshalOptions{Resolver: new(protoregistry.Types)}).Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	kinds := files.FindFileByPath("reftest/kinds.proto")
	deps := new(protoregistry.Files)
	for i := 0; i < kinds.Imports().Len(); i++ {
		if err := deps.RegisterFile(kinds.Imports().Get(i).FileDescriptor); err != nil {
			t.Fatal(err)
		}
	}
	deps.RegisterFile(descriptorpb.File_google_protobuf_descriptor_proto)
	fd, err := protodesc.NewFile(&raw, deps)
	if err != nil {
		t.Fatal(err)
	}
	listy := fd.Messages().ByName("Listy")
	if u := listy.Options().ProtoReflect().GetUnknown(); len(u) == 0 {
		t.Fatal("test setup: options are not unknown fields")
	} else if num, _, _ := protowire.ConsumeTag(u); num != 58610 {
		t.Fatalf("test setup: unknown field %d", num)
	}
	if diff := cmp.Diff(reference.Schema(desc(t, "reftest.v1.Listy")), reference.Schema(listy)); diff != "" {
		t.Errorf("Listy schema from unknown-field options (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(reference.Schema(desc(t, "reftest.v1.Top")), reference.Schema(fd.Messages().ByName("Top"))); diff != "" {
		t.Errorf("Top schema from unknown-field options (-want +got):\n%s", diff)
	}

	// Options linked against the generated options package.
	linked, err := reftest.Compile(reftest.OptionsLinked, nil, "reftest/kinds.proto")
	if err != nil {
		t.Fatal(err)
	}
	md := linked.FindFileByPath("reftest/kinds.proto").Messages().ByName("Listy")
	if diff := cmp.Diff(reference.Schema(desc(t, "reftest.v1.Listy")), reference.Schema(md)); diff != "" {
		t.Errorf("Listy schema with linked options (-want +got):\n%s", diff)
	}
}

// TestSchemaInline compiles a message from a string, with the options
// resolved through the generated (not dynamic) extension types.
func TestSchemaInline(t *testing.T) {
	files, err := reftest.Compile(reftest.OptionsFromProto, map[string]string{"inline.proto": `
syntax = "proto3";
package inline;
import "edgekit/options/v1/options.proto";
message A {
  option (edgekit.options.v1.message).list_actions = true;
  B b = 1 [(edgekit.options.v1.field).atomic = true];
  repeated B bs = 2;
  map<string, B> m = 3;
}
message B { A a = 1; int32 x = 2; }
`}, "inline.proto")
	if err != nil {
		t.Fatal(err)
	}
	got := reference.Schema(files[0].Messages().ByName("A"))
	want := []fieldmap.Field{
		f("1", "b", S, true, false),
		f("2", "bs", L, true, true),
		f("2.1", "bs.a", S, false, false),
		f("2.2", "bs.x", S, false, false),
		f("3", "m", P, true, true),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Schema (-want +got):\n%s", diff)
	}
	// B as the top-level message: A below it, and B again stops.
	got = reference.Schema(files[0].Messages().ByName("B"))
	want = []fieldmap.Field{
		f("1", "a", M, false, false),
		f("1.1", "a.b", S, true, false),
		f("1.2", "a.bs", L, true, false),
		f("1.3", "a.m", P, true, false),
		f("2", "x", S, true, false),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Schema (-want +got):\n%s", diff)
	}
}
