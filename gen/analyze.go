package gen

import (
	"fmt"
	"slices"
	"strings"

	"google.golang.org/protobuf/compiler/protogen"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// analyze builds the model and reports every problem in the input.
func analyze(plugin *protogen.Plugin, features []string) (*Model, error) {
	m := &Model{
		features: map[string]bool{},
		messages: map[protoreflect.FullName]*Message{},
		files:    map[*protogen.File][]*Message{},
		shapes:   newShapes(),
	}
	for _, f := range features {
		m.features[f] = true
	}
	var ds diagnostics
	pkgIdents := map[protogen.GoImportPath]map[string]ident{}
	for _, file := range plugin.Files {
		if !file.Generate {
			continue
		}
		idents := pkgIdents[file.GoImportPath]
		if idents == nil {
			idents = map[string]ident{}
			pkgIdents[file.GoImportPath] = idents
		}
		reserveGoIdents(file, idents)
		fileSkip := checkSkip(&ds, file.Desc, fileOptions(file).GetSkipFeatures())
		checkExtensions(&ds, file.Extensions)
		walkMessages(file.Messages, func(msg *protogen.Message) {
			checkExtensions(&ds, msg.Extensions)
			mm := &Message{Message: msg, File: file, skip: map[string]bool{}}
			for k := range fileSkip {
				mm.skip[k] = true
			}
			for k := range checkSkip(&ds, msg.Desc, messageOptions(msg).GetSkipFeatures()) {
				mm.skip[k] = true
			}
			mm.ListActions = messageOptions(msg).GetListActions()
			checkMessage(&ds, mm)
			mm.Shape = m.shapes.top(msg)
			var over *protogen.Field
			mm.Flags, over = buildFlags(mm.Shape)
			if over != nil {
				ds.at(msg.Desc, "message %s has more than %d field flags (one per path through its sub-messages; the limit is reached below field %s): mark message fields whose sub-fields need no flags of their own (edgekit.options.v1.field).atomic = true",
					msg.Desc.FullName(), MaxFlags, over.Desc.Name())
			}
			m.messages[msg.Desc.FullName()] = mm
			m.files[file] = append(m.files[file], mm)
		})
	}
	// Name clashes need every message of a package first.
	for _, file := range plugin.Files {
		for _, mm := range m.files[file] {
			checkNames(&ds, m, mm, pkgIdents[file.GoImportPath])
		}
	}
	if err := ds.err(); err != nil {
		return nil, err
	}
	return m, nil
}

func checkSkip(ds *diagnostics, desc protoreflect.Descriptor, names []string) map[string]bool {
	out := map[string]bool{}
	for _, n := range names {
		if !knownFeature(n) {
			ds.at(desc, "skip_features names unknown feature %q (known: %s)", n, strings.Join(Features(), ", "))
			continue
		}
		out[n] = true
	}
	return out
}

// checkMessage reports constructs the generator cannot handle.
func checkMessage(ds *diagnostics, mm *Message) {
	msg := mm.Message
	if !IsOpen(msg) {
		ds.at(msg.Desc, "message %s uses the %s Go API; protoc-gen-go-edgekit supports the open struct API only (set option features.(pb.go).api_level = API_OPEN, or leave the default of editions before 2024)",
			msg.Desc.FullName(), strings.TrimPrefix(msg.APILevel.String(), "API_"))
	}
	var key *protogen.Field
	for _, f := range msg.Fields {
		if f.Desc.IsWeak() {
			ds.at(f.Desc, "field %s is a weak field; weak fields are not supported (remove the weak option)", f.Desc.FullName())
		}
		if !IsObjectKey(f) {
			continue
		}
		if key != nil {
			ds.at(f.Desc, "message %s has two object_key fields, %s and %s; mark exactly one field as the key",
				msg.Desc.FullName(), key.Desc.Name(), f.Desc.Name())
			continue
		}
		if f.Desc.IsList() || f.Desc.IsMap() {
			ds.at(f.Desc, "object_key field %s is repeated or a map; a key must be a singular scalar, enum or message", f.Desc.FullName())
			continue
		}
		if InOneof(f) {
			ds.at(f.Desc, "object_key field %s is a oneof member; a key must always be present", f.Desc.FullName())
			continue
		}
		if why := keyableType(f, nil); why != "" {
			ds.at(f.Desc, "object_key field %s cannot be a key: %s", f.Desc.FullName(), why)
			continue
		}
		key = f
	}
	mm.Key = key
}

// checkExtensions reports edgekit field options on extensions, which have
// no flags and cannot be keys: they would be ignored.
func checkExtensions(ds *diagnostics, exts []*protogen.Extension) {
	for _, x := range exts {
		if IsObjectKey(x) {
			ds.at(x.Desc, "extension %s is marked object_key; a key must be a field of the message itself (extensions have no flags): remove the option or make it a field", x.Desc.FullName())
		}
		if IsAtomic(x) {
			ds.at(x.Desc, "extension %s is marked atomic; extensions have no flags, so the option has no effect: remove it", x.Desc.FullName())
		}
	}
}

// keyableType explains why f cannot be (part of) a key, or returns "".
func keyableType(f *protogen.Field, seen []protoreflect.FullName) string {
	d := f.Desc
	if d.IsList() || d.IsMap() {
		return fmt.Sprintf("field %s is repeated or a map", d.FullName())
	}
	switch d.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		if IsWellKnown(f.Message) {
			return fmt.Sprintf("field %s is a well-known type (%s)", d.FullName(), f.Message.Desc.FullName())
		}
		if slices.Contains(seen, f.Message.Desc.FullName()) {
			return fmt.Sprintf("message %s is recursive", f.Message.Desc.FullName())
		}
		seen = append(seen, f.Message.Desc.FullName())
		for _, sf := range f.Message.Fields {
			if InOneof(sf) {
				return fmt.Sprintf("field %s is a oneof member", sf.Desc.FullName())
			}
			if why := keyableType(sf, seen); why != "" {
				return why
			}
		}
	case protoreflect.BytesKind:
		return fmt.Sprintf("field %s is bytes", d.FullName())
	}
	return ""
}

// reserveGoIdents records the package-level Go names protoc-gen-go declares
// for file, so generated names can be checked against them.
// ident is a package-level Go name and what declares it.
type ident struct {
	desc protoreflect.Descriptor
	by   string // the generator declaring it
}

func reserveGoIdents(file *protogen.File, idents map[string]ident) {
	add := func(name string, d protoreflect.Descriptor) { idents[name] = ident{d, "protoc-gen-go"} }
	add(file.GoDescriptorIdent.GoName, file.Desc)
	var enums func([]*protogen.Enum)
	enums = func(es []*protogen.Enum) {
		for _, e := range es {
			add(e.GoIdent.GoName, e.Desc)
			add(e.GoIdent.GoName+"_name", e.Desc)
			add(e.GoIdent.GoName+"_value", e.Desc)
			for _, v := range e.Values {
				add(v.GoIdent.GoName, v.Desc)
			}
		}
	}
	enums(file.Enums)
	for _, x := range file.Extensions {
		add("E_"+x.GoIdent.GoName, x.Desc)
	}
	var msgs func([]*protogen.Message)
	msgs = func(ms []*protogen.Message) {
		for _, msg := range ms {
			add(msg.GoIdent.GoName, msg.Desc)
			for _, f := range msg.Fields {
				if InOneof(f) {
					add(f.GoIdent.GoName, f.Desc)
				}
				if f.Desc.HasDefault() {
					add("Default_"+msg.GoIdent.GoName+"_"+f.GoName, f.Desc)
				}
			}
			for _, x := range msg.Extensions {
				add("E_"+x.GoIdent.GoName, x.Desc)
			}
			enums(msg.Enums)
			msgs(msg.Messages)
		}
	}
	msgs(file.Messages)
}

// checkNames reports the Go names the selected features declare for mm
// (see DeclareNames) that collide with each other, with protoc-gen-go's
// names or with the fields of the message.
func checkNames(ds *diagnostics, m *Model, mm *Message, idents map[string]ident) {
	msg := mm.Message
	own := map[string]PackageName{}
	for _, feat := range Features() {
		if !m.features[feat] || mm.skip[feat] {
			continue
		}
		names := namesOf(feat, mm)
		for _, n := range names.Package {
			if prev, ok := own[n.Name]; ok {
				ds.at(n.Desc, "%s clashes with %s; rename one of them", n.what(), prev.what())
				continue
			}
			own[n.Name] = n
			if other, ok := idents[n.Name]; ok {
				ds.at(n.Desc, "%s clashes with %s declared by %s for %s; rename one of them", n.what(), n.Name, other.by, other.desc.FullName())
				continue
			}
			idents[n.Name] = ident{n.Desc, "protoc-gen-go-edgekit"}
		}
		for _, method := range names.Methods {
			// protoc-gen-go declares a struct field and a getter for every
			// field outside a oneof, a struct field and a getter for every
			// oneof, and a getter for every oneof member.
			for _, f := range msg.Fields {
				if (!InOneof(f) && f.GoName == method) || "Get"+f.GoName == method {
					ds.at(f.Desc, "field %s clashes with the %s method of feature %q; rename the field or skip the feature with option (edgekit.options.v1.message).skip_features = %q",
						f.Desc.Name(), method, feat, feat)
				}
			}
			for _, o := range msg.Oneofs {
				if !o.Desc.IsSynthetic() && (o.GoName == method || "Get"+o.GoName == method) {
					ds.at(o.Desc, "oneof %s clashes with the %s method of feature %q; rename the oneof or skip the feature with option (edgekit.options.v1.message).skip_features = %q",
						o.Desc.Name(), method, feat, feat)
				}
			}
		}
	}
}
