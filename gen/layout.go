package gen

import (
	"google.golang.org/protobuf/compiler/protogen"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// UnsafePackage is the package of the offsets in shape literals.
const UnsafePackage = protogen.GoImportPath("unsafe")

// HasLayout reports whether the shape literal of msg carries its Go layout
// (Size, and per field Off with an Op, or a Value), which the table-driven
// DiffFields of the fieldmap runtime walks: for messages with an open Go
// struct.
func HasLayout(msg *protogen.Message) bool { return IsOpen(msg) && !msg.Desc.IsMapEntry() }

// layoutSize returns the expression of the size of msg's Go struct.
func (g *GeneratedFile) layoutSize(msg *protogen.Message) string {
	return g.Ident(UnsafePackage, "Sizeof") + "(" + g.QualifiedGoIdent(msg.GoIdent) + "{})"
}

// layout returns the entries of the shape literal of field f of msg that
// give its Go layout: ", Off: ..., Op: ..." or ", Value: ...".
// sub tells a message field with flags below it.
func (g *GeneratedFile) layout(msg *protogen.Message, f *protogen.Field, sub bool) string {
	typ := g.QualifiedGoIdent(msg.GoIdent)
	name := f.GoName
	if InOneof(f) {
		name = f.Oneof.GoName
	}
	off := g.Ident(UnsafePackage, "Offsetof") + "(" + typ + "{}." + name + ")"
	d := f.Desc
	switch {
	case InOneof(f) && IsMessage(f):
		return ", Value: &" + g.Fieldmap("EqMember") + "{Off: " + off + ", Wrapper: (" + g.OneofWrapper(f) + ")(nil), Eq: " + g.messageEq(f.Message) + "}"
	case InOneof(f):
		return ", Value: &" + g.Fieldmap("OpMember") + "{Off: " + off + ", Wrapper: (" + g.OneofWrapper(f) + ")(nil), Op: " + g.Fieldmap("Op"+opKind(d.Kind())) + "}"
	case d.IsMap():
		key, val := f.Message.Fields[0], f.Message.Fields[1]
		return ", Value: &" + g.Fieldmap(valueKind(val)+"Map") + "[" + g.ElemType(key) + g.valueArgs(val) + "]{Off: " + off + "}"
	case d.IsList() && IsMessage(f):
		return ", Value: &" + g.Fieldmap("EqMessageList") + "{Off: " + off + ", Eq: " + g.messageEq(f.Message) + ", Size: " + g.layoutSize(f.Message) + "}"
	case d.IsList():
		return ", Off: " + off + ", Op: " + g.Fieldmap("OpList"+opKind(d.Kind()))
	case IsMessage(f) && sub:
		return ", Value: &" + g.Fieldmap("MessageBelow") + "{Off: " + off + "}"
	case IsMessage(f):
		return ", Value: &" + g.Fieldmap("EqMessage") + "{Off: " + off + ", Eq: " + g.messageEq(f.Message) + "}"
	case IsPointerScalar(f):
		return ", Off: " + off + ", Op: " + g.Fieldmap("OpPtr"+opKind(d.Kind()))
	case d.Kind() == protoreflect.BytesKind && d.HasPresence():
		return ", Off: " + off + ", Op: " + g.Fieldmap("OpBytesPresence")
	}
	return ", Off: " + off + ", Op: " + g.Fieldmap("Op"+opKind(d.Kind()))
}

// messageEq returns the Eq of the non-generic fieldmap Values of messages
// of type msg, a func(*M, *M) bool under proto.Equal's rules that is a
// constant, so that the shape literal stays static data and costs the
// package no code: the generated Equal method when this package has one,
// the fieldmap helper of a well-known type, else fieldmap.Equal (through
// the message's Equal method when its package generated one).
func (g *GeneratedFile) messageEq(msg *protogen.Message) string {
	if g.Model.Generates(msg, "equal") {
		return "(" + g.MessageType(msg) + ").Equal"
	}
	if name := WellKnownHelper(msg); name != "" {
		return g.Fieldmap("Equal" + name)
	}
	return g.Fieldmap("Equal") + "[" + g.MessageType(msg) + "]"
}

// valueKind names the fieldmap Value types (<kind>Map, <kind>Member) for
// values of f.
func valueKind(f *protogen.Field) string {
	switch k := f.Desc.Kind(); {
	case isMessageKind(k):
		return "Message"
	case isFloat(k):
		return "Float"
	case k == protoreflect.BytesKind:
		return "Bytes"
	}
	return "Scalar"
}

// valueArgs returns the type arguments after the first of the fieldmap
// Value type of values of f: ", V" (", *M" for messages), none for
// bytes.
func (g *GeneratedFile) valueArgs(f *protogen.Field) string {
	switch k := f.Desc.Kind(); {
	case isMessageKind(k):
		return ", " + g.MessageType(f.Message)
	case k == protoreflect.BytesKind:
		return ""
	}
	return ", " + g.ElemType(f)
}

// opKind names the Go representation of a scalar kind in the fieldmap Op
// names.
func opKind(k protoreflect.Kind) string {
	switch k {
	case protoreflect.BoolKind:
		return "Bool"
	case protoreflect.EnumKind, protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return "Int32"
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return "Uint32"
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return "Int64"
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return "Uint64"
	case protoreflect.FloatKind:
		return "Float32"
	case protoreflect.DoubleKind:
		return "Float64"
	case protoreflect.StringKind:
		return "String"
	case protoreflect.BytesKind:
		return "Bytes"
	}
	panic("gen: no Op for kind " + k.String())
}
