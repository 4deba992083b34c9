// Package diff is the "diff" feature of protoc-gen-go-edgekit: for every
// message T with an open Go struct it generates
//
//	func (m *T) DiffFields(o *T) *fieldmap.FieldMap
//
// as docs/field-flags.md defines it: the flags of the units (scalars, lists,
// maps, sub-messages without flags below them) whose values differ under
// proto.Equal's rules, of the message fields present on one side only, and
// the ancestors of every flag added. As for copyin, the method is one call
// of the fieldmap runtime (fieldmap.Diff), which walks the shape of T with
// its Go layout, with no reflection; nil messages read as empty.
package diff

import (
	"google.golang.org/protobuf/compiler/protogen"

	"github.com/edgekit/edgekit/gen"
)

func init() {
	gen.Register("diff", func(g *gen.GeneratedFile) gen.Feature { return &feature{g: g} })
}

type feature struct{ g *gen.GeneratedFile }

var _ gen.Feature = (*feature)(nil)

func (f *feature) GenerateFile(file *protogen.File) bool {
	return f.g.EachMessage(file, "diff", f.message)
}

func (f *feature) message(mm *gen.Message) {
	g := f.g
	m, o := g.Local("m"), g.Local("o")
	ptr := g.Ident(gen.UnsafePackage, "Pointer")
	schema := g.Schema(mm)
	g.P("// DiffFields returns the flags of the fields where m and o differ, with their ancestors.")
	g.P("func (", m, " *", mm.GoIdent.GoName, ") DiffFields(", o, " *", mm.GoIdent.GoName, ") *", g.Fieldmap("FieldMap"), " {")
	g.P("return ", g.Fieldmap("Diff"), "(", schema, ", ", ptr, "(", m, "), ", ptr, "(", o, "))")
	g.P("}")
	g.P()
}
