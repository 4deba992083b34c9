// Package copyin is the "copyin" feature of protoc-gen-go-edgekit: for every
// message T with an open Go struct it generates
//
//	func (m *T) CopyInFields(src *T, fm *fieldmap.FieldMap) int
//
// as docs/field-flags.md defines it. CopyInFields binds fm to T's schema
// (fieldmap.FieldMap.Bind, which panics on a map of another message) and
// calls the copy code of T's flag layout with the number of its first
// flag. The copy code of each layout (gen.Shape) is emitted once, as an
// unexported method of its message (or, for messages this file cannot add
// methods to, a function private to the file), and queries the map by flag
// number: a parent calls a child's code with the number of the child's
// first flag, so the generated code grows with the number of message
// types, not with the number of flags. A nil src sub-message reads as
// empty; lists and maps are copied as units, with the add and remove list
// actions where the map sets them and the schema allows them. Values are
// compared and copied with the shared value expressions of package gen;
// a whole message field, lists and maps of messages go through shared
// fieldmap helpers (CopyMessage, CopyMessageList, CopyMessageMap) compiled
// once for every message type, so that they cost each field a call rather
// than a body. It uses no reflection and allocates only the copies it
// makes.
package copyin

import (
	"strconv"

	"google.golang.org/protobuf/compiler/protogen"

	"github.com/edgekit/edgekit/fieldmap"
	"github.com/edgekit/edgekit/gen"
)

func init() {
	gen.Register("copyin", func(g *gen.GeneratedFile) gen.Feature { return &feature{g: g} })
}

type feature struct {
	g       *gen.GeneratedFile
	emitted map[*gen.Shape]bool
	blocks  map[*protogen.Message]string // pointer block types emitted
	l       locals
}

// locals are the names of the parameters and locals of the generated code.
type locals struct {
	m, src, fm, at, n, pb, a, w, ok, d1, s1, sok, b, win, cw, x string
}

var _ gen.Feature = (*feature)(nil)

func (f *feature) GenerateFile(file *protogen.File) bool {
	g := f.g
	f.emitted = map[*gen.Shape]bool{}
	f.blocks = map[*protogen.Message]string{}
	f.l = locals{m: g.Local("m"), src: g.Local("src"), fm: g.Local("fm"), at: g.Local("at"), n: g.Local("n"),
		pb: g.Local("pb"), a: g.Local("a"), w: g.Local("w"), ok: g.Local("ok"), d1: g.Local("d1"),
		s1: g.Local("s1"), sok: g.Local("sok"), b: g.Local("b"), win: g.Local("win"), cw: g.Local("cw"), x: g.Local("x")}
	return g.EachMessage(file, "copyin", f.message)
}

func (f *feature) message(mm *gen.Message) {
	g, l := f.g, f.l
	name := mm.GoIdent.GoName
	schema := g.Schema(mm)
	g.P("// CopyInFields copies the fields of src flagged in fm into m and returns how many changed.")
	g.P("func (", l.m, " *", name, ") CopyInFields(", l.src, " *", name, ", ", l.fm, " *", g.Fieldmap("FieldMap"), ") int {")
	g.P("if ", l.b, " := ", l.fm, ".Bind(", schema, "); ", l.m, " != nil && ", l.b, " != nil {")
	g.P("return ", f.call(mm.Shape, l.m, l.src, l.b, "0", l.b+".FirstWindow()"))
	g.P("}")
	g.P("return 0")
	g.P("}")
	g.P()
	f.emit(mm.Shape)
}

// call returns the call of the copy code of shape s, win being the
// window of its flags.
func (f *feature) call(s *gen.Shape, d, src, fm, at, win string) string {
	name := f.g.MethodName(s, "copyin", "copyInAt")
	if f.g.Owns(s, "copyin") {
		return d + "." + name + "(" + src + ", " + fm + ", " + at + ", " + win + ")"
	}
	return name + "(" + d + ", " + src + ", " + fm + ", " + at + ", " + win + ")"
}

// emit emits the copy code of s and of the shapes below it that the file
// must emit, each once.
func (f *feature) emit(top *gen.Shape) {
	top.Walk(func(s *gen.Shape) bool {
		if f.emitted[s] {
			return false
		}
		if s != top && f.g.Owns(s, "copyin") && s.Message.Desc.ParentFile() != f.g.File.Desc {
			return false // a method of another file of the package
		}
		f.emitted[s] = true
		f.shape(s)
		return true
	})
}

// shape emits the copy code of one shape.
func (f *feature) shape(s *gen.Shape) {
	g, l := f.g, f.l
	typ := g.QualifiedGoIdent(s.Message.GoIdent)
	name := g.MethodName(s, "copyin", "copyInAt")
	block := f.block(s)
	g.P("// ", name, " is CopyInFields from flag number ", l.at, " of ", l.fm, "'s schema, ", l.win, " its window.")
	win := g.Fieldmap("Window")
	if g.Owns(s, "copyin") {
		g.P("func (", l.m, " *", typ, ") ", name, "(", l.src, " *", typ, ", ", l.fm, " *", g.Fieldmap("FieldMap"), ", ", l.at, " int, ", l.win, " ", win, ") (", l.n, " int) {")
	} else {
		g.P("func ", name, "(", l.m, ", ", l.src, " *", typ, ", ", l.fm, " *", g.Fieldmap("FieldMap"), ", ", l.at, " int, ", l.win, " ", win, ") (", l.n, " int) {")
	}
	if len(s.Fields) == 0 {
		g.P("return 0")
		g.P("}")
		g.P()
		return
	}
	chunks := chunksOf(s)
	g.P("if ", l.src, " == nil {")
	g.P(l.src, " = new(", typ, ")")
	g.P("}")
	if block != "" {
		g.P("var ", l.pb, " *", block)
	}
	for _, c := range chunks {
		w := l.win
		if c.start > 0 {
			w = l.cw + strconv.Itoa(c.start/64)
			g.P(w, " := ", l.fm, ".Window(", l.at, "+", c.start, ")")
		}
		if len(c.fields) <= linearFields {
			for _, sf := range c.fields {
				f.field(sf, block, w, c.start, true)
			}
			continue
		}
		// Only the fields whose flag (or, for message, list and map
		// fields, a flag below it) is set run their case.
		g.P("for ", l.x, " := ", c.mask(w), "; ", l.x, " != 0; ", l.x, " &= ", l.x, " - 1 {")
		g.P("switch ", g.Ident("math/bits", "TrailingZeros64"), "(", l.x, ") {")
		for _, sf := range c.fields {
			g.P("case ", sf.Off-c.start, ":")
			f.field(sf, block, w, c.start, false)
		}
		g.P("}")
		g.P("}")
	}
	g.P("return ", l.n)
	g.P("}")
	g.P()
}

// linearFields is the most fields of a window tested one after the other:
// past it, a loop over the set bits of the window runs only the fields
// flagged, which costs more per field but nothing for those not flagged.
const linearFields = 8

// chunk is the fields of a shape whose flags lie in one window: numbers
// start to start+63 from the shape's first flag.
type chunk struct {
	start       int
	fields      []*gen.ShapeField
	cover, both uint64 // bits of all fields; of those copied from flags below them too
}

// chunksOf groups the fields of s by window.
func chunksOf(s *gen.Shape) []*chunk {
	var out []*chunk
	for _, sf := range s.Fields {
		start := sf.Off &^ 63
		if len(out) == 0 || out[len(out)-1].start != start {
			out = append(out, &chunk{start: start})
		}
		c := out[len(out)-1]
		c.fields = append(c.fields, sf)
		b := uint64(1) << (sf.Off - start)
		c.cover |= b
		if sf.Kind != fieldmap.KindScalar {
			c.both |= b
		}
	}
	return out
}

// mask returns the expression of the bits of the chunk's fields that
// select something in window w.
func (c *chunk) mask(w string) string {
	cov := w + ".Cover&" + hex(c.cover)
	if c.both == 0 {
		return cov
	}
	return cov + " | " + w + ".Below&" + hex(c.both)
}

func hex(v uint64) string { return "0x" + strconv.FormatUint(v, 16) }

// block emits, once per message, the struct type holding every
// explicit-presence scalar of s's message, when there are at least two: a
// nil destination pointer is pointed into one such block (allocated on
// first use) rather than at an allocation of its own, as Clone does. It
// returns the type's name, or "".
func (f *feature) block(s *gen.Shape) string {
	if name, ok := f.blocks[s.Message]; ok {
		return name
	}
	var ptrs []*protogen.Field
	for _, sf := range s.Fields {
		if gen.IsPointerScalar(sf.Field) {
			ptrs = append(ptrs, sf.Field)
		}
	}
	name := ""
	if len(ptrs) >= 2 {
		name = f.g.ShapeName(&gen.Shape{Message: s.Message}, "ptrs")
		f.g.P("// ", name, " holds the explicit-presence scalars CopyInFields sets in a ", s.Message.Desc.Name(), ".")
		f.g.P("type ", name, " struct {")
		for _, fd := range ptrs {
			f.g.P(slot(fd), " ", f.g.ElemType(fd))
		}
		f.g.P("}")
		f.g.P()
	}
	f.blocks[s.Message] = name
	return name
}

func slot(fd *protogen.Field) string { return "f" + strconv.Itoa(int(fd.Desc.Number())) }

// id returns the expression of the number of the flag of sf.
func (f *feature) id(sf *gen.ShapeField) string {
	if sf.Off == 0 {
		return f.l.at
	}
	return f.l.at + "+" + strconv.Itoa(sf.Off)
}

// field emits the code of one field, w being the window holding its flag
// from number start of the shape. Tested, it first tests the field's bits
// in w; else it is the case of a switch that runs only when they select
// something.
func (f *feature) field(sf *gen.ShapeField, block, w string, start int, tested bool) {
	g, l := f.g, f.l
	fd, id := sf.Field, f.id(sf)
	bit := "(1<<" + strconv.Itoa(sf.Off-start) + ")"
	cover, either := w+".Cover&"+bit+" != 0", "("+w+".Cover|"+w+".Below)&"+bit+" != 0"
	switch sf.Kind {
	case fieldmap.KindScalar:
		if gen.InOneof(fd) {
			if tested {
				g.P("if ", cover, " {")
			}
			f.oneofUnit(fd)
			if tested {
				g.P("}")
			}
			return
		}
		dv, sv := l.m+"."+fd.GoName, l.src+"."+fd.GoName
		if gen.IsMessage(fd) {
			// A message copied as a unit (a well-known type): one call.
			if tested {
				g.P("if ", cover, " {")
			}
			f.copyMessage(fd, dv, sv)
			if tested {
				g.P("}")
			}
			return
		}
		if g.SameExpr(fd, dv, sv) == dv+" == "+sv && !(block != "" && gen.IsPointerScalar(fd)) {
			// A comparable value.
			if tested {
				g.P("if ", cover, " && ", dv, " != ", sv, " {")
				g.P(dv, ", ", l.n, " = ", sv, ", ", l.n, "+1")
				g.P("}")
			} else {
				g.P(l.n, " += ", g.Fieldmap("Set"), "(&", dv, ", ", sv, ")")
			}
			return
		}
		cond := notExpr(g.SameExpr(fd, dv, sv), dv, sv)
		if tested {
			cond = cover + " && " + cond
		}
		g.P("if ", cond, " {")
		if block != "" && gen.IsPointerScalar(fd) {
			g.P("if ", sv, " == nil {")
			g.P(dv, " = nil")
			g.P("} else {")
			g.P("if ", l.pb, " == nil {")
			g.P(l.pb, " = new(", block, ")")
			g.P("}")
			g.P(l.pb, ".", slot(fd), " = *", sv)
			g.P(dv, " = &", l.pb, ".", slot(fd))
			g.P("}")
		} else {
			g.P(dv, " = ", g.CloneExpr(fd, sv))
		}
		g.P(l.n, "++")
		g.P("}")
	case fieldmap.KindList, fieldmap.KindMap:
		dv, sv := l.m+"."+fd.GoName, l.src+"."+fd.GoName
		if tested {
			g.P("if ", either, " {")
		}
		kind := "List"
		if fd.Desc.IsMap() {
			kind = "Map"
		}
		act := l.fm + ".ListActionAt(" + id + ")"
		switch eq, clone := g.ElemEqualFunc(fd), g.ElemCloneFunc(fd); {
		case eq == "" && clone == "":
			g.P(l.n, " += ", g.Fieldmap("Copy"+kind), "(", act, ", &", dv, ", ", sv, ")")
		case gen.IsMessage(gen.ValueField(fd)):
			g.P(l.n, " += ", g.Fieldmap("CopyMessage"+kind), "(", act, ", &", dv, ", ", sv, ")")
		default:
			if clone == "" {
				clone = "nil"
			}
			g.P(l.n, " += ", g.Fieldmap("Copy"+kind+"Func"), "(", act, ", &", dv, ", ", sv, ", ", eq, ", ", clone, ")")
		}
		if tested {
			g.P("}")
		}
	case fieldmap.KindMessage:
		g.P("if ", cover, " {")
		if gen.InOneof(fd) {
			f.oneofUnit(fd)
			if tested {
				g.P("} else if ", w, ".Below&", bit, " != 0 {")
			} else {
				g.P("} else {")
			}
			f.recurse(sf, w, start)
			g.P("}")
			return
		}
		dv, sv := l.m+"."+fd.GoName, l.src+"."+fd.GoName
		f.copyMessage(fd, dv, sv)
		below := "} else if " + dv + " != nil || " + sv + " != nil {"
		if tested {
			below = "} else if " + w + ".Below&" + bit + " != 0 && (" + dv + " != nil || " + sv + " != nil) {"
		}
		g.P(below)
		f.recurse(sf, w, start)
		g.P("}")
	}
}

// copyMessage emits the copy of singular message field fd as a whole, dv
// and sv being the destination and source fields: one call of a shared
// helper with the message type's Equal and Clone, not their bodies at
// every field.
func (f *feature) copyMessage(fd *protogen.Field, dv, sv string) {
	g, l := f.g, f.l
	// The well-known types' helper, or the message's Clone: asking for
	// the latter imports the message's package, unused with the former.
	var clone string
	if name := gen.WellKnownHelper(fd.Message); name != "" {
		clone = g.Fieldmap("Clone" + name)
	} else {
		clone = g.ElemCloneFunc(fd)
	}
	g.P(l.n, " += ", g.Fieldmap("CopyMessage"), "(&", dv, ", ", sv, ", ", g.MessageEqualFunc(fd.Message), ", ", clone, ")")
}

// oneofUnit emits the copy of oneof member fd as one value, with presence.
func (f *feature) oneofUnit(fd *protogen.Field) {
	g, l := f.g, f.l
	oneof, wrap := fd.Oneof.GoName, g.OneofWrapper(fd)
	sv, dv := l.s1+"."+fd.GoName, l.d1+"."+fd.GoName
	g.P("if ", l.s1, ", ", l.ok, " := ", l.src, ".", oneof, ".(", wrap, "); ", l.ok, " && ", l.s1, " != nil {")
	g.P("if ", l.d1, ", ", l.ok, " := ", l.m, ".", oneof, ".(", wrap, "); !", l.ok, " || ", l.d1, " == nil || ", notExpr(g.SameExpr(fd, dv, sv), dv, sv), " {")
	g.P(l.m, ".", oneof, " = &", g.QualifiedGoIdent(fd.GoIdent), "{", fd.GoName, ": ", g.CloneExpr(fd, sv), "}")
	g.P(l.n, "++")
	g.P("}")
	g.P("} else if ", l.d1, ", ", l.ok, " := ", l.m, ".", oneof, ".(", wrap, "); ", l.ok, " && ", l.d1, " != nil {")
	g.P(l.m, ".", oneof, " = nil")
	g.P(l.n, "++")
	g.P("}")
}

// recurse emits the copy of the flagged fields below message field sf when
// only flags below it are set, w being the window holding its flag from
// number start of the shape.
func (f *feature) recurse(sf *gen.ShapeField, w string, start int) {
	g, l := f.g, f.l
	fd := sf.Field
	typ := g.QualifiedGoIdent(fd.Message.GoIdent)
	next := l.at + "+" + strconv.Itoa(sf.Off+1)
	win := f.subWindow(sf, w, start)
	if !gen.InOneof(fd) {
		// The caller tested that m or src holds the message.
		dv, sv := l.m+"."+fd.GoName, l.src+"."+fd.GoName
		g.P("if ", dv, " == nil {")
		g.P(dv, ", ", l.n, " = new(", typ, "), ", l.n, "+1")
		g.P("}")
		g.P(l.n, " += ", f.call(sf.Sub, dv, sv, l.fm, next, win))
		return
	}
	oneof, wrap := fd.Oneof.GoName, g.OneofWrapper(fd)
	g.P("var ", l.s1, " *", typ)
	g.P(l.sok, " := false")
	g.P("if ", l.w, ", ", l.ok, " := ", l.src, ".", oneof, ".(", wrap, "); ", l.ok, " && ", l.w, " != nil {")
	g.P(l.s1, ", ", l.sok, " = ", l.w, ".", fd.GoName, ", true")
	g.P("}")
	g.P("var ", l.d1, " *", typ)
	g.P("if ", l.w, ", ", l.ok, " := ", l.m, ".", oneof, ".(", wrap, "); ", l.ok, " && ", l.w, " != nil {")
	g.P("if ", l.w, ".", fd.GoName, " == nil {")
	g.P(l.w, ".", fd.GoName, " = new(", typ, ")")
	g.P("}")
	g.P(l.d1, " = ", l.w, ".", fd.GoName)
	g.P("} else if ", l.sok, " {")
	g.P(l.d1, " = new(", typ, ")")
	g.P(l.m, ".", oneof, " = &", g.QualifiedGoIdent(fd.GoIdent), "{", fd.GoName, ": ", l.d1, "}")
	g.P(l.n, "++")
	g.P("}")
	g.P("if ", l.d1, " != nil {")
	g.P(l.n, " += ", f.call(sf.Sub, l.d1, l.s1, l.fm, next, win))
	g.P("}")
}

// subWindow returns the expression of the window of the flags below
// message field sf: the part of window w (flags from number start of the
// shape) past the field's flag when all of them (or the first 64) are in
// it, else read from the map.
func (f *feature) subWindow(sf *gen.ShapeField, w string, start int) string {
	l := f.l
	k := sf.Off + 1 - start
	if k+min(sf.Sub.Size, 64) <= 64 {
		return w + ".Shift(" + strconv.Itoa(k) + ")"
	}
	return l.fm + ".Window(" + l.at + "+" + strconv.Itoa(sf.Off+1) + ")"
}

// action returns the call applying the list action of fm to a list or map
// field, dst being the address of the destination field.
func (f *feature) action(fd *protogen.Field, dst, src string) string {
	g, l := f.g, f.l
	kind := "List"
	if fd.Desc.IsMap() {
		kind = "Map"
	}
	eq, clone := g.ElemEqualFunc(fd), g.ElemCloneFunc(fd)
	if eq == "" && clone == "" {
		return g.Fieldmap("Apply"+kind) + "(" + l.a + ", " + dst + ", " + src + ")"
	}
	if eq == "" {
		eq = "func(x, y " + g.ElemType(fd) + ") bool { return x == y }"
	}
	if clone == "" {
		clone = "nil"
	}
	return g.Fieldmap("Apply"+kind+"Func") + "(" + l.a + ", " + dst + ", " + src + ", " + eq + ", " + clone + ")"
}

// notExpr negates a boolean expression from gen.EqualExpr / gen.SameExpr.
func notExpr(expr, a, b string) string {
	if expr == a+" == "+b {
		return a + " != " + b
	}
	return "!" + expr
}
