package gen

import (
	"fmt"
	"go/token"
	"hash/fnv"
	"path"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"google.golang.org/protobuf/compiler/protogen"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/pluginpb"

	"github.com/edgekit/edgekit/fieldmap"
)

// FileSuffix ends the name of every generated file.
const FileSuffix = "_edgekit.pb.go"

// Packages the generated code refers to.
const (
	FieldmapPackage = protogen.GoImportPath("github.com/edgekit/edgekit/fieldmap")
	ProtoPackage    = protogen.GoImportPath("google.golang.org/protobuf/proto")
	BytesPackage    = protogen.GoImportPath("bytes")
	StrconvPackage  = protogen.GoImportPath("strconv")
)

// GeneratedFile is the output file of one .proto file, shared by all
// features, with the model of the whole run.
type GeneratedFile struct {
	*protogen.GeneratedFile
	Model *Model
	File  *protogen.File

	schemas     map[*Message]string // schema variables already emitted
	shapes      map[*Shape]string   // shape variables already emitted
	importNames map[string]bool     // names the file may import a package as
}

// Schema returns the name of the package variable holding the
// fieldmap.Schema of mm, emitting it on first use in the file.
func (g *GeneratedFile) Schema(mm *Message) string {
	if name, ok := g.schemas[mm]; ok {
		return name
	}
	name := SchemaVar(mm.Message)
	g.schemas[mm] = name
	shape := g.ShapeVar(mm.Shape)
	g.P("var ", name, " = ", g.Fieldmap("NewShapeSchema"), "(", strconv.Quote(string(mm.Desc.FullName())), ", ", shape, ", ", mm.ListActions, ")")
	g.P()
	return name
}

// ShapeVar returns the name of the package variable holding the
// fieldmap.Shape of s, emitting it (and those of the shapes below it) on
// first use in the file, unless another file of the package declares it.
func (g *GeneratedFile) ShapeVar(s *Shape) string {
	if name, ok := g.shapes[s]; ok {
		return name
	}
	if s.Message.Desc.ParentFile() != g.File.Desc && s.Variant == "" && g.Model.Generates(s.Message, "fields") {
		// The top-level shape of a message of another file of the
		// package: that file's fields feature declares it.
		name := "_" + s.Message.GoIdent.GoName + "_shape"
		g.shapes[s] = name
		return name
	}
	name := g.ShapeName(s, "shape")
	g.shapes[s] = name
	subs := make([]string, len(s.Fields))
	for i, f := range s.Fields {
		if f.Sub != nil {
			subs[i] = g.ShapeVar(f.Sub)
		}
	}
	layout := HasLayout(s.Message)
	size := ""
	if layout {
		size = "Size: " + g.layoutSize(s.Message) + ", "
	}
	g.P("var ", name, " = &", g.Fieldmap("Shape"), "{", size, "Fields: []", g.Fieldmap("ShapeField"), "{")
	for i, f := range s.Fields {
		line := []any{"{Number: ", f.Field.Desc.Number(), ", Name: ", strconv.Quote(string(f.Field.Desc.Name()))}
		if f.Kind != fieldmap.KindScalar {
			line = append(line, ", Kind: ", g.Fieldmap(kindName(f.Kind)))
		}
		if subs[i] != "" {
			line = append(line, ", Sub: ", subs[i])
		}
		if layout {
			line = append(line, g.layout(s.Message, f.Field, f.Sub != nil))
		}
		g.P(append(line, "},")...)
	}
	g.P("}}")
	g.P()
	return name
}

// Owns reports whether the code of shape s for feature is a method of its
// message, callable from the file: the message is declared in the file
// being generated (or in another file of its Go package) and the feature
// generates code for it. The code of other shapes is emitted in each file
// that needs it, as functions.
func (g *GeneratedFile) Owns(s *Shape, feature string) bool {
	return g.Model.Generates(s.Message, feature)
}

// ShapeName returns the name of a package-level declaration of the file
// about shape s: "_<Msg>_<what>" for a message of the file, with the
// variant; for other messages a name private to the file.
func (g *GeneratedFile) ShapeName(s *Shape, what string) string {
	name := "_" + s.Message.GoIdent.GoName + "_" + what
	if s.Message.Desc.ParentFile() != g.File.Desc {
		h := fnv.New32a()
		h.Write([]byte(s.Message.Desc.FullName()))
		name = "_" + g.File.GoDescriptorIdent.GoName + "_" + s.Message.GoIdent.GoName + strconv.FormatUint(uint64(h.Sum32()), 36) + "_" + what
	}
	if s.Variant != "" {
		name += "_" + s.Variant
	}
	return name
}

// MethodName returns the name of the method or function holding the code
// of feature what for shape s: an unexported method of the message
// ("<what>", with the variant) when the file can call one (see Owns),
// else a function private to the file.
func (g *GeneratedFile) MethodName(s *Shape, feature, what string) string {
	if g.Owns(s, feature) {
		if s.Variant != "" {
			return what + "_" + s.Variant
		}
		return what
	}
	return g.ShapeName(s, what)
}

// Local returns name, or name with underscores appended, so that it names
// no package the file may import: generated code declares locals with it
// inside bodies that refer to imported packages.
func (g *GeneratedFile) Local(name string) string {
	for g.importNames[name] || g.importNames[strings.TrimRight(name, "0123456789")] {
		name += "_"
	}
	return name
}

// importNamesOf returns the names protogen may import, in the file of
// file, the packages of the messages and enums reachable from its
// messages: the last element of their import paths (with a number when
// two collide), as sanitized identifiers.
func importNamesOf(file *protogen.File) map[string]bool {
	out := map[string]bool{}
	seen := map[protoreflect.FullName]bool{}
	var visit func(msg *protogen.Message)
	visit = func(msg *protogen.Message) {
		if seen[msg.Desc.FullName()] {
			return
		}
		seen[msg.Desc.FullName()] = true
		out[sanitize(path.Base(string(msg.GoIdent.GoImportPath)))] = true
		for _, f := range msg.Fields {
			if f.Enum != nil {
				out[sanitize(path.Base(string(f.Enum.GoIdent.GoImportPath)))] = true
			}
			if f.Message != nil {
				visit(f.Message)
			}
		}
	}
	walkMessages(file.Messages, visit)
	delete(out, "")
	return out
}

// sanitize turns s into an identifier as protogen does for package names.
func sanitize(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return r
		}
		return '_'
	}, s)
	r, _ := utf8.DecodeRuneInString(s)
	if token.Lookup(s).IsKeyword() || !unicode.IsLetter(r) {
		return "_" + s
	}
	return s
}

func kindName(k fieldmap.Kind) string {
	switch k {
	case fieldmap.KindMessage:
		return "KindMessage"
	case fieldmap.KindList:
		return "KindList"
	case fieldmap.KindMap:
		return "KindMap"
	}
	return "KindScalar"
}

// Run generates code for every file of the request that protoc asked for,
// with the options of the request's parameter (see ParseParameter).
func Run(plugin *protogen.Plugin) error {
	opts, err := ParseParameter(plugin.Request.GetParameter())
	if err != nil {
		return err
	}
	return Generate(plugin, opts)
}

// Generate generates code for every file of the request that protoc asked
// for, with opts.
func Generate(plugin *protogen.Plugin, opts Options) error {
	plugin.SupportedFeatures = uint64(pluginpb.CodeGeneratorResponse_FEATURE_PROTO3_OPTIONAL |
		pluginpb.CodeGeneratorResponse_FEATURE_SUPPORTS_EDITIONS)
	plugin.SupportedEditionsMinimum = descriptorpb.Edition_EDITION_PROTO2
	plugin.SupportedEditionsMaximum = descriptorpb.Edition_EDITION_2023
	for _, f := range opts.Features {
		if factoryOf(f) == nil {
			return fmt.Errorf("%w: unknown feature %q (known: %s)", ErrParameter, f, strings.Join(Features(), ", "))
		}
	}
	model, err := analyze(plugin, opts.Features)
	if err != nil {
		return err
	}
	for _, file := range plugin.Files {
		if !file.Generate {
			continue
		}
		generateFile(plugin, model, file, opts.Features)
	}
	return nil
}

func generateFile(plugin *protogen.Plugin, model *Model, file *protogen.File, features []string) {
	g := plugin.NewGeneratedFile(file.GeneratedFilenamePrefix+FileSuffix, file.GoImportPath)
	gf := &GeneratedFile{GeneratedFile: g, Model: model.forFile(file), File: file,
		schemas: map[*Message]string{}, shapes: map[*Shape]string{}, importNames: importNamesOf(file)}
	writeHeader(plugin, gf)
	any := false
	for _, name := range features {
		if factoryOf(name)(gf).GenerateFile(file) {
			any = true
		}
	}
	if !any {
		g.Skip()
	}
}

func writeHeader(plugin *protogen.Plugin, g *GeneratedFile) {
	g.P("// Code generated by protoc-gen-go-edgekit. DO NOT EDIT.")
	g.P("// versions:")
	g.P("// \tprotoc-gen-go-edgekit ", Version())
	g.P("// \tprotoc                ", compilerVersion(plugin))
	g.P("// source: ", g.File.Desc.Path())
	g.P()
	g.P("package ", g.File.GoPackageName)
	g.P()
	g.P("// This is a compile-time assertion that the fieldmap runtime this file is")
	g.P("// compiled against supports it: if it fails, upgrade ", ModulePath, ".")
	g.P("const _ = ", g.Fieldmap(SupportConst))
	g.P()
}

// SupportConst is the fieldmap constant every generated file refers to:
// each fieldmap release that supports the code this generator emits has it
// (see fieldmap.SupportPackageIsVersion5), so that compiling against an
// older runtime fails naming it. Bump its version when generated code
// starts to need runtime API that an older fieldmap lacks.
const SupportConst = "SupportPackageIsVersion5"

func compilerVersion(plugin *protogen.Plugin) string {
	v := plugin.Request.GetCompilerVersion()
	if v == nil {
		return "(unknown)"
	}
	s := fmt.Sprintf("v%d.%d.%d", v.GetMajor(), v.GetMinor(), v.GetPatch())
	if v.GetSuffix() != "" {
		s += "-" + v.GetSuffix()
	}
	return s
}

// Fieldmap returns a qualified reference to a name in the fieldmap runtime.
func (g *GeneratedFile) Fieldmap(name string) string {
	return g.QualifiedGoIdent(FieldmapPackage.Ident(name))
}

// Ident qualifies name in package pkg.
func (g *GeneratedFile) Ident(pkg protogen.GoImportPath, name string) string {
	return g.QualifiedGoIdent(pkg.Ident(name))
}

// MessageType returns the Go type of msg, "*pkg.T".
func (g *GeneratedFile) MessageType(msg *protogen.Message) string {
	return "*" + g.QualifiedGoIdent(msg.GoIdent)
}

// SchemaVar is the name of the unexported package variable holding the
// fieldmap.Schema of msg.
func SchemaVar(msg *protogen.Message) string {
	return "_" + msg.GoIdent.GoName + "_fieldSchema"
}

// ElemType returns the Go type of one element of f: for a list its element,
// for a map its value, else the field's type without presence pointer.
func (g *GeneratedFile) ElemType(f *protogen.Field) string {
	d := f.Desc
	if d.IsMap() {
		return g.ElemType(f.Message.Fields[1])
	}
	switch d.Kind() {
	case protoreflect.BoolKind:
		return "bool"
	case protoreflect.EnumKind:
		return g.QualifiedGoIdent(f.Enum.GoIdent)
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return "int32"
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return "uint32"
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return "int64"
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return "uint64"
	case protoreflect.FloatKind:
		return "float32"
	case protoreflect.DoubleKind:
		return "float64"
	case protoreflect.StringKind:
		return "string"
	case protoreflect.BytesKind:
		return "[]byte"
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return g.MessageType(f.Message)
	}
	panic("gen: unknown field kind " + d.Kind().String())
}

// FieldType returns the Go type of the struct field of f.
func (g *GeneratedFile) FieldType(f *protogen.Field) string {
	d := f.Desc
	switch {
	case d.IsMap():
		return "map[" + g.ElemType(f.Message.Fields[0]) + "]" + g.ElemType(f.Message.Fields[1])
	case d.IsList():
		return "[]" + g.ElemType(f)
	case IsPointerScalar(f):
		return "*" + g.ElemType(f)
	}
	return g.ElemType(f)
}

// OneofWrapper returns the Go type of the oneof wrapper of member f,
// "*pkg.Msg_Member".
func (g *GeneratedFile) OneofWrapper(f *protogen.Field) string {
	return "*" + g.QualifiedGoIdent(f.GoIdent)
}

// EachMessage calls fn for every message of file that feature applies to
// (in declaration order, skipping messages whose options skip the feature),
// and reports whether it called fn at all: the body of most features'
// GenerateFile.
func (g *GeneratedFile) EachMessage(file *protogen.File, feature string, fn func(*Message)) bool {
	did := false
	for _, mm := range g.Model.Messages(file) {
		if mm.Skips(feature) {
			continue
		}
		fn(mm)
		did = true
	}
	return did
}
