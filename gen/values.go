package gen

import (
	"strings"

	"google.golang.org/protobuf/compiler/protogen"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Packages of the standard library the value helpers use.
const (
	SlicesPackage = protogen.GoImportPath("slices")
	MapsPackage   = protogen.GoImportPath("maps")
)

// ValueField returns the field describing one value of f: the map value
// field for maps, else f.
func ValueField(f *protogen.Field) *protogen.Field {
	if f.Desc.IsMap() {
		return f.Message.Fields[1]
	}
	return f
}

func isFloat(k protoreflect.Kind) bool {
	return k == protoreflect.FloatKind || k == protoreflect.DoubleKind
}

func isMessageKind(k protoreflect.Kind) bool {
	return k == protoreflect.MessageKind || k == protoreflect.GroupKind
}

// ElemEqualFunc returns a Go func value comparing two elements (list element
// or map value) of f under proto.Equal rules, or "" when == works.
func (g *GeneratedFile) ElemEqualFunc(f *protogen.Field) string {
	v := ValueField(f)
	switch k := v.Desc.Kind(); {
	case k == protoreflect.DoubleKind:
		return g.Fieldmap("EqualFloat64")
	case k == protoreflect.FloatKind:
		return g.Fieldmap("EqualFloat32")
	case k == protoreflect.BytesKind:
		return g.Ident(BytesPackage, "Equal")
	case isMessageKind(k):
		return g.MessageEqualFunc(v.Message)
	}
	return ""
}

// wellKnownHelpers names the fieldmap helpers (Equal<Name>, Clone<Name>)
// of the well-known types that have them.
var wellKnownHelpers = map[protoreflect.FullName]string{
	"google.protobuf.Timestamp":   "Timestamp",
	"google.protobuf.Duration":    "Duration",
	"google.protobuf.Empty":       "Empty",
	"google.protobuf.FieldMask":   "FieldMask",
	"google.protobuf.Any":         "Any",
	"google.protobuf.Struct":      "Struct",
	"google.protobuf.ListValue":   "ListValue",
	"google.protobuf.Value":       "Value",
	"google.protobuf.DoubleValue": "DoubleValue",
	"google.protobuf.FloatValue":  "FloatValue",
	"google.protobuf.Int64Value":  "Int64Value",
	"google.protobuf.UInt64Value": "UInt64Value",
	"google.protobuf.Int32Value":  "Int32Value",
	"google.protobuf.UInt32Value": "UInt32Value",
	"google.protobuf.BoolValue":   "BoolValue",
	"google.protobuf.StringValue": "StringValue",
	"google.protobuf.BytesValue":  "BytesValue",
}

// WellKnownHelper returns the <Name> of the fieldmap helpers (Equal<Name>,
// Clone<Name>) of msg, a well-known type that has them, or "".
func WellKnownHelper(msg *protogen.Message) string {
	if name := wellKnownHelpers[msg.Desc.FullName()]; name != "" && IsWellKnown(msg) {
		return name
	}
	return ""
}

// MessageEqualFunc returns a Go func value comparing two messages of type
// msg under proto.Equal's rules: the generated Equal method when this
// package has one, the fieldmap helper of a well-known type, else a func
// literal that asserts the message to fieldmap.Equaler in non-generic code
// (where the Go runtime caches the assertion at its call site, unlike the
// same assertion inside the generic fieldmap.Equal) and falls back to
// fieldmap.Equal.
func (g *GeneratedFile) MessageEqualFunc(msg *protogen.Message) string {
	if g.Model.Generates(msg, "equal") {
		return "(" + g.MessageType(msg) + ").Equal"
	}
	if name := WellKnownHelper(msg); name != "" {
		return g.Fieldmap("Equal" + name)
	}
	t := g.MessageType(msg)
	x, y, e, ok := g.Local("x"), g.Local("y"), g.Local("e"), g.Local("ok")
	return "func(" + x + ", " + y + " " + t + ") bool {\n" +
		"if " + e + ", " + ok + " := any(" + x + ").(" + g.Fieldmap("Equaler") + "[" + t + "]); " + ok + " {\n" +
		"return " + e + ".Equal(" + y + ")\n" +
		"}\n" +
		"return " + g.Fieldmap("Equal") + "(" + x + ", " + y + ")\n" +
		"}"
}

// EqualExpr returns a boolean Go expression that is true when a and b, two
// values of field f, are equal under proto.Equal's rules (NaN equals NaN,
// presence matters, nil and empty lists, maps and implicit bytes are equal).
// a and b have type FieldType(f), or ElemType(f) for a oneof member whose
// presence the caller has already compared.
func (g *GeneratedFile) EqualExpr(f *protogen.Field, a, b string) string {
	d := f.Desc
	switch {
	case d.IsMap():
		if eq := g.ElemEqualFunc(f); eq != "" {
			fn := "EqualMapFunc"
			if isMessageKind(ValueField(f).Desc.Kind()) {
				fn = "EqualMessageMapFunc" // a nil value reads as an empty message
			}
			return g.Fieldmap(fn) + "(" + a + ", " + b + ", " + eq + ")"
		}
		return g.Ident(MapsPackage, "Equal") + "(" + a + ", " + b + ")"
	case d.IsList():
		if eq := g.ElemEqualFunc(f); eq != "" {
			fn := "EqualListFunc"
			if isMessageKind(d.Kind()) {
				fn = "EqualMessageListFunc" // a nil element reads as an empty message
			}
			return g.Fieldmap(fn) + "(" + a + ", " + b + ", " + eq + ")"
		}
		return g.Ident(SlicesPackage, "Equal") + "(" + a + ", " + b + ")"
	}
	k := d.Kind()
	switch {
	case isMessageKind(k):
		if g.Model.Generates(f.Message, "equal") {
			return a + ".Equal(" + b + ")"
		}
		eq := g.MessageEqualFunc(f.Message)
		if strings.HasPrefix(eq, "func(") {
			eq = "(" + eq + ")"
		}
		return eq + "(" + a + ", " + b + ")"
	case IsPointerScalar(f):
		switch k {
		case protoreflect.DoubleKind:
			return g.Fieldmap("EqualPtrFloat64") + "(" + a + ", " + b + ")"
		case protoreflect.FloatKind:
			return g.Fieldmap("EqualPtrFloat32") + "(" + a + ", " + b + ")"
		}
		return g.Fieldmap("EqualPtr") + "(" + a + ", " + b + ")"
	case k == protoreflect.BytesKind:
		if d.HasPresence() && !InOneof(f) {
			return g.Fieldmap("EqualBytesPresence") + "(" + a + ", " + b + ")"
		}
		return g.Ident(BytesPackage, "Equal") + "(" + a + ", " + b + ")"
	case isFloat(k):
		name := "Float64"
		if k == protoreflect.FloatKind {
			name = "Float32"
		}
		if InOneof(f) {
			return g.Fieldmap("Equal"+name) + "(" + a + ", " + b + ")"
		}
		return g.Fieldmap("EqualImplicit"+name) + "(" + a + ", " + b + ")"
	}
	return a + " == " + b
}

// SameExpr is EqualExpr, except that singular float fields compare bit for
// bit: what CopyInFields uses to count a change.
func (g *GeneratedFile) SameExpr(f *protogen.Field, a, b string) string {
	d := f.Desc
	if !d.IsList() && !d.IsMap() && isFloat(d.Kind()) {
		name := "Float64"
		if d.Kind() == protoreflect.FloatKind {
			name = "Float32"
		}
		if IsPointerScalar(f) {
			return g.Fieldmap("SamePtr"+name) + "(" + a + ", " + b + ")"
		}
		return g.Fieldmap("Same"+name) + "(" + a + ", " + b + ")"
	}
	return g.EqualExpr(f, a, b)
}

// ElemCloneFunc returns a Go func value deep-copying one element (list
// element or map value) of f, or "" when assignment copies it.
func (g *GeneratedFile) ElemCloneFunc(f *protogen.Field) string {
	v := ValueField(f)
	switch k := v.Desc.Kind(); {
	case k == protoreflect.BytesKind:
		return g.Fieldmap("CloneBytes")
	case isMessageKind(k):
		if g.Model.Generates(v.Message, "clone") {
			return "(" + g.MessageType(v.Message) + ").Clone"
		}
		return g.Fieldmap("Clone") + "[" + g.MessageType(v.Message) + "]"
	}
	return ""
}

// CloneExpr returns a Go expression deep-copying v, a value of field f of
// type FieldType(f) (or ElemType(f) for a oneof member). The copy shares no
// pointer, slice or map with v, and keeps nil-ness.
func (g *GeneratedFile) CloneExpr(f *protogen.Field, v string) string {
	d := f.Desc
	switch {
	case d.IsMap():
		if c := g.ElemCloneFunc(f); c != "" {
			return g.Fieldmap("CloneMapFunc") + "(" + v + ", " + c + ")"
		}
		return g.Ident(MapsPackage, "Clone") + "(" + v + ")"
	case d.IsList():
		if c := g.ElemCloneFunc(f); c != "" {
			return g.Fieldmap("CloneListFunc") + "(" + v + ", " + c + ")"
		}
		return g.Ident(SlicesPackage, "Clone") + "(" + v + ")"
	}
	k := d.Kind()
	switch {
	case isMessageKind(k):
		if g.Model.Generates(f.Message, "clone") {
			return v + ".Clone()"
		}
		return g.Fieldmap("Clone") + "(" + v + ")"
	case IsPointerScalar(f):
		return g.Fieldmap("ClonePtr") + "(" + v + ")"
	case k == protoreflect.BytesKind:
		return g.Fieldmap("CloneBytes") + "(" + v + ")"
	}
	return v
}
