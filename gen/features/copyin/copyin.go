// Package copyin is the "copyin" feature of protoc-gen-go-edgekit: for every
// message T with an open Go struct it generates
//
//	func (m *T) CopyInFields(src *T, fm *fieldmap.FieldMap) int
//
// as docs/field-flags.md defines it. The method is flat code that walks the
// flag tree of T: every flag is a string literal tested with fm.Has or
// fm.HasOrHasChild, sub-messages are entered inline (a nil src sub-message
// reads as empty, through nil-safe getters or nil-guarded locals), lists and
// maps are copied as units (with the add and remove list actions when T
// enables them, through the fieldmap AddList/RemoveList/AddMap/RemoveMap
// helpers), and values are compared and copied with the shared value
// expressions of package gen. It uses no reflection and allocates only the
// copies it makes.
package copyin

import (
	"strconv"

	"google.golang.org/protobuf/compiler/protogen"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/edgekit/edgekit/fieldmap"
	"github.com/edgekit/edgekit/gen"
)

func init() {
	gen.Register("copyin", func(g *gen.GeneratedFile) gen.Feature { return &feature{g: g} })
}

type feature struct {
	g  *gen.GeneratedFile
	mm *gen.Message // the top-level message being generated
	// blocks maps a nesting depth to the pointer block of the message being
	// filled at that depth (see ptrBlock).
	blocks map[int]*ptrBlock
}

// ptrBlock is one allocation holding every explicit-presence scalar of a
// message that CopyInFields may set: a nil destination pointer is pointed
// into the block (allocated on first use) rather than at an allocation of
// its own, as Clone does, so that filling a fresh message costs one
// allocation for all its optional scalars.
type ptrBlock struct {
	name  string                     // the local holding the block
	typ   string                     // its struct type
	slots map[*protogen.Field]string // field -> slot name
}

// declareBlock emits the block local of the message filled at depth, when
// flags among its fields name explicit-presence scalars.
func (f *feature) declareBlock(flags []*gen.Flag, depth int) {
	delete(f.blocks, depth)
	b := &ptrBlock{name: "pb" + strconv.Itoa(depth), slots: map[*protogen.Field]string{}}
	typ := "struct{"
	for _, fl := range flags {
		if fl.Kind != fieldmap.KindScalar || !gen.IsPointerScalar(fl.Field) {
			continue
		}
		slot := "f" + strconv.Itoa(int(fl.Field.Desc.Number()))
		b.slots[fl.Field] = slot
		typ += slot + " " + f.g.ElemType(fl.Field) + ";"
	}
	if len(b.slots) < 2 {
		return // one optional scalar: its own allocation is as cheap
	}
	b.typ = typ + "}"
	if f.blocks == nil {
		f.blocks = map[int]*ptrBlock{}
	}
	f.blocks[depth] = b
	f.g.P("var ", b.name, " *", b.typ)
}

var _ gen.Feature = (*feature)(nil)

func (f *feature) GenerateFile(file *protogen.File) bool {
	return f.g.EachMessage(file, "copyin", f.message)
}

func (f *feature) message(mm *gen.Message) {
	g := f.g
	f.mm = mm
	name := mm.GoIdent.GoName
	g.P("// CopyInFields copies the fields of src flagged in fm into m and returns how")
	g.P("// many fields changed, so that 0 means m is unchanged. A nil src reads as an")
	g.P("// empty message; a nil m does nothing and returns 0.")
	g.P("//")
	g.P("// The flag of a message field copies the whole sub-message; flags below it")
	g.P("// copy only those fields, creating the sub-message in m when src has one.")
	g.P("// Any flag at or below a repeated or map field copies the whole field")
	if mm.ListActions {
		g.P("// with the field's list action (replace, add or remove).")
	} else {
		g.P("// (replacing it: ", name, " does not enable list actions).")
	}
	g.P("// Fields with explicit presence and oneof members copy their presence. After")
	g.P("// the call m shares no pointer, slice or map with src.")
	g.P("func (m *", name, ") CopyInFields(src *", name, ", fm *", g.Fieldmap("FieldMap"), ") int {")
	if len(mm.Roots) == 0 {
		g.P("return 0")
		g.P("}")
		g.P()
		return
	}
	g.P("if m == nil || fm.Count() == 0 {")
	g.P("return 0")
	g.P("}")
	g.P("n := 0")
	f.declareBlock(mm.Roots, 0)
	for _, fl := range mm.Roots {
		f.flag(fl, "m", "src", 0)
	}
	g.P("return n")
	g.P("}")
	g.P()
}

// flag emits the code for one flag: d is the (non-nil) destination message
// holding the field, s the possibly nil source message, depth the nesting
// level of d (0 for the receiver), used to name locals.
func (f *feature) flag(fl *gen.Flag, d, s string, depth int) {
	g := f.g
	q := strconv.Quote(fl.Flag)
	switch fl.Kind {
	case fieldmap.KindScalar:
		g.P("if ", has(depth), "(", q, ") {")
		f.unit(fl.Field, d, s, depth)
		g.P("}")
	case fieldmap.KindList, fieldmap.KindMap:
		g.P("if ", hasOrChild(depth), "(", q, ") {")
		if f.mm.ListActions {
			g.P("switch fm.ListAction(", q, ") {")
			g.P("case ", g.Fieldmap("Add"), ":")
			f.action(fl.Field, d, s, "Add")
			g.P("case ", g.Fieldmap("Remove"), ":")
			f.action(fl.Field, d, s, "Remove")
			g.P("default:")
			f.replace(fl.Field, d, s, depth)
			g.P("}")
		} else {
			f.replace(fl.Field, d, s, depth)
		}
		g.P("}")
	case fieldmap.KindMessage:
		g.P("if ", has(depth), "(", q, ") {")
		f.unit(fl.Field, d, s, depth)
		// Has was false: HasOrHasChild reduces to HasChild.
		g.P("} else if fm.HasChild(", q, ") {")
		f.recurse(fl, d, s, depth)
		g.P("}")
	}
}

// has returns the FieldMap method that tests a flag at depth: below the
// top level, code runs only when Has was false for the parent message flag,
// so no ancestor is set and testing the flag itself is enough.
func has(depth int) string {
	if depth == 0 {
		return "fm.Has"
	}
	return "fm.IsSet"
}

// hasOrChild is has for HasOrHasChild.
func hasOrChild(depth int) string {
	if depth == 0 {
		return "fm.HasOrHasChild"
	}
	return "fm.IsSetOrHasChild"
}

// guarded reports whether field fd must be read from a possibly nil message
// through a nil check rather than its getter: explicit-presence scalars and
// bytes, whose getters return the value (or the default) rather than the
// presence.
func guarded(fd *protogen.Field) bool {
	return gen.IsPointerScalar(fd) ||
		(fd.Desc.Kind() == protoreflect.BytesKind && fd.Desc.HasPresence() && !gen.InOneof(fd) && !fd.Desc.IsList())
}

// readSrc emits, when needed, a local holding field fd of the possibly nil
// message s, and returns an expression for its value.
func (f *feature) readSrc(fd *protogen.Field, s, local string) string {
	if !guarded(fd) {
		return s + ".Get" + fd.GoName + "()"
	}
	f.g.P("var ", local, " ", f.g.FieldType(fd))
	f.g.P("if ", s, " != nil {")
	f.g.P(local, " = ", s, ".", fd.GoName)
	f.g.P("}")
	return local
}

// notExpr negates a boolean expression from gen.EqualExpr / gen.SameExpr.
func notExpr(expr, a, b string) string {
	if expr == a+" == "+b {
		return a + " != " + b
	}
	return "!" + expr
}

// unit emits the copy of a KindScalar field, or of a whole sub-message, with
// its presence.
func (f *feature) unit(fd *protogen.Field, d, s string, depth int) {
	g := f.g
	if gen.InOneof(fd) {
		oneof, wrap := fd.Oneof.GoName, g.OneofWrapper(fd)
		sw, dw := "sw"+strconv.Itoa(depth), "dw"+strconv.Itoa(depth)
		g.P("if ", sw, ", ok := ", s, ".Get", oneof, "().(", wrap, "); ok && ", sw, " != nil {")
		sv, dv := sw+"."+fd.GoName, dw+"."+fd.GoName
		g.P("if ", dw, ", ok := ", d, ".", oneof, ".(", wrap, "); !ok || ", dw, " == nil || ", notExpr(g.SameExpr(fd, dv, sv), dv, sv), " {")
		g.P(d, ".", oneof, " = &", g.QualifiedGoIdent(fd.GoIdent), "{", fd.GoName, ": ", g.CloneExpr(fd, sv), "}")
		g.P("n++")
		g.P("}")
		g.P("} else if ", dw, ", ok := ", d, ".", oneof, ".(", wrap, "); ok && ", dw, " != nil {")
		g.P(d, ".", oneof, " = nil")
		g.P("n++")
		g.P("}")
		return
	}
	sv := f.readSrc(fd, s, "sv"+strconv.Itoa(depth))
	dv := d + "." + fd.GoName
	g.P("if ", notExpr(g.SameExpr(fd, dv, sv), dv, sv), " {")
	if b := f.blocks[depth]; b != nil && b.slots[fd] != "" {
		g.P("if ", sv, " == nil {")
		g.P(dv, " = nil")
		g.P("} else {")
		g.P("if ", b.name, " == nil {")
		g.P(b.name, " = new(", b.typ, ")")
		g.P("}")
		g.P(b.name, ".", b.slots[fd], " = *", sv)
		g.P(dv, " = &", b.name, ".", b.slots[fd])
		g.P("}")
	} else {
		g.P(dv, " = ", g.CloneExpr(fd, sv))
	}
	g.P("n++")
	g.P("}")
}

// replace emits the Replace action of a list or map field: m's field becomes
// a deep copy of src's, nil when src's is empty.
func (f *feature) replace(fd *protogen.Field, d, s string, depth int) {
	g := f.g
	sv := "sv" + strconv.Itoa(depth)
	dv := d + "." + fd.GoName
	g.P("if ", sv, " := ", s, ".Get", fd.GoName, "(); ", notExpr(g.SameExpr(fd, dv, sv), dv, sv), " {")
	g.P("if len(", sv, ") == 0 {")
	g.P(dv, " = nil")
	g.P("} else {")
	g.P(dv, " = ", g.CloneExpr(fd, sv))
	g.P("}")
	g.P("n++")
	g.P("}")
}

// action emits the Add or Remove action of a list or map field.
func (f *feature) action(fd *protogen.Field, d, s, act string) {
	g := f.g
	kind := "List"
	if fd.Desc.IsMap() {
		kind = "Map"
	}
	args := "&" + d + "." + fd.GoName + ", " + s + ".Get" + fd.GoName + "()"
	eq, clone := g.ElemEqualFunc(fd), g.ElemCloneFunc(fd)
	switch {
	case act == "Remove" && kind == "Map":
		g.P("n += ", g.Fieldmap("RemoveMap"), "(", args, ")")
	case eq == "" && clone == "":
		g.P("n += ", g.Fieldmap(act+kind), "(", args, ")")
	case act == "Remove":
		if eq == "" {
			g.P("n += ", g.Fieldmap("RemoveList"), "(", args, ")")
		} else {
			g.P("n += ", g.Fieldmap("RemoveListFunc"), "(", args, ", ", eq, ")")
		}
	default:
		if eq == "" {
			// Comparable with == yet copied by a func: not produced by the
			// value helpers today, handled for completeness.
			eq = "func(a, b " + g.ElemType(fd) + ") bool { return a == b }"
		}
		if clone == "" {
			clone = "nil"
		}
		g.P("n += ", g.Fieldmap(act+kind+"Func"), "(", args, ", ", eq, ", ", clone, ")")
	}
}

// recurse emits the copy of the flagged fields below message field fl when
// only flags below it are set.
func (f *feature) recurse(fl *gen.Flag, d, s string, depth int) {
	g := f.g
	fd := fl.Field
	typ := g.QualifiedGoIdent(fd.Message.GoIdent)
	d1, s1 := "d"+strconv.Itoa(depth+1), "s"+strconv.Itoa(depth+1)
	if gen.InOneof(fd) {
		oneof, wrap := fd.Oneof.GoName, g.OneofWrapper(fd)
		sok := "sok" + strconv.Itoa(depth+1)
		g.P("var ", s1, " *", typ)
		g.P(sok, " := false")
		g.P("if w, ok := ", s, ".Get", oneof, "().(", wrap, "); ok && w != nil {")
		g.P(s1, ", ", sok, " = w.", fd.GoName, ", true")
		g.P("}")
		g.P("var ", d1, " *", typ)
		g.P("if w, ok := ", d, ".", oneof, ".(", wrap, "); ok && w != nil {")
		g.P("if w.", fd.GoName, " == nil {")
		g.P("w.", fd.GoName, " = &", typ, "{}")
		g.P("}")
		g.P(d1, " = w.", fd.GoName)
		g.P("} else if ", sok, " {")
		g.P(d1, " = &", typ, "{}")
		g.P(d, ".", oneof, " = &", g.QualifiedGoIdent(fd.GoIdent), "{", fd.GoName, ": ", d1, "}")
		g.P("n++")
		g.P("}")
		g.P("if ", d1, " != nil {")
	} else {
		g.P("if ", d1, ", ", s1, " := ", d, ".", fd.GoName, ", ", s, ".Get", fd.GoName, "(); ", d1, " != nil || ", s1, " != nil {")
		g.P("if ", d1, " == nil {")
		g.P(d1, " = &", typ, "{}")
		g.P(d, ".", fd.GoName, " = ", d1)
		g.P("n++")
		g.P("}")
	}
	f.declareBlock(fl.Children, depth+1)
	for _, c := range fl.Children {
		f.flag(c, d1, s1, depth+1)
	}
	delete(f.blocks, depth+1)
	g.P("}")
}
