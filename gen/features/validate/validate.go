// Package validate is the "validate" feature of protoc-gen-go-edgekit. For
// every message it generates
//
//	func (m *T) ValidateEnums() error
//	func (m *T) ValidateFields(fm *fieldmap.FieldMap) error
//
// ValidateEnums returns a *fieldmap.InvalidEnumError for the first enum
// value held anywhere in m (fields by number, depth first; list elements by
// index; map entries by key) that its enum does not define. Each enum's
// defined numbers are compiled into range comparisons, so the check needs
// no reflection and allocates nothing unless it fails. Closed enums are
// checked too: a Go struct can hold any number in a closed enum field even
// though decoding never stores one there. Sub-messages are validated by
// their generated method when the same package generates one, else through
// fieldmap.ValidateEnumsAt; the error is re-rooted at the message
// ValidateEnums was called on. Recursion into a sub-message type of the same
// package is only emitted when that type can hold an enum.
//
// ValidateFields returns the error of the message's fieldmap.Schema.Check.
package validate

import (
	"slices"
	"strconv"
	"strings"

	"google.golang.org/protobuf/compiler/protogen"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/edgekit/edgekit/gen"
)

func init() {
	gen.Register("validate", func(g *gen.GeneratedFile) gen.Feature { return &feature{g: g} })
}

type feature struct {
	g *gen.GeneratedFile
}

var _ gen.Feature = (*feature)(nil)

func (f *feature) GenerateFile(file *protogen.File) bool {
	return f.g.EachMessage(file, "validate", f.message)
}

func (f *feature) message(mm *gen.Message) {
	g := f.g
	name := mm.GoIdent.GoName
	full := strconv.Quote(string(mm.Desc.FullName()))

	var checked []*protogen.Field
	for _, fd := range sortedFields(mm.Message) {
		if f.checks(fd) {
			checked = append(checked, fd)
		}
	}
	if len(checked) == 0 {
		g.P("// ValidateEnums reports an enum field holding an undefined value: ", name, " has none.")
		g.P("func (m *", name, ") ValidateEnums() error { return nil }")
	} else {
		g.P("// ValidateEnums returns a *", g.Fieldmap("InvalidEnumError"), " for the first enum value of m")
		g.P("// (fields by number, depth first) that its enum does not define, or nil.")
		g.P("func (m *", name, ") ValidateEnums() error {")
		g.P("if m == nil {")
		g.P("return nil")
		g.P("}")
		for _, fd := range checked {
			f.field(full, fd)
		}
		g.P("return nil")
		g.P("}")
	}
	g.P()

	schema := g.Schema(mm)
	g.P("// ValidateFields returns an error for a flag of fm ", name, " lacks or a list action it refuses.")
	g.P("func (*", name, ") ValidateFields(fm *", g.Fieldmap("FieldMap"), ") error {")
	g.P("return ", schema, ".Check(fm)")
	g.P("}")
	g.P()
}

// checks reports whether ValidateEnums checks field fd: an enum, or
// messages that can hold one.
func (f *feature) checks(fd *protogen.Field) bool {
	switch v := gen.ValueField(fd); v.Desc.Kind() {
	case protoreflect.EnumKind:
		return true
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return f.recurses(v.Message)
	}
	return false
}

// field emits the check of one field of the message named full (quoted).
func (f *feature) field(full string, fd *protogen.Field) {
	g := f.g
	d := fd.Desc
	path := strconv.Quote(string(d.Name()))
	v := fd
	if d.IsMap() {
		v = fd.Message.Fields[1]
	}
	isEnum := v.Desc.Kind() == protoreflect.EnumKind
	// fail returns the statement reporting an invalid enum value held in x.
	fail := func(x string) string {
		return "return &" + g.Fieldmap("InvalidEnumError") + "{Message: " + full + ", Field: " + path +
			", Enum: " + strconv.Quote(string(v.Enum.Desc.FullName())) + ", Value: int32(" + x + ")}"
	}
	field := "m." + fd.GoName
	switch {
	case d.IsMap():
		keyType := g.ElemType(fd.Message.Fields[0])
		// The failing entry of least key wins, so the result does not depend
		// on map iteration order.
		less, assign := "k < ek", "err, ek = "
		g.P("{")
		g.P("var err error")
		if fd.Message.Fields[0].Desc.Kind() == protoreflect.BoolKind {
			less, assign = "!k", "err = "
		} else {
			g.P("var ek ", keyType)
		}
		setKey := ""
		if assign != "err = " {
			setKey = ", k"
		}
		g.P("for k, v := range ", field, " {")
		if isEnum {
			g.P("if !(", definedExpr(v.Enum, "v"), ") && (err == nil || ", less, ") {")
			g.P(assign, "&", g.Fieldmap("InvalidEnumError"), "{Message: ", full, ", Field: ", path,
				", Enum: ", strconv.Quote(string(v.Enum.Desc.FullName())), ", Value: int32(v)}", setKey)
			g.P("}")
		} else {
			call, wrap := f.validateCall(v.Message, "v", full, path)
			g.P("if e := ", call, "; e != nil && (err == nil || ", less, ") {")
			g.P(assign, wrap("e"), setKey)
			g.P("}")
		}
		g.P("}")
		g.P("if err != nil {")
		g.P("return err")
		g.P("}")
		g.P("}")
	case d.IsList():
		g.P("for _, v := range ", field, " {")
		if isEnum {
			g.P("if !(", definedExpr(v.Enum, "v"), ") {")
			g.P(fail("v"))
			g.P("}")
		} else {
			f.checkMessage(v.Message, "v", full, path)
		}
		g.P("}")
	case gen.InOneof(fd):
		g.P("if x, ok := m.", fd.Oneof.GoName, ".(", g.OneofWrapper(fd), "); ok {")
		if isEnum {
			g.P("if v := x.", fd.GoName, "; !(", definedExpr(v.Enum, "v"), ") {")
			g.P(fail("v"))
			g.P("}")
		} else {
			f.checkMessage(v.Message, "x."+fd.GoName, full, path)
		}
		g.P("}")
	case isEnum && gen.IsPointerScalar(fd):
		g.P("if p := ", field, "; p != nil && !(", definedExpr(v.Enum, "*p"), ") {")
		g.P(fail("*p"))
		g.P("}")
	case isEnum:
		g.P("if v := ", field, "; !(", definedExpr(v.Enum, "v"), ") {")
		g.P(fail("v"))
		g.P("}")
	default:
		f.checkMessage(v.Message, field, full, path)
	}
}

// checkMessage emits the validation of x, a message of type msg held at
// field path of the message named full, returning its error.
func (f *feature) checkMessage(msg *protogen.Message, x, full, path string) {
	g := f.g
	call, wrap := f.validateCall(msg, x, full, path)
	g.P("if err := ", call, "; err != nil {")
	g.P("return ", wrap("err"))
	g.P("}")
}

// validateCall returns an expression validating the message x of type msg,
// and a function turning the name of a variable holding its non-nil result
// into the error to report, re-rooted at the message named full, field
// path.
func (f *feature) validateCall(msg *protogen.Message, x, full, path string) (string, func(string) string) {
	g := f.g
	if g.Model.Generates(msg, "validate") {
		return x + ".ValidateEnums()", func(e string) string {
			return g.Fieldmap("EnumErrorAt") + "(" + e + ", " + full + ", " + path + ")"
		}
	}
	return g.Fieldmap("ValidateEnumsAt") + "(" + x + ", " + full + ", " + path + ")", func(e string) string { return e }
}

// recurses reports whether ValidateEnums descends into sub-messages of type
// msg: when msg can hold an enum; for messages of other Go packages always
// (their code may change without this file being regenerated), except
// well-known types, which are fixed.
func (f *feature) recurses(msg *protogen.Message) bool {
	if msg.GoIdent.GoImportPath != f.g.File.GoImportPath && !gen.IsWellKnown(msg) {
		return true
	}
	return holdsEnum(msg, map[protoreflect.FullName]bool{})
}

// holdsEnum reports whether a message of type msg can hold an enum value at
// any depth.
func holdsEnum(msg *protogen.Message, seen map[protoreflect.FullName]bool) bool {
	if seen[msg.Desc.FullName()] {
		return false
	}
	seen[msg.Desc.FullName()] = true
	for _, fd := range msg.Fields {
		switch v := gen.ValueField(fd); v.Desc.Kind() {
		case protoreflect.EnumKind:
			return true
		case protoreflect.MessageKind, protoreflect.GroupKind:
			if v.Message.Desc.FullName() == "google.protobuf.Any" {
				continue // payloads are not inspected
			}
			if holdsEnum(v.Message, seen) {
				return true
			}
		}
	}
	return false
}

// definedExpr returns a boolean Go expression that is true when x (an
// expression of the enum's Go type, evaluated more than once) is a number
// the enum defines: comparisons against the runs of consecutive numbers.
func definedExpr(e *protogen.Enum, x string) string {
	nums := make([]int64, 0, len(e.Values))
	for _, v := range e.Values {
		nums = append(nums, int64(v.Desc.Number()))
	}
	slices.Sort(nums)
	nums = slices.Compact(nums)
	var terms []string
	for i := 0; i < len(nums); {
		j := i
		for j+1 < len(nums) && nums[j+1] == nums[j]+1 {
			j++
		}
		lo, hi := strconv.FormatInt(nums[i], 10), strconv.FormatInt(nums[j], 10)
		switch {
		case i == j:
			terms = append(terms, x+" == "+lo)
		case len(terms) == 0 && j == len(nums)-1:
			terms = append(terms, x+" >= "+lo+" && "+x+" <= "+hi)
		default:
			terms = append(terms, "("+x+" >= "+lo+" && "+x+" <= "+hi+")")
		}
		i = j + 1
	}
	return strings.Join(terms, " || ")
}

func sortedFields(msg *protogen.Message) []*protogen.Field {
	fs := slices.Clone(msg.Fields)
	slices.SortFunc(fs, func(a, b *protogen.Field) int { return int(a.Desc.Number()) - int(b.Desc.Number()) })
	return fs
}
