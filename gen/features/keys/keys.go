// Package keys is the "keys" feature of protoc-gen-go-edgekit. For every
// message with a field marked (edgekit.options.v1.field).object_key it
// generates
//
//	func (m *T) GetKey() K                    // unless the key field is named key
//	func (m *T) GetKeyString() string
//	func ParseTKeyString(s string) (K, error)
//
// where K is the Go type of the key field (a pointer for a message key).
// GetKeyString renders the key in the format of the fieldmap package (see
// fieldmap.AppendKeyValue): for a message key "name=value" pairs in field
// number order, nested key messages flattened under dotted names, every
// field present; for a scalar key its value alone. The rendering depends on
// the key's value only: a nil key message or sub-message renders as an empty
// one and an unset optional field as its default, so the string is the key's
// identity. ParseTKeyString is its inverse and returns the key in canonical
// form: every sub-message allocated and every optional field set, so that
// ParseTKeyString(m.GetKeyString()) equals m.GetKey() up to those.
package keys

import (
	"slices"
	"strconv"

	"google.golang.org/protobuf/compiler/protogen"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/edgekit/edgekit/gen"
)

func init() {
	gen.Register("keys", func(g *gen.GeneratedFile) gen.Feature { return &feature{g: g} })
}

type feature struct {
	g *gen.GeneratedFile
}

var _ gen.Feature = (*feature)(nil)

func (f *feature) GenerateFile(file *protogen.File) bool {
	did := false
	f.g.EachMessage(file, "keys", func(mm *gen.Message) {
		if mm.Key != nil {
			f.message(mm)
			did = true
		}
	})
	return did
}

// part is one scalar of a key: the field path from the key message (empty
// for a scalar key) and its dotted proto name.
type part struct {
	path []*protogen.Field
	name string
}

func (p part) leaf() *protogen.Field { return p.path[len(p.path)-1] }

// getter returns the nil-safe expression reading p from k.
func (p part) getter(k string) string {
	for _, fd := range p.path {
		k += ".Get" + fd.GoName + "()"
	}
	return k
}

// target returns the assignable expression of p in k (every message on the
// way allocated).
func (p part) target(k string) string {
	for _, fd := range p.path {
		k += "." + fd.GoName
	}
	return k
}

// parts lists the scalars of key message msg, in field number order, depth
// first.
func parts(msg *protogen.Message, prefix []*protogen.Field, name string) []part {
	var out []part
	for _, fd := range sortedFields(msg) {
		path := append(slices.Clip(prefix), fd)
		n := name + string(fd.Desc.Name())
		if isMessage(fd) {
			out = append(out, parts(fd.Message, path, n+".")...)
			continue
		}
		out = append(out, part{path: path, name: n})
	}
	return out
}

func isMessage(fd *protogen.Field) bool {
	k := fd.Desc.Kind()
	return k == protoreflect.MessageKind || k == protoreflect.GroupKind
}

func (f *feature) message(mm *gen.Message) {
	g := f.g
	name := mm.GoIdent.GoName
	key := mm.Key
	keyType := g.ElemType(key)
	keyName := string(key.Desc.Name())
	full := strconv.Quote(string(mm.Desc.FullName()))
	parseName := parseFunc(mm)

	if key.GoName != "Key" {
		g.P("// GetKey returns the object key of m, its field ", keyName, ".")
		g.P("func (m *", name, ") GetKey() ", keyType, " {")
		g.P("return m.Get", key.GoName, "()")
		g.P("}")
		g.P()
	}

	// Render.
	var ps []part
	if isMessage(key) {
		ps = parts(key.Message, nil, "")
	} else {
		ps = []part{{}}
	}
	size := 0
	for _, p := range ps {
		size += len(p.name) + 2 + 8
	}
	g.P("// GetKeyString renders the object key of m (field ", keyName, ") as a string that")
	if isMessage(key) {
		g.P("// ", parseName, " reads back: \"name=value\" pairs of every key field, in")
		g.P("// field number order, values escaped as ", g.Fieldmap("AppendKeyValue"), " does.")
		g.P("// A nil key renders as an empty one.")
	} else if key.Desc.Kind() == protoreflect.StringKind {
		g.P("// ", parseName, " reads back, escaped as ", g.Fieldmap("AppendKeyValue"), " does.")
	} else {
		g.P("// ", parseName, " reads back.")
	}
	g.P("func (m *", name, ") GetKeyString() string {")
	switch {
	case isMessage(key) && len(ps) == 0:
		g.P("return \"\"")
	case isMessage(key):
		g.P("k := m.Get", key.GoName, "()")
		g.P("b := make([]byte, 0, ", size, ")")
		for i, p := range ps {
			sep := ","
			if i == 0 {
				sep = ""
			}
			g.P("b = append(b, ", strconv.Quote(sep+p.name+"="), "...)")
			f.render(p.leaf(), p.getter("k"))
		}
		g.P("return string(b)")
	default:
		g.P("var b []byte")
		f.render(key, "m.Get"+key.GoName+"()")
		g.P("return string(b)")
	}
	g.P("}")
	g.P()

	// Parse.
	zero := "nil"
	if !isMessage(key) {
		zero = zeroValue(key)
	}
	g.P("// ", parseName, " parses a string rendered by (*", name, ").GetKeyString")
	if isMessage(key) {
		g.P("// into a key. Fields may come in any order; a field left out is zero. The")
		g.P("// key has every sub-message allocated and every optional field set.")
	} else {
		g.P("// into a key.")
	}
	g.P("// The error is a *", g.Fieldmap("KeyStringError"), " matching ", g.Fieldmap("ErrBadKeyString"), ".")
	g.P("func ", parseName, "(s string) (", keyType, ", error) {")
	if isMessage(key) {
		g.P("k := ", allocExpr(g, key.Message))
		g.P("err := ", g.Fieldmap("ParseKeyFields"), "(", full, ", s, func(field, value string) error {")
		if len(ps) == 0 {
			g.P("return ", g.Fieldmap("UnknownKeyField"), "(field)")
		} else {
			g.P("switch field {")
			for _, p := range ps {
				g.P("case ", strconv.Quote(p.name), ":")
				f.parse(p.leaf(), p.target("k"))
			}
			g.P("default:")
			g.P("return ", g.Fieldmap("UnknownKeyField"), "(field)")
			g.P("}")
			g.P("return nil")
		}
		g.P("})")
		g.P("if err != nil {")
		g.P("return nil, err")
		g.P("}")
		for _, p := range ps {
			if gen.IsPointerScalar(p.leaf()) {
				parent := part{path: p.path[:len(p.path)-1]}
				g.P("if ", p.target("k"), " == nil {")
				g.P("x := ", parent.target("k"), ".Get", p.leaf().GoName, "()")
				g.P(p.target("k"), " = &x")
				g.P("}")
			}
		}
		g.P("return k, nil")
	} else {
		g.P("var k ", keyType)
		g.P("value, err := ", g.Fieldmap("UnescapeKeyValue"), "(s)")
		g.P("if err == nil {")
		g.P("err = func() error {")
		f.parse(key, "k")
		g.P("return nil")
		g.P("}()")
		g.P("}")
		g.P("if err != nil {")
		g.P("return ", zero, ", &", g.Fieldmap("KeyStringError"), "{Message: ", full, ", Err: err}")
		g.P("}")
		g.P("return k, nil")
	}
	g.P("}")
	g.P()
}

// render emits the appending to b of x, a value of scalar field fd.
func (f *feature) render(fd *protogen.Field, x string) {
	g := f.g
	strconvIdent := func(n string) string { return g.Ident(gen.StrconvPackage, n) }
	switch fd.Desc.Kind() {
	case protoreflect.StringKind:
		g.P("b = ", g.Fieldmap("AppendKeyValue"), "(b, ", x, ")")
	case protoreflect.BoolKind:
		g.P("b = ", strconvIdent("AppendBool"), "(b, ", x, ")")
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind,
		protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		g.P("b = ", strconvIdent("AppendInt"), "(b, int64(", x, "), 10)")
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		g.P("b = ", strconvIdent("AppendUint"), "(b, uint64(", x, "), 10)")
	case protoreflect.FloatKind:
		g.P("b = ", strconvIdent("AppendFloat"), "(b, float64(", x, "), 'g', -1, 32)")
	case protoreflect.DoubleKind:
		g.P("b = ", strconvIdent("AppendFloat"), "(b, ", x, ", 'g', -1, 64)")
	case protoreflect.EnumKind:
		g.P("switch v := ", x, "; v {")
		seen := map[protoreflect.EnumNumber]bool{}
		for _, ev := range fd.Enum.Values {
			if seen[ev.Desc.Number()] {
				continue // an alias: the first name wins
			}
			seen[ev.Desc.Number()] = true
			g.P("case ", g.QualifiedGoIdent(ev.GoIdent), ":")
			g.P("b = append(b, ", strconv.Quote(string(ev.Desc.Name())), "...)")
		}
		g.P("default:")
		g.P("b = ", strconvIdent("AppendInt"), "(b, int64(v), 10)")
		g.P("}")
	default:
		panic("keys: unsupported key field kind " + fd.Desc.Kind().String()) // analysis rejects it
	}
}

// parse emits statements, inside a func returning error, that parse the
// string variable value as scalar field fd and store it in target.
func (f *feature) parse(fd *protogen.Field, target string) {
	g := f.g
	var expr string
	switch fd.Desc.Kind() {
	case protoreflect.StringKind:
		expr = "value"
		if requiresUTF8(fd.Desc) {
			g.P("x, err := ", g.Fieldmap("ParseKeyUTF8"), "(value)")
			expr = "x"
		}
	case protoreflect.BoolKind:
		g.P("x, err := ", g.Fieldmap("ParseKeyBool"), "(value)")
		expr = "x"
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		g.P("n, err := ", g.Fieldmap("ParseKeyInt"), "(value, 32)")
		expr = "int32(n)"
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		g.P("n, err := ", g.Fieldmap("ParseKeyInt"), "(value, 64)")
		expr = "n"
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		g.P("n, err := ", g.Fieldmap("ParseKeyUint"), "(value, 32)")
		expr = "uint32(n)"
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		g.P("n, err := ", g.Fieldmap("ParseKeyUint"), "(value, 64)")
		expr = "n"
	case protoreflect.FloatKind:
		g.P("n, err := ", g.Fieldmap("ParseKeyFloat"), "(value, 32)")
		expr = "float32(n)"
	case protoreflect.DoubleKind:
		g.P("n, err := ", g.Fieldmap("ParseKeyFloat"), "(value, 64)")
		expr = "n"
	case protoreflect.EnumKind:
		enumType := g.QualifiedGoIdent(fd.Enum.GoIdent)
		g.P("var x ", enumType)
		g.P("switch value {")
		for _, ev := range fd.Enum.Values {
			g.P("case ", strconv.Quote(string(ev.Desc.Name())), ":")
			g.P("x = ", g.QualifiedGoIdent(ev.GoIdent))
		}
		g.P("default:")
		g.P("n, err := ", g.Fieldmap("ParseKeyEnumNumber"), "(value, ", strconv.Quote(string(fd.Enum.Desc.FullName())), ")")
		g.P("if err != nil {")
		g.P("return err")
		g.P("}")
		g.P("x = ", enumType, "(n)")
		g.P("}")
		expr = "x"
	default:
		panic("keys: unsupported key field kind " + fd.Desc.Kind().String()) // analysis rejects it
	}
	switch {
	case fd.Desc.Kind() == protoreflect.EnumKind, expr == "value":
	default:
		g.P("if err != nil {")
		g.P("return err")
		g.P("}")
	}
	if gen.IsPointerScalar(fd) && target != "k" {
		if expr != "x" {
			g.P("x := ", expr)
		}
		g.P(target, " = &x")
		return
	}
	g.P(target, " = ", expr)
}

// allocExpr returns a composite literal of key message msg with every
// sub-message allocated.
func allocExpr(g *gen.GeneratedFile, msg *protogen.Message) string {
	s := "&" + g.QualifiedGoIdent(msg.GoIdent) + "{"
	first := true
	for _, fd := range sortedFields(msg) {
		if !isMessage(fd) {
			continue
		}
		if !first {
			s += ", "
		}
		first = false
		s += fd.GoName + ": " + allocExpr(g, fd.Message)
	}
	return s + "}"
}

// zeroValue is the Go zero value of scalar field fd.
func zeroValue(fd *protogen.Field) string {
	switch fd.Desc.Kind() {
	case protoreflect.StringKind:
		return `""`
	case protoreflect.BoolKind:
		return "false"
	}
	return "0"
}

func sortedFields(msg *protogen.Message) []*protogen.Field {
	fs := slices.Clone(msg.Fields)
	slices.SortFunc(fs, func(a, b *protogen.Field) int { return int(a.Desc.Number()) - int(b.Desc.Number()) })
	return fs
}
