package reference_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/edgekit/edgekit/internal/reference"
)

func TestDiffFields(t *testing.T) {
	tests := []struct {
		name string
		msg  protoreflect.FullName
		a, b string
		want []string
	}{
		{"equal", "reftest.v1.Top", `id: "a" middle { note: "x" }`, `id: "a" middle { note: "x" }`, []string{}},
		{"scalar", "reftest.v1.Top", `id: "a"`, `id: "b"`, []string{"2"}},
		{"deep leaf adds ancestors", "reftest.v1.Top", `middle { leaf { name: "a" } }`, `middle { leaf { name: "b" } }`, []string{"1", "1.1", "1.1.1"}},
		{"one side has sub-message", "reftest.v1.Top", ``, `middle { leaf { name: "b" } }`, []string{"1"}},
		{"empty vs nil sub-message", "reftest.v1.Top", `middle {}`, ``, []string{"1"}},
		{"list is a unit", "reftest.v1.Top", `middles { note: "a" }`, `middles { note: "b" }`, []string{"5"}},
		{"empty lists equal", "reftest.v1.Top", ``, `nums: []`, []string{}},
		{"map", "reftest.v1.Top", `counts { key: "a" value: 1 }`, `counts { key: "a" value: 2 }`, []string{"6"}},
		{"oneof members", "reftest.v1.Top", `leaf { name: "a" }`, `text: "a"`, []string{"8", "9"}},
		{"oneof same member recursion", "reftest.v1.Top", `leaf { name: "a" }`, `leaf { name: "b" }`, []string{"9", "9.1"}},
		{"NaN equals NaN", "reftest.v1.Scalars", `f_double: nan`, `f_double: nan`, []string{}},
		{"-0 differs from +0 implicit", "reftest.v1.Scalars", `f_double: -0`, ``, []string{"1"}},
		{"explicit zero vs unset", "reftest.v1.Scalars", `o_int32: 0`, ``, []string{"21"}},
		{"well-known unit", "reftest.v1.WellKnown", `ts { seconds: 1 }`, `ts { seconds: 2 }`, []string{"1"}},
		{"proto2 default vs unset", "reftest.v1.legacy.Old", `s: "x"`, ``, []string{"2"}},
		{"group", "reftest.v1.legacy.Old", `Grp { g: 1 }`, `Grp { g: 2 }`, []string{"7", "7.8"}},
		{"recursion stop", "reftest.v1.Node", `next { name: "a" }`, `next { name: "b" }`, []string{"2"}},
		{"edition implicit zero", "reftest.v1.ed.Ed", `implicit: 0 explicit: 0`, ``, []string{"1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := msg(t, tt.msg, tt.a), msg(t, tt.msg, tt.b)
			d := reference.DiffFields(a, b)
			if d.Schema() != reference.NewSchema(a.Descriptor()) {
				t.Errorf("DiffFields not bound to the message schema")
			}
			got := d.Fields()
			if got == nil {
				got = []string{}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("DiffFields (-want +got):\n%s", diff)
			}
			if back := reference.DiffFields(b, a).Fields(); !cmp.Equal(d.Fields(), back) {
				t.Errorf("DiffFields not symmetric: %v vs %v", d.Fields(), back)
			}
			reference.CopyInFields(a, b, d)
			if !proto.Equal(a.Interface(), b.Interface()) {
				t.Errorf("after CopyInFields(a, b, diff): {%s} != {%s}", text(a), text(b))
			}
		})
	}
}

func TestDiffFieldsNil(t *testing.T) {
	a := msg(t, "reftest.v1.Top", `id: "a"`)
	if got := reference.DiffFields(a, nil).Fields(); !cmp.Equal(got, []string{"2"}) {
		t.Errorf("DiffFields(a, nil) = %v", got)
	}
	if got := reference.DiffFields(nil, a).Fields(); !cmp.Equal(got, []string{"2"}) {
		t.Errorf("DiffFields(nil, a) = %v", got)
	}
	if got := reference.DiffFields(nil, nil); got != nil {
		t.Errorf("DiffFields(nil, nil) = %v", got)
	}
}
