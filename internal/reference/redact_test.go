package reference_test

import (
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/edgekit/edgekit/internal/reference"
)

func TestRedact(t *testing.T) {
	tests := []struct {
		msg     protoreflect.FullName
		in, out string
	}{
		{"reftest.v1.Redacted",
			`public: "p" password: "pw" leaf { name: "n" secret: "s" } leaves { secret: "s1" } leaves { name: "m" secret: "s2" }
			 by_key { key: "k" value { secret: "s3" value: 1 } } o_leaf { secret: "s4" }
			 child { password: "pw2" child { leaf { secret: "s5" name: "deep" } } } middle { leaf { secret: "s6" } leaves { secret: "s7" } by_name { key: "x" value { secret: "s8" } } }`,
			`public: "p" leaf { name: "n" } leaves {} leaves { name: "m" }
			 by_key { key: "k" value { value: 1 } } o_leaf {}
			 child { child { leaf { name: "deep" } } } middle { leaf {} leaves {} by_name { key: "x" value {} } }`},
		{"reftest.v1.Redacted", `o_secret: "s"`, ``},
		{"reftest.v1.Top", `blob: "x" id: "i" leaf { secret: "s" } atomic_leaf { secret: "a" } middles { leaf { secret: "b" } }`,
			`id: "i" leaf {} atomic_leaf {} middles { leaf {} }`},
		{"reftest.v1.legacy.Old", `Grp { g: 1 secret: "s" } child { Grp { secret: "t" } }`, `Grp { g: 1 } child { Grp {} }`},
		{"reftest.v1.ed.Ed", `part { x: 1 secret: "s" } parts { secret: "t" } by_name { key: "k" value { secret: "u" } } atomic_part { secret: "v" }`,
			`part { x: 1 } parts {} by_name { key: "k" value {} } atomic_part {}`},
	}
	for _, tt := range tests {
		m := msg(t, tt.msg, tt.in)
		reference.Redact(m)
		if want := msg(t, tt.msg, tt.out); !proto.Equal(m.Interface(), want.Interface()) {
			t.Errorf("Redact(%s) = {%s}, want {%s}", tt.in, text(m), tt.out)
		}
	}
	reference.Redact(nil) // no panic
}
