// Package redact is the "redact" feature of protoc-gen-go-edgekit. For
// every message it generates
//
//	func (m *T) Redact()
//	func (m *T) Redacted() *T
//
// Redact clears every field marked with the standard option
// debug_redact = true, at every depth: through singular message fields,
// oneof members, list elements and map values. A cleared field gets its
// zero value (nil for pointers, bytes, lists, maps and messages); a redacted
// oneof member that is set clears the whole oneof. Redacted returns a
// redacted deep copy and leaves m untouched.
//
// Redact descends into a sub-message type of the same Go package only when
// that type can hold a redacted field; into messages of other packages
// always (their redacted fields may change without this file being
// regenerated), through fieldmap.Redact, which calls their generated Redact
// when they have one; never into well-known types.
package redact

import (
	"slices"

	"google.golang.org/protobuf/compiler/protogen"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/edgekit/edgekit/gen"
)

func init() {
	gen.Register("redact", func(g *gen.GeneratedFile) gen.Feature { return &feature{g: g} })
}

type feature struct {
	g *gen.GeneratedFile
}

var _ gen.Feature = (*feature)(nil)

func (f *feature) GenerateFile(file *protogen.File) bool {
	return f.g.EachMessage(file, "redact", f.message)
}

func (f *feature) message(mm *gen.Message) {
	g := f.g
	name := mm.GoIdent.GoName

	if !holdsRedacted(mm.Message, map[protoreflect.FullName]bool{}) {
		// Nothing to clear, at any depth.
		g.P("// Redact clears the fields of m marked debug_redact: ", name, " has none.")
		g.P("func (m *", name, ") Redact() {}")
		g.P()
		g.P("// Redacted returns a copy of m with its debug_redact fields cleared: a Clone.")
		g.P("func (m *", name, ") Redacted() *", name, " { return ", f.clone(mm, "m"), " }")
		g.P()
		return
	}
	g.P("// Redact clears every field of m marked debug_redact, at every depth.")
	g.P("func (m *", name, ") Redact() {")
	g.P("if m == nil {")
	g.P("return")
	g.P("}")
	for _, fd := range sortedFields(mm.Message) {
		if gen.IsRedacted(fd) {
			f.clear(fd)
		} else {
			f.descend(fd)
		}
	}
	g.P("}")
	g.P()

	g.P("// Redacted returns a deep copy of m with its debug_redact fields cleared.")
	g.P("func (m *", name, ") Redacted() *", name, " {")
	g.P("if m == nil {")
	g.P("return nil")
	g.P("}")
	g.P("c := ", f.clone(mm, "m"))
	g.P("c.Redact()")
	g.P("return c")
	g.P("}")
	g.P()
}

// clone returns the expression of a deep copy of m, a message of type mm.
func (f *feature) clone(mm *gen.Message, m string) string {
	if f.g.Model.Generates(mm.Message, "clone") {
		return m + ".Clone()"
	}
	return f.g.Fieldmap("Clone") + "(" + m + ")"
}

// clear emits the clearing of redacted field fd.
func (f *feature) clear(fd *protogen.Field) {
	g := f.g
	if gen.InOneof(fd) {
		g.P("if _, ok := m.", fd.Oneof.GoName, ".(", g.OneofWrapper(fd), "); ok {")
		g.P("m.", fd.Oneof.GoName, " = nil")
		g.P("}")
		return
	}
	d := fd.Desc
	zero := "nil"
	if !d.IsList() && !d.IsMap() && !gen.IsPointerScalar(fd) {
		switch d.Kind() {
		case protoreflect.BoolKind:
			zero = "false"
		case protoreflect.StringKind:
			zero = `""`
		case protoreflect.BytesKind, protoreflect.MessageKind, protoreflect.GroupKind:
			zero = "nil"
		default:
			zero = "0"
		}
	}
	g.P("m.", fd.GoName, " = ", zero)
}

// descend emits the redaction of the sub-messages held by fd, when their
// type can hold redacted fields.
func (f *feature) descend(fd *protogen.Field) {
	g := f.g
	d := fd.Desc
	v := fd
	if d.IsMap() {
		v = fd.Message.Fields[1]
	}
	if k := v.Desc.Kind(); k != protoreflect.MessageKind && k != protoreflect.GroupKind {
		return
	}
	if !f.descends(v.Message) {
		return
	}
	call := func(x string) string {
		if g.Model.Generates(v.Message, "redact") {
			return x + ".Redact()"
		}
		return g.Fieldmap("Redact") + "(" + x + ")"
	}
	switch {
	case d.IsMap():
		g.P("for _, v := range m.", fd.GoName, " {")
		g.P(call("v"))
		g.P("}")
	case d.IsList():
		g.P("for _, v := range m.", fd.GoName, " {")
		g.P(call("v"))
		g.P("}")
	case gen.InOneof(fd):
		g.P("if x, ok := m.", fd.Oneof.GoName, ".(", g.OneofWrapper(fd), "); ok {")
		g.P(call("x." + fd.GoName))
		g.P("}")
	default:
		g.P(call("m." + fd.GoName))
	}
}

// descends reports whether Redact descends into sub-messages of type msg.
func (f *feature) descends(msg *protogen.Message) bool {
	if gen.IsWellKnown(msg) {
		return false
	}
	if msg.GoIdent.GoImportPath != f.g.File.GoImportPath {
		return true
	}
	return holdsRedacted(msg, map[protoreflect.FullName]bool{})
}

// holdsRedacted reports whether a message of type msg can hold a redacted
// field at any depth.
func holdsRedacted(msg *protogen.Message, seen map[protoreflect.FullName]bool) bool {
	if seen[msg.Desc.FullName()] {
		return false
	}
	seen[msg.Desc.FullName()] = true
	for _, fd := range msg.Fields {
		if gen.IsRedacted(fd) {
			return true
		}
		v := fd
		if fd.Desc.IsMap() {
			v = fd.Message.Fields[1]
		}
		if k := v.Desc.Kind(); (k == protoreflect.MessageKind || k == protoreflect.GroupKind) && !gen.IsWellKnown(v.Message) {
			if v.Message.GoIdent.GoImportPath != msg.GoIdent.GoImportPath || holdsRedacted(v.Message, seen) {
				return true
			}
		}
	}
	return false
}

func sortedFields(msg *protogen.Message) []*protogen.Field {
	fs := slices.Clone(msg.Fields)
	slices.SortFunc(fs, func(a, b *protogen.Field) int { return int(a.Desc.Number()) - int(b.Desc.Number()) })
	return fs
}
