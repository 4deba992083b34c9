// Package diff is the "diff" feature of protoc-gen-go-edgekit: for every
// message T with an open Go struct it generates
//
//	func (m *T) DiffFields(o *T) *fieldmap.FieldMap
//
// as docs/field-flags.md defines it: the flags of the units (scalars, lists,
// maps, sub-messages without flags below them) whose values differ under
// proto.Equal's rules, of the message fields present on one side only, and
// the ancestors of every flag added. The method is flat code over the flag
// tree of T, with no reflection; nil messages read as empty. As for
// copyin, the diff code of each flag layout is emitted once and addresses
// flags by number.
package diff

import (
	"strconv"

	"google.golang.org/protobuf/compiler/protogen"

	"github.com/edgekit/edgekit/fieldmap"
	"github.com/edgekit/edgekit/gen"
)

func init() {
	gen.Register("diff", func(g *gen.GeneratedFile) gen.Feature { return &feature{g: g} })
}

type feature struct {
	g       *gen.GeneratedFile
	emitted map[*gen.Shape]bool
	l       locals
}

// locals are the names of the parameters and locals of the generated code.
type locals struct {
	m, o, fm, at, c, x, y, xok, yok string
}

var _ gen.Feature = (*feature)(nil)

func (f *feature) GenerateFile(file *protogen.File) bool {
	g := f.g
	f.emitted = map[*gen.Shape]bool{}
	f.l = locals{m: g.Local("m"), o: g.Local("o"), fm: g.Local("fm"), at: g.Local("at"), c: g.Local("c"),
		x: g.Local("x"), y: g.Local("y"), xok: g.Local("xok"), yok: g.Local("yok")}
	return g.EachMessage(file, "diff", f.message)
}

func (f *feature) message(mm *gen.Message) {
	g, l := f.g, f.l
	name := mm.GoIdent.GoName
	schema := g.Schema(mm)
	g.P("// DiffFields returns the flags of the fields where m and o differ under")
	g.P("// proto.Equal's rules, with their ancestors, bound to the schema of ", name, ":")
	g.P("// m.CopyInFields(o, m.DiffFields(o)) makes m equal to o. A nil m or o reads")
	g.P("// as an empty message; the result is never nil. Unknown fields are not")
	g.P("// compared.")
	g.P("func (", l.m, " *", name, ") DiffFields(", l.o, " *", name, ") *", g.Fieldmap("FieldMap"), " {")
	g.P(l.fm, " := ", schema, ".NewFieldMap()")
	g.P(f.call(mm.Shape, l.m, l.o, "0"))
	g.P("return ", l.fm)
	g.P("}")
	g.P()
	f.emit(mm.Shape)
}

// call returns the call of the diff code of shape s.
func (f *feature) call(s *gen.Shape, a, b, at string) string {
	name := f.g.MethodName(s, "diff", "diffAt")
	if f.g.Owns(s, "diff") {
		return a + "." + name + "(" + b + ", " + f.l.fm + ", " + at + ")"
	}
	return name + "(" + a + ", " + b + ", " + f.l.fm + ", " + at + ")"
}

// emit emits the diff code of top and of the shapes below it that the file
// must emit, each once.
func (f *feature) emit(top *gen.Shape) {
	top.Walk(func(s *gen.Shape) bool {
		if f.emitted[s] {
			return false
		}
		if s != top && f.g.Owns(s, "diff") && s.Message.Desc.ParentFile() != f.g.File.Desc {
			return false // a method of another file of the package
		}
		f.emitted[s] = true
		f.shape(s)
		return true
	})
}

func (f *feature) shape(s *gen.Shape) {
	g, l := f.g, f.l
	typ := g.QualifiedGoIdent(s.Message.GoIdent)
	name := g.MethodName(s, "diff", "diffAt")
	g.P("// ", name, " sets in ", l.fm, " the flags where ", l.m, " and ", l.o, " differ, the first flag of")
	g.P("// ", s.Message.Desc.Name(), " being number ", l.at, " of ", l.fm, "'s schema, and reports whether")
	g.P("// it set any. A nil message reads as empty.")
	if g.Owns(s, "diff") {
		g.P("func (", l.m, " *", typ, ") ", name, "(", l.o, " *", typ, ", ", l.fm, " *", g.Fieldmap("FieldMap"), ", ", l.at, " int) bool {")
	} else {
		g.P("func ", name, "(", l.m, ", ", l.o, " *", typ, ", ", l.fm, " *", g.Fieldmap("FieldMap"), ", ", l.at, " int) bool {")
	}
	if len(s.Fields) == 0 {
		g.P("return false")
		g.P("}")
		g.P()
		return
	}
	g.P("if ", l.m, " == nil {")
	g.P(l.m, " = new(", typ, ")")
	g.P("}")
	g.P("if ", l.o, " == nil {")
	g.P(l.o, " = new(", typ, ")")
	g.P("}")
	g.P(l.c, " := false")
	for _, sf := range s.Fields {
		f.field(sf)
	}
	g.P("return ", l.c)
	g.P("}")
	g.P()
}

// id returns the expression of the number of the flag of sf, plus delta.
func (f *feature) id(sf *gen.ShapeField, delta int) string {
	if sf.Off+delta == 0 {
		return f.l.at
	}
	return f.l.at + "+" + strconv.Itoa(sf.Off+delta)
}

// set returns the statements recording that the flag of sf differs.
func (f *feature) set(sf *gen.ShapeField) {
	f.g.P(f.l.fm, ".SetAt(", f.id(sf, 0), ")")
	f.g.P(f.l.c, " = true")
}

// field emits the comparison of one field.
func (f *feature) field(sf *gen.ShapeField) {
	g, l := f.g, f.l
	fd := sf.Field
	if gen.InOneof(fd) {
		oneof, wrap := fd.Oneof.GoName, g.OneofWrapper(fd)
		g.P("{")
		g.P(l.x, ", ", l.xok, " := ", l.m, ".", oneof, ".(", wrap, ")")
		g.P(l.y, ", ", l.yok, " := ", l.o, ".", oneof, ".(", wrap, ")")
		g.P(l.xok, ", ", l.yok, " = ", l.xok, " && ", l.x, " != nil, ", l.yok, " && ", l.y, " != nil")
		av, bv := l.x+"."+fd.GoName, l.y+"."+fd.GoName
		if sf.Kind == fieldmap.KindMessage {
			g.P("if ", l.xok, " != ", l.yok, " || ", l.xok, " && ", f.call(sf.Sub, av, bv, f.id(sf, 1)), " {")
		} else {
			g.P("if ", l.xok, " != ", l.yok, " || ", l.xok, " && ", notExpr(g.EqualExpr(fd, av, bv), av, bv), " {")
		}
		f.set(sf)
		g.P("}")
		g.P("}")
		return
	}
	av, bv := l.m+"."+fd.GoName, l.o+"."+fd.GoName
	if sf.Kind == fieldmap.KindMessage {
		g.P("if (", av, " == nil) != (", bv, " == nil) || ", av, " != nil && ", f.call(sf.Sub, av, bv, f.id(sf, 1)), " {")
	} else {
		g.P("if ", notExpr(g.EqualExpr(fd, av, bv), av, bv), " {")
	}
	f.set(sf)
	g.P("}")
}

// notExpr negates a boolean expression from gen.EqualExpr.
func notExpr(expr, a, b string) string {
	if expr == a+" == "+b {
		return a + " != " + b
	}
	return "!" + expr
}
