// Package equal is the "equal" feature of protoc-gen-go-edgekit: for every
// message it generates
//
//	func (m *T) Equal(o *T) bool
//
// which agrees with proto.Equal, written field by field without reflection:
// NaN equals NaN; presence matters (a nil sub-message differs from an empty
// one, an implicit-presence float holding -0 differs from +0); nil and empty
// lists, maps and implicit-presence bytes are equal; unknown fields compare
// as proto.Equal compares them. Extensions are compared by
// fieldmap.EqualExtensions.
package equal

import (
	"strings"

	"google.golang.org/protobuf/compiler/protogen"

	"github.com/edgekit/edgekit/gen"
)

func init() {
	gen.Register("equal", func(g *gen.GeneratedFile) gen.Feature { return &feature{g: g} })
}

type feature struct {
	g     *gen.GeneratedFile
	conds []string // conditions under which Equal returns false, not emitted yet
}

var _ gen.Feature = (*feature)(nil)

func (f *feature) GenerateFile(file *protogen.File) bool {
	return f.g.EachMessage(file, "equal", f.message)
}

// oneofs returns the real (not synthetic) oneofs of mm.
func oneofs(mm *gen.Message) []*protogen.Oneof {
	var out []*protogen.Oneof
	for _, o := range mm.Oneofs {
		if !o.Desc.IsSynthetic() {
			out = append(out, o)
		}
	}
	return out
}

// isSetFunc is the name of the package function reporting whether oneof o
// holds a member.
func isSetFunc(o *protogen.Oneof) string { return "_" + o.GoIdent.GoName + "_isSet" }

func (f *feature) message(mm *gen.Message) {
	g := f.g
	m, o, a, b, ok := g.Local("m"), g.Local("o"), g.Local("a"), g.Local("b"), g.Local("ok")
	name := mm.GoIdent.GoName
	g.P("// Equal reports whether m and o are equal under proto.Equal's rules.")
	g.P("func (", m, " *", name, ") Equal(", o, " *", name, ") bool {")
	g.P("if ", m, " == ", o, " {")
	g.P("return true")
	g.P("}")
	g.P("if ", m, " == nil || ", o, " == nil {")
	g.P("return false")
	g.P("}")
	for _, fd := range mm.Fields {
		if gen.InOneof(fd) {
			continue
		}
		f.notEqualReturn(fd, m+"."+fd.GoName, o+"."+fd.GoName)
	}
	f.flush()
	// none is set when m holds no member of the oneof; o must then hold
	// none either, which one call of the oneof's isSet function decides
	// after the switch (one inlined copy of its type switch per oneof, not
	// one per member).
	none := g.Local("none")
	for i, of := range oneofs(mm) {
		if i == 0 {
			g.P(none, " := false")
		} else {
			g.P(none, " = false")
		}
		g.P("switch ", a, " := ", m, ".", of.GoName, ".(type) {")
		for _, fd := range of.Fields {
			g.P("case ", g.OneofWrapper(fd), ":")
			g.P("if ", b, ", ", ok, " := ", o, ".", of.GoName, ".(", g.OneofWrapper(fd), "); ", ok, " && ", a, " != nil && ", b, " != nil {")
			if gen.IsMessage(fd) {
				// The runtime reads a nil message in a wrapper as empty.
				x, y := g.Local("x"), g.Local("y")
				g.P("if ", x, ", ", y, " := ", a, ".", fd.GoName, ", ", b, ".", fd.GoName, "; ", x, " != ", y, " && ", f.elemDiffers(fd.Message, x, y), " {")
				g.P("return false")
				g.P("}")
			} else {
				f.notEqualReturn(fd, a+"."+fd.GoName, b+"."+fd.GoName)
				f.flush()
			}
			g.P("} else if ", a, " != nil {")
			g.P("return false")
			g.P("} else {")
			g.P(none, " = true")
			g.P("}")
		}
		g.P("default:")
		g.P(none, " = true")
		g.P("}")
		g.P("if ", none, " && ", isSetFunc(of), "(", o, ".", of.GoName, ") {")
		g.P("return false")
		g.P("}")
	}
	if gen.HasExtensionRanges(mm.Message) {
		g.P("if (len(", m, ".extensionFields) > 0 || len(", o, ".extensionFields) > 0) && !", g.Fieldmap("EqualExtensions"), "(", m, ", ", o, ") {")
		g.P("return false")
		g.P("}")
	}
	// The slow comparison is passed as a parameter: see
	// fieldmap.EqualUnknownFields.
	g.P("return ", g.Fieldmap("EqualUnknownFields"), "(", m, ".unknownFields, ", o, ".unknownFields, ", g.Fieldmap("EqualUnknown"), ")")
	g.P("}")
	g.P()
	for _, of := range oneofs(mm) {
		x := g.Local("x")
		g.P("// ", isSetFunc(of), " reports whether oneof ", of.Desc.Name(), " of ", name, " holds a member: a")
		g.P("// typed nil wrapper holds none.")
		g.P("func ", isSetFunc(of), "(", x, " is", of.GoIdent.GoName, ") bool {")
		g.P("switch ", x, " := ", x, ".(type) {")
		for _, fd := range of.Fields {
			g.P("case ", g.OneofWrapper(fd), ":")
			g.P("return ", x, " != nil")
		}
		g.P("}")
		g.P("return false")
		g.P("}")
		g.P()
	}
}

// equalExpr is g.EqualExpr, except for message values: well-known types
// use their fieldmap helper, and a nil message held in a list or map reads
// as an empty one, as under proto.Equal.
func (f *feature) equalExpr(fd *protogen.Field, a, b string) string {
	g := f.g
	d := fd.Desc
	switch {
	case d.IsMap() && gen.IsMessage(fd.Message.Fields[1]):
		return g.Fieldmap("EqualMessageMapFunc") + "(" + a + ", " + b + ", " + f.messageEqualFunc(fd.Message.Fields[1].Message) + ")"
	case d.IsList() && gen.IsMessage(fd):
		return g.Fieldmap("EqualMessageListFunc") + "(" + a + ", " + b + ", " + f.messageEqualFunc(fd.Message) + ")"
	case !d.IsMap() && gen.IsMessage(fd) && gen.WellKnownHelper(fd.Message) != "":
		return f.messageEqualFunc(fd.Message) + "(" + a + ", " + b + ")"
	}
	return g.EqualExpr(fd, a, b)
}

// notEqualReturn emits a statement returning false when a and b, values of
// fd, differ, or adds its condition to those of the next flush.
func (f *feature) notEqualReturn(fd *protogen.Field, a, b string) {
	g := f.g
	if d := fd.Desc; d.IsMap() && gen.IsMessage(fd.Message.Fields[1]) && gen.WellKnownHelper(fd.Message.Fields[1].Message) == "" {
		// An inline loop, as for lists; a missing key differs, a nil value
		// reads as an empty message.
		f.flush()
		v := fd.Message.Fields[1].Message
		k, x, y, ok := g.Local("k"), g.Local("x"), g.Local("y"), g.Local("ok")
		g.P("if len(", a, ") != len(", b, ") {")
		g.P("return false")
		g.P("}")
		g.P("for ", k, ", ", x, " := range ", a, " {")
		g.P("if ", y, ", ", ok, " := ", b, "[", k, "]; !", ok, " || ", x, " != ", y, " && ", f.elemDiffers(v, x, y), " {")
		g.P("return false")
		g.P("}")
		g.P("}")
		return
	}
	if d := fd.Desc; d.IsList() && gen.IsMessage(fd) && gen.WellKnownHelper(fd.Message) == "" {
		f.flush()
		i, x, y := g.Local("i"), g.Local("x"), g.Local("y")
		g.P("if len(", a, ") != len(", b, ") {")
		g.P("return false")
		g.P("}")
		g.P("for ", i, ", ", x, " := range ", a, " {")
		g.P("if ", y, " := ", b, "[", i, "]; ", x, " != ", y, " && ", f.elemDiffers(fd.Message, x, y), " {")
		g.P("return false")
		g.P("}")
		g.P("}")
		return
	}
	expr := f.equalExpr(fd, a, b)
	if expr == a+" == "+b {
		f.conds = append(f.conds, a+" != "+b)
	} else {
		f.conds = append(f.conds, "!"+expr)
	}
}

// elemDiffers returns a condition true when x and y, two distinct messages
// of type msg held in a list, a map or a oneof, differ; a nil message there
// reads as an empty one. Lists and maps of messages are compared by inline
// loops: no function value per element, and the Equal of a small message
// is inlined into the loop. The comparison is written once (where the
// compiler inlines it, its body is compiled once); only when it fails and
// one side is nil does the non-generic fieldmap.EqualNilElem decide.
func (f *feature) elemDiffers(msg *protogen.Message, x, y string) string {
	g := f.g
	var eq string
	switch fn := f.messageEqualFunc(msg); {
	case f.local(msg):
		eq = x + ".Equal(" + y + ")"
	case strings.HasPrefix(fn, "func("):
		eq = "(" + fn + ")(" + x + ", " + y + ")"
	default:
		eq = fn + "(" + x + ", " + y + ")"
	}
	return "!" + eq + " && (" + x + " != nil && " + y + " != nil || !" + g.Fieldmap("EqualNilElem") + "(" + x + ", " + y + "))"
}

// flush emits one statement returning false for each pending condition:
// separate statements compile to a test and a branch each, where one
// condition joined by || materialises some of its operands as booleans.
func (f *feature) flush() {
	g := f.g
	for _, c := range f.conds {
		g.P("if ", c, " {")
		g.P("return false")
		g.P("}")
	}
	f.conds = nil
}

// messageEqualFunc returns a Go func value comparing two messages of type
// msg (gen.MessageEqualFunc).
func (f *feature) messageEqualFunc(msg *protogen.Message) string {
	return f.g.MessageEqualFunc(msg)
}

// local reports whether msg has a generated Equal method.
func (f *feature) local(msg *protogen.Message) bool { return f.g.Model.Generates(msg, "equal") }
