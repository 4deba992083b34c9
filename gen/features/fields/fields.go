// Package fields generates, for every message, its field-flag constants,
// <Msg>AllFields, its fieldmap.Schema, a FieldSchema method and a validating
// New<Msg>FieldMap constructor.
package fields

import (
	"strconv"

	"google.golang.org/protobuf/compiler/protogen"

	"github.com/edgekit/edgekit/fieldmap"
	"github.com/edgekit/edgekit/gen"
)

func init() {
	gen.Register("fields", func(g *gen.GeneratedFile) gen.Feature { return &feature{g} })
}

type feature struct{ g *gen.GeneratedFile }

var _ gen.Feature = (*feature)(nil)

func (f *feature) GenerateFile(file *protogen.File) bool {
	return f.g.EachMessage(file, "fields", f.message)
}

func (f *feature) message(mm *gen.Message) {
	g := f.g
	name := mm.GoIdent.GoName
	if len(mm.Flags) > 0 {
		g.P("// Field flags of ", name, ": dot-joined field numbers from ", name, ".")
		if deep(mm) {
			g.P("// Flags more than ", gen.MaxConstDepth, " levels deep have no constant.")
		}
		g.P("const (")
		for _, fl := range mm.Flags {
			g.P(fl.Const, " = ", `"`, fl.Flag, `" // `, fl.Path)
		}
		g.P(")")
		g.P()
	}
	schema := g.Schema(mm)
	// A literal of constants, not a copy of the schema's leaves: the
	// compiler lays it out statically, so that the schema (and the shape
	// tables under it) is built on first use, never at init.
	g.P("// ", name, "AllFields lists the leaf flags of ", name, ", which select every field.")
	g.P("var ", name, "AllFields = []string{")
	for _, leaf := range leaves(mm) {
		g.P(leaf, ",")
	}
	g.P("}")
	g.P()
	g.P("// FieldSchema returns the field flags of ", name, ".")
	g.P("func (*", name, ") FieldSchema() *", g.Fieldmap("Schema"), " { return ", schema, " }")
	g.P()
	g.P("// New", name, "FieldMap returns a FieldMap of ", name, " holding flags, or an error naming the first it lacks.")
	g.P("func New", name, "FieldMap(flags ...string) (*", g.Fieldmap("FieldMap"), ", error) {")
	g.P("return ", schema, ".Init(new(", g.Fieldmap("FieldMap"), "), flags...)")
	g.P("}")
	g.P()
}

// leaves returns the Go expressions of the leaf flags of mm, in the order
// of fieldmap.Schema.Leaves (depth first, in field order): the flag's
// constant, or a quoted flag below MaxConstDepth where flags have none.
func leaves(mm *gen.Message) []string {
	consts := make(map[string]string, len(mm.Flags))
	for _, fl := range mm.Flags {
		consts[fl.Flag] = fl.Const
	}
	var out []string
	var walk func(s *gen.Shape, prefix string, underList bool)
	walk = func(s *gen.Shape, prefix string, underList bool) {
		for _, sf := range s.Fields {
			flag := prefix + strconv.Itoa(int(sf.Field.Desc.Number()))
			if sf.Kind != fieldmap.KindMessage && !underList {
				if c, ok := consts[flag]; ok {
					out = append(out, c)
				} else {
					out = append(out, strconv.Quote(flag))
				}
			}
			if sf.Sub != nil {
				walk(sf.Sub, flag+".", underList || sf.Kind == fieldmap.KindList)
			}
		}
	}
	walk(mm.Shape, "", false)
	return out
}

// deep reports whether mm has flags deeper than gen.MaxConstDepth.
func deep(mm *gen.Message) bool {
	depth := 0
	var walk func(s *gen.Shape, d int)
	walk = func(s *gen.Shape, d int) {
		depth = max(depth, d)
		if depth > gen.MaxConstDepth {
			return
		}
		for _, f := range s.Fields {
			if f.Sub != nil {
				walk(f.Sub, d+1)
			}
		}
	}
	walk(mm.Shape, 1)
	return depth > gen.MaxConstDepth
}
