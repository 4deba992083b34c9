// Package diff is the "diff" feature of protoc-gen-go-edgekit: for every
// message T with an open Go struct it generates
//
//	func (m *T) DiffFields(o *T) *fieldmap.FieldMap
//
// as docs/field-flags.md defines it: the flags of the units (scalars, lists,
// maps, sub-messages without flags below them) whose values differ under
// proto.Equal's rules, of the message fields present on one side only, and
// the ancestors of every flag added. The method is flat code over the flag
// tree of T, with no reflection; nil messages read as empty.
package diff

import (
	"strconv"

	"google.golang.org/protobuf/compiler/protogen"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/edgekit/edgekit/fieldmap"
	"github.com/edgekit/edgekit/gen"
)

func init() {
	gen.Register("diff", func(g *gen.GeneratedFile) gen.Feature { return &feature{g} })
}

type feature struct{ g *gen.GeneratedFile }

var _ gen.Feature = (*feature)(nil)

func (f *feature) GenerateFile(file *protogen.File) bool {
	return f.g.EachMessage(file, "diff", f.message)
}

func (f *feature) message(mm *gen.Message) {
	g := f.g
	name := mm.GoIdent.GoName
	schema := g.Schema(mm)
	g.P("// DiffFields returns the flags of the fields where m and o differ under")
	g.P("// proto.Equal's rules, with their ancestors, bound to the schema of ", name, ":")
	g.P("// m.CopyInFields(o, m.DiffFields(o)) makes m equal to o. A nil m or o reads")
	g.P("// as an empty message; the result is never nil. Unknown fields are not")
	g.P("// compared.")
	g.P("func (m *", name, ") DiffFields(o *", name, ") *", g.Fieldmap("FieldMap"), " {")
	g.P("fm := ", schema, ".NewFieldMap()")
	for _, fl := range mm.Roots {
		f.flag(fl, "m", "o", 0)
	}
	g.P("return fm")
	g.P("}")
	g.P()
}

// guarded reports whether field fd must be read from a possibly nil message
// through a nil check rather than its getter: explicit-presence scalars and
// bytes, whose getters return the value (or the default), not the presence.
func guarded(fd *protogen.Field) bool {
	return gen.IsPointerScalar(fd) ||
		(fd.Desc.Kind() == protoreflect.BytesKind && fd.Desc.HasPresence() && !gen.InOneof(fd) && !fd.Desc.IsList())
}

// read emits, when needed, a local holding field fd of the possibly nil
// message x, and returns an expression for its value.
func (f *feature) read(fd *protogen.Field, x, local string) string {
	if !guarded(fd) {
		return x + ".Get" + fd.GoName + "()"
	}
	f.g.P("var ", local, " ", f.g.FieldType(fd))
	f.g.P("if ", x, " != nil {")
	f.g.P(local, " = ", x, ".", fd.GoName)
	f.g.P("}")
	return local
}

// notExpr negates a boolean expression from gen.EqualExpr.
func notExpr(expr, a, b string) string {
	if expr == a+" == "+b {
		return a + " != " + b
	}
	return "!" + expr
}

// set emits the statements recording that flag fl differs; depth is the
// nesting level of the message holding it (0: the receiver), whose change
// variable tells the parent flag to be set too.
func (f *feature) set(fl *gen.Flag, depth int) {
	f.g.P("fm.Set(", strconv.Quote(fl.Flag), ")")
	if depth > 0 {
		f.g.P("c", depth, " = true")
	}
}

// flag emits the comparison of flag fl's field in a and b, two possibly nil
// messages at nesting level depth.
func (f *feature) flag(fl *gen.Flag, a, b string, depth int) {
	g := f.g
	fd := fl.Field
	sfx := strconv.Itoa(depth)
	if fl.Kind != fieldmap.KindMessage {
		if gen.InOneof(fd) {
			aw, bw, aok, bok := f.members(fd, a, b, sfx)
			av, bv := aw+"."+fd.GoName, bw+"."+fd.GoName
			g.P("if ", aok, " != ", bok, " || ", aok, " && ", notExpr(g.EqualExpr(fd, av, bv), av, bv), " {")
			f.set(fl, depth)
			g.P("}")
			g.P("}")
			return
		}
		if guarded(fd) {
			g.P("{")
			av, bv := f.read(fd, a, "av"+sfx), f.read(fd, b, "bv"+sfx)
			g.P("if ", notExpr(g.EqualExpr(fd, av, bv), av, bv), " {")
			f.set(fl, depth)
			g.P("}")
			g.P("}")
			return
		}
		av, bv := f.read(fd, a, ""), f.read(fd, b, "")
		g.P("if ", notExpr(g.EqualExpr(fd, av, bv), av, bv), " {")
		f.set(fl, depth)
		g.P("}")
		return
	}
	next := strconv.Itoa(depth + 1)
	a1, b1, c1 := "a"+next, "b"+next, "c"+next
	if gen.InOneof(fd) {
		aw, bw, aok, bok := f.members(fd, a, b, next)
		g.P("if ", aok, " != ", bok, " {")
		f.set(fl, depth)
		g.P("} else if ", aok, " {")
		g.P(a1, ", ", b1, ", ", c1, " := ", aw, ".", fd.GoName, ", ", bw, ".", fd.GoName, ", false")
	} else {
		g.P("if ", a1, ", ", b1, " := ", a, ".Get", fd.GoName, "(), ", b, ".Get", fd.GoName, "(); (", a1, " == nil) != (", b1, " == nil) {")
		f.set(fl, depth)
		g.P("} else if ", a1, " != nil {")
		g.P(c1, " := false")
	}
	for _, c := range fl.Children {
		f.flag(c, a1, b1, depth+1)
	}
	g.P("if ", c1, " {")
	f.set(fl, depth)
	g.P("}")
	g.P("}")
	if gen.InOneof(fd) {
		g.P("}")
	}
}

// members opens a block and emits locals telling whether the possibly nil
// messages a and b hold oneof member fd (a typed nil wrapper holds nothing);
// it returns the names of the wrappers and of the two booleans.
func (f *feature) members(fd *protogen.Field, a, b, sfx string) (aw, bw, aok, bok string) {
	g := f.g
	oneof, wrap := fd.Oneof.GoName, g.OneofWrapper(fd)
	aw, bw, aok, bok = "aw"+sfx, "bw"+sfx, "aok"+sfx, "bok"+sfx
	g.P("{")
	g.P(aw, ", ", aok, " := ", a, ".Get", oneof, "().(", wrap, ")")
	g.P(bw, ", ", bok, " := ", b, ".Get", oneof, "().(", wrap, ")")
	g.P(aok, ", ", bok, " = ", aok, " && ", aw, " != nil, ", bok, " && ", bw, " != nil")
	return aw, bw, aok, bok
}
