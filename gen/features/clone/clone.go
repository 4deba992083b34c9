// Package clone is the "clone" feature of protoc-gen-go-edgekit: for every
// message it generates
//
//	func (m *T) Clone() *T
//
// a deep copy that keeps unknown fields, written field by field without
// reflection. A nil m gives nil; the copy shares no pointer, slice or map
// with m. Extensions are copied by reflection (fieldmap.CloneExtensions),
// which, unlike proto.Clone, keeps -0 in implicit-presence floats.
//
// To allocate less than proto.Clone, the copy of a list or map of messages
// of the same Go package takes one block for all its messages; the
// singular sub-messages of the same package that a message holds share one
// block when it holds all of them (two or more); a oneof member message shares its block
// with its wrapper; and the explicit-presence scalars of a message share
// one block. Each part of a copy keeps its block alive.
package clone

import (
	"slices"
	"strings"

	"google.golang.org/protobuf/compiler/protogen"

	"github.com/edgekit/edgekit/gen"
)

func init() {
	gen.Register("clone", func(g *gen.GeneratedFile) gen.Feature { return &feature{g: g} })
}

type feature struct {
	g       *gen.GeneratedFile
	pending []func() // declarations to emit after the current method
}

var _ gen.Feature = (*feature)(nil)

func (f *feature) GenerateFile(file *protogen.File) bool {
	return f.g.EachMessage(file, "clone", f.message)
}

// wellKnownClone returns the fieldmap helper copying msg, or "".
func (f *feature) wellKnownClone(msg *protogen.Message) string {
	if name := gen.WellKnownHelper(msg); name != "" {
		return f.g.Fieldmap("Clone" + name)
	}
	return ""
}

// local reports whether msg has a generated cloneTo method callable from
// the file being generated.
func (f *feature) local(msg *protogen.Message) bool {
	return f.g.Model.Generates(msg, "clone")
}

// cloneExpr is g.CloneExpr, except that well-known types use their
// fieldmap helper.
func (f *feature) cloneExpr(fd *protogen.Field, v string) string {
	g := f.g
	d := fd.Desc
	vf := fd
	if d.IsMap() {
		vf = fd.Message.Fields[1]
	}
	if gen.IsMessage(vf) {
		if c := f.wellKnownClone(vf.Message); c != "" {
			switch {
			case d.IsMap():
				return g.Fieldmap("CloneMapFunc") + "(" + v + ", " + c + ")"
			case d.IsList():
				return g.Fieldmap("CloneListFunc") + "(" + v + ", " + c + ")"
			}
			return c + "(" + v + ")"
		}
	}
	return g.CloneExpr(fd, v)
}

func (f *feature) message(mm *gen.Message) {
	g := f.g
	m, c, v := g.Local("m"), g.Local("c"), g.Local("v")
	name := mm.GoIdent.GoName
	ext := gen.HasExtensionRanges(mm.Message)
	what := "unknown fields"
	if ext {
		what += " and extensions"
	}
	g.P("// Clone returns a deep copy of m (", what, " included) that shares nothing with m.")
	g.P("func (", m, " *", name, ") Clone() *", name, " {")
	g.P("if ", m, " == nil {")
	g.P("return nil")
	g.P("}")
	g.P("return ", m, ".cloneTo(new(", name, "))")
	g.P("}")
	g.P()
	g.P("// cloneTo makes c, a zero ", name, ", a deep copy of m, which is not nil, and returns c.")
	g.P("func (", m, " *", name, ") cloneTo(", c, " *", name, ") *", name, " {")
	var ptrs []*protogen.Field
	for _, fd := range mm.Fields {
		if gen.IsPointerScalar(fd) {
			ptrs = append(ptrs, fd)
		}
	}
	if len(ptrs) < 2 {
		ptrs = nil
	}
	kids := f.kids(mm)
	for _, fd := range mm.Fields {
		switch {
		case gen.InOneof(fd):
		case len(ptrs) > 0 && gen.IsPointerScalar(fd):
		case len(kids) > 0 && slices.Contains(kids, fd):
		case fd.Desc.IsList() && gen.IsMessage(fd) && f.local(fd.Message):
			f.localList(fd, m, c)
		case fd.Desc.IsMap() && gen.IsMessage(fd.Message.Fields[1]) && f.local(fd.Message.Fields[1].Message):
			f.localMap(fd, m, c)
		default:
			g.P(c, ".", fd.GoName, " = ", f.cloneExpr(fd, m+"."+fd.GoName))
		}
	}
	if len(ptrs) > 0 {
		f.pointerBlock(ptrs, m, c)
	}
	if len(kids) > 0 {
		f.kidBlock(mm, kids, m, c)
	}
	for _, o := range mm.Oneofs {
		if o.Desc.IsSynthetic() {
			continue
		}
		g.P("switch ", v, " := ", m, ".", o.GoName, ".(type) {")
		for _, fd := range o.Fields {
			wrapper := g.OneofWrapper(fd)
			g.P("case ", wrapper, ":")
			g.P("if ", v, " != nil {")
			if gen.IsMessage(fd) && f.local(fd.Message) {
				// The wrapper and the message in one block.
				b := g.Local("b")
				g.P(b, " := new(struct {")
				g.P("w ", wrapper[1:])
				g.P("m ", g.QualifiedGoIdent(fd.Message.GoIdent))
				g.P("})")
				g.P("if ", v, ".", fd.GoName, " != nil {")
				g.P(b, ".w.", fd.GoName, " = ", v, ".", fd.GoName, ".cloneTo(&", b, ".m)")
				g.P("}")
				g.P(c, ".", o.GoName, " = &", b, ".w")
			} else {
				g.P(c, ".", o.GoName, " = &", wrapper[1:], "{", fd.GoName, ": ", f.cloneExpr(fd, v+"."+fd.GoName), "}")
			}
			g.P("}")
		}
		g.P("}")
	}
	// The copy of unknown fields is out of line: see
	// fieldmap.CloneUnknownFields.
	g.P("if ", m, ".unknownFields != nil {")
	g.P(c, ".unknownFields = ", g.Fieldmap("CloneUnknownFields"), "(", m, ".unknownFields, ", g.Fieldmap("CloneUnknown"), ")")
	g.P("}")
	if ext {
		// Extensions are copied by reflection, with the same care for -0
		// as the fields: proto.Clone would drop it.
		g.P("if len(", m, ".extensionFields) > 0 {")
		g.P(g.Fieldmap("CloneExtensions"), "(", c, ", ", m, ")")
		g.P("}")
	}
	g.P("return ", c)
	g.P("}")
	g.P()
	for _, fn := range f.pending {
		fn()
	}
	f.pending = nil
}

// kids returns the singular sub-message fields of mm, outside oneofs, whose
// messages have a generated cloneTo in this package, when there are two
// or more: they share one block.
func (f *feature) kids(mm *gen.Message) []*protogen.Field {
	var out []*protogen.Field
	for _, fd := range mm.Fields {
		if gen.IsMessage(fd) && !fd.Desc.IsList() && !gen.InOneof(fd) && f.local(fd.Message) {
			out = append(out, fd)
		}
	}
	if len(out) < 2 {
		return nil
	}
	return out
}

// kidBlock copies the sub-messages kids of mm: into one block (a struct
// type declared after the method) when all of them are set, so that the
// block holds no unused space, else each on its own. Each sub-message's
// cloneTo is called once, with the block's slot or a new message as its
// destination, so that where the compiler inlines it its body is compiled
// into the method once, not once for each way of allocating.
func (f *feature) kidBlock(mm *gen.Message, kids []*protogen.Field, m, c string) {
	g := f.g
	cond := make([]string, len(kids))
	for i, fd := range kids {
		cond[i] = m + "." + fd.GoName + " != nil"
	}
	kb, x, d, typ := g.Local("kb"), g.Local("x"), g.Local("d"), f.kidType(mm)
	g.P("var ", kb, " *", typ)
	g.P("if ", strings.Join(cond, " && "), " {")
	g.P(kb, " = new(", typ, ")")
	g.P("}")
	for _, fd := range kids {
		elem := g.QualifiedGoIdent(fd.Message.GoIdent)
		g.P("if ", x, " := ", m, ".", fd.GoName, "; ", x, " != nil {")
		g.P("var ", d, " *", elem)
		g.P("if ", kb, " != nil {")
		g.P(d, " = &", kb, ".", fd.GoName)
		g.P("} else {")
		g.P(d, " = new(", elem, ")")
		g.P("}")
		g.P(c, ".", fd.GoName, " = ", x, ".cloneTo(", d, ")")
		g.P("}")
	}
	f.pending = append(f.pending, func() {
		g.P("// ", typ, " holds the sub-messages of a copy of a ", mm.Desc.Name(), " in one block.")
		g.P("type ", typ, " struct {")
		for _, fd := range kids {
			g.P(fd.GoName, " ", g.QualifiedGoIdent(fd.Message.GoIdent))
		}
		g.P("}")
		g.P()
	})
}

// kidType is the name of the block type of the sub-messages of mm.
func (f *feature) kidType(mm *gen.Message) string {
	return f.g.ShapeName(&gen.Shape{Message: mm.Message}, "kids")
}

// localList copies a list of messages of this package into one block.
func (f *feature) localList(fd *protogen.Field, m, c string) {
	g := f.g
	s, out, blk, i, v := g.Local("s"), g.Local("out"), g.Local("blk"), g.Local("i"), g.Local("v")
	elem := g.QualifiedGoIdent(fd.Message.GoIdent)
	g.P("if ", s, " := ", m, ".", fd.GoName, "; ", s, " != nil {")
	g.P(out, " := make([]*", elem, ", len(", s, "))")
	g.P(blk, " := make([]", elem, ", len(", s, "))")
	g.P("for ", i, ", ", v, " := range ", s, " {")
	g.P("if ", v, " != nil {")
	g.P(out, "[", i, "] = ", v, ".cloneTo(&", blk, "[", i, "])")
	g.P("}")
	g.P("}")
	g.P(c, ".", fd.GoName, " = ", out)
	g.P("}")
}

// localMap copies a map of messages of this package into one block.
func (f *feature) localMap(fd *protogen.Field, m, c string) {
	g := f.g
	s, out, blk, i, k, v := g.Local("s"), g.Local("out"), g.Local("blk"), g.Local("i"), g.Local("k"), g.Local("v")
	elem := g.QualifiedGoIdent(fd.Message.Fields[1].Message.GoIdent)
	g.P("if ", s, " := ", m, ".", fd.GoName, "; ", s, " != nil {")
	g.P(out, " := make(", g.FieldType(fd), ", len(", s, "))")
	g.P(blk, " := make([]", elem, ", len(", s, "))")
	g.P(i, " := 0")
	g.P("for ", k, ", ", v, " := range ", s, " {")
	g.P("if ", v, " == nil {")
	g.P(out, "[", k, "] = nil")
	g.P("continue")
	g.P("}")
	g.P(out, "[", k, "] = ", v, ".cloneTo(&", blk, "[", i, "])")
	g.P(i, "++")
	g.P("}")
	g.P(c, ".", fd.GoName, " = ", out)
	g.P("}")
}

// pointerBlock copies the explicit-presence scalars ptrs into one block,
// allocated only when one of them is set.
func (f *feature) pointerBlock(ptrs []*protogen.Field, m, c string) {
	g := f.g
	blk := g.Local("blk")
	cond := ""
	for i, fd := range ptrs {
		if i > 0 {
			cond += " || "
		}
		cond += m + "." + fd.GoName + " != nil"
	}
	g.P("if ", cond, " {")
	g.P(blk, " := new(struct {")
	for _, fd := range ptrs {
		g.P(fd.GoName, " ", g.ElemType(fd))
	}
	g.P("})")
	for _, fd := range ptrs {
		g.P("if ", m, ".", fd.GoName, " != nil {")
		g.P(blk, ".", fd.GoName, " = *", m, ".", fd.GoName)
		g.P(c, ".", fd.GoName, " = &", blk, ".", fd.GoName)
		g.P("}")
	}
	g.P("}")
}
