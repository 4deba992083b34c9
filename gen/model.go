package gen

import (
	"slices"
	"strconv"

	"google.golang.org/protobuf/compiler/protogen"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/gofeaturespb"

	"github.com/edgekit/edgekit/fieldmap"
	optionsv1 "github.com/edgekit/edgekit/proto/edgekit/options/v1"
)

// Model is the analysis of every message of the files to generate, shared by
// all features.
type Model struct {
	features map[string]bool                    // selected features
	messages map[protoreflect.FullName]*Message // messages of files to generate
	files    map[*protogen.File][]*Message
	pkg      protogen.GoImportPath // Go package of the file being generated
	shapes   *shapes
}

// Message is what features need to know about one message.
type Message struct {
	*protogen.Message
	File *protogen.File
	// Flags are the field flags of the message down to MaxConstDepth, depth
	// first in field number order, parents before children: the flags that
	// get a Go constant.
	Flags []*Flag
	// Shape is the layout of the message's flags as a top-level message.
	Shape *Shape
	// ListActions is the list_actions message option.
	ListActions bool
	// Key is the field marked object_key, or nil.
	Key *protogen.Field

	skip map[string]bool
}

// Flag is one field path of a top-level message.
type Flag struct {
	Field  *protogen.Field
	Flag   string // "11.3"
	Const  string // Go constant name, "CloudletInfoFieldStatusTaskName"
	Path   string // "status.task_name"
	Kind   fieldmap.Kind
	Leaf   bool
	Parent *Flag
}

// Root returns the flag of the top-level message's own field that fl lies
// under (fl itself for a root).
func (fl *Flag) Root() *Flag {
	for fl.Parent != nil {
		fl = fl.Parent
	}
	return fl
}

// Messages returns the analysed messages declared in file (nested ones
// included, map entries excluded), in declaration order.
func (m *Model) Messages(file *protogen.File) []*Message { return m.files[file] }

// Lookup returns the analysed message, or nil when msg is not in a file being
// generated.
func (m *Model) Lookup(msg *protogen.Message) *Message {
	if msg == nil {
		return nil
	}
	return m.messages[msg.Desc.FullName()]
}

// Generates reports whether feature generates code for msg that the file
// being generated may call directly rather than going through the fieldmap
// runtime: msg must be in the same Go package (so the output of a file never
// depends on which other packages a run included), the feature selected, and
// not skipped by msg's options.
func (m *Model) Generates(msg *protogen.Message, feature string) bool {
	if msg == nil || !m.features[feature] || msg.GoIdent.GoImportPath != m.pkg {
		return false
	}
	if mm := m.Lookup(msg); mm != nil {
		return !mm.skip[feature]
	}
	// Same package, file not in this run: its options decide.
	if !IsOpen(msg) || msg.Desc.IsMapEntry() {
		return false
	}
	skips := append(fileOptionsOf(msg.Desc.ParentFile()).GetSkipFeatures(), messageOptions(msg).GetSkipFeatures()...)
	return !slices.Contains(skips, feature)
}

// forFile returns the view of the model that the features of file use.
func (m *Model) forFile(file *protogen.File) *Model {
	v := *m
	v.pkg = file.GoImportPath
	return &v
}

// Skips reports whether the message's options (or its file's) turn feature
// off.
func (mm *Message) Skips(feature string) bool { return mm.skip[feature] }

// IsWellKnown reports whether a message belongs to package google.protobuf.
func IsWellKnown(msg *protogen.Message) bool {
	return msg != nil && msg.Desc.ParentFile().Package() == "google.protobuf"
}

// HasExtensionRanges reports whether msg can carry extensions, so that its
// generated Clone and Equal are proto.Clone and proto.Equal (and it has no
// cloneTo). It reads the descriptor, so it holds for messages of files that
// are not part of the run too.
func HasExtensionRanges(msg *protogen.Message) bool {
	return msg != nil && msg.Desc.ExtensionRanges().Len() > 0
}

// IsOpen reports whether a message's Go struct has exported fields that
// generated code can read and write.
func IsOpen(msg *protogen.Message) bool {
	return msg.APILevel == gofeaturespb.GoFeatures_API_OPEN || msg.APILevel == gofeaturespb.GoFeatures_API_LEVEL_UNSPECIFIED
}

// InOneof reports whether f is a member of a real (not synthetic) oneof.
func InOneof(f *protogen.Field) bool {
	return f.Oneof != nil && !f.Oneof.Desc.IsSynthetic()
}

// IsPointerScalar reports whether a singular scalar or enum field is a Go
// pointer (explicit presence outside a oneof).
func IsPointerScalar(f *protogen.Field) bool {
	d := f.Desc
	if d.IsList() || d.IsMap() || InOneof(f) || !d.HasPresence() {
		return false
	}
	switch d.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind, protoreflect.BytesKind:
		return false
	}
	return true
}

// IsMessage reports whether f is a singular or repeated message field (not a
// map).
func IsMessage(f *protogen.Field) bool {
	k := f.Desc.Kind()
	return (k == protoreflect.MessageKind || k == protoreflect.GroupKind) && !f.Desc.IsMap()
}

// IsRedacted reports whether f carries debug_redact = true.
func IsRedacted(f *protogen.Field) bool {
	o, ok := f.Desc.Options().(*descriptorpb.FieldOptions)
	return ok && o.GetDebugRedact()
}

func fieldOptions(f *protogen.Field) *optionsv1.FieldOptions {
	o, ok := f.Desc.Options().(*descriptorpb.FieldOptions)
	if !ok || o == nil {
		return nil
	}
	v, _ := proto.GetExtension(o, optionsv1.E_Field).(*optionsv1.FieldOptions)
	return v
}

func messageOptions(msg *protogen.Message) *optionsv1.MessageOptions {
	o, ok := msg.Desc.Options().(*descriptorpb.MessageOptions)
	if !ok || o == nil {
		return nil
	}
	v, _ := proto.GetExtension(o, optionsv1.E_Message).(*optionsv1.MessageOptions)
	return v
}

func fileOptions(file *protogen.File) *optionsv1.FileOptions { return fileOptionsOf(file.Desc) }

func fileOptionsOf(fd protoreflect.FileDescriptor) *optionsv1.FileOptions {
	o, ok := fd.Options().(*descriptorpb.FileOptions)
	if !ok || o == nil {
		return nil
	}
	v, _ := proto.GetExtension(o, optionsv1.E_File).(*optionsv1.FileOptions)
	return v
}

// IsAtomic reports whether the field carries (edgekit.options.v1.field).atomic.
func IsAtomic(f *protogen.Field) bool { return fieldOptions(f).GetAtomic() }

// IsObjectKey reports whether the field carries (edgekit.options.v1.field).object_key.
func IsObjectKey(f *protogen.Field) bool { return fieldOptions(f).GetObjectKey() }

// walkMessages calls fn for msgs and their nested messages, skipping map
// entries, in declaration order.
func walkMessages(msgs []*protogen.Message, fn func(*protogen.Message)) {
	for _, m := range msgs {
		if m.Desc.IsMapEntry() {
			continue
		}
		fn(m)
		walkMessages(m.Messages, fn)
	}
}

// MaxFlags is the most field flags a top-level message may have. Flags are
// paths, so a few messages referring to each other can have a number of
// paths that grows as the factorial of their count; past this limit
// analysis reports the message instead of generating code nobody can use.
const MaxFlags = 10000

// MaxConstDepth is the deepest flag that gets a Go constant: a path through
// more sub-messages than this (a long chain of nested messages) has a flag
// but no constant, whose name would repeat every field name on the way.
const MaxConstDepth = 16

// buildFlags lists the flags of the top-level message with shape top down
// to MaxConstDepth. When the message has more than MaxFlags flags it
// returns the field of the message below which the limit is reached as
// over.
func buildFlags(top *Shape) (all []*Flag, over *protogen.Field) {
	name := top.Message.GoIdent.GoName
	for _, sf := range top.Fields {
		if sf.Off+1+subSize(sf.Sub) > MaxFlags {
			return nil, sf.Field
		}
	}
	var walk func(s *Shape, parent *Flag, depth int, underList bool)
	walk = func(s *Shape, parent *Flag, depth int, underList bool) {
		for _, sf := range s.Fields {
			f := sf.Field
			fl := &Flag{Field: f, Parent: parent, Kind: sf.Kind}
			num := numberString(f)
			if parent == nil {
				fl.Flag, fl.Const, fl.Path = num, name+"Field"+f.GoName, string(f.Desc.Name())
			} else {
				fl.Flag, fl.Const, fl.Path = parent.Flag+"."+num, parent.Const+f.GoName, parent.Path+"."+string(f.Desc.Name())
			}
			fl.Leaf = sf.Kind != fieldmap.KindMessage && !underList
			all = append(all, fl)
			if sf.Sub != nil && depth < MaxConstDepth {
				walk(sf.Sub, fl, depth+1, underList || sf.Kind == fieldmap.KindList)
			}
		}
	}
	walk(top, nil, 1, false)
	return all, nil
}

func sortedFields(msg *protogen.Message) []*protogen.Field {
	fs := append([]*protogen.Field(nil), msg.Fields...)
	for i := 1; i < len(fs); i++ {
		for j := i; j > 0 && fs[j].Desc.Number() < fs[j-1].Desc.Number(); j-- {
			fs[j], fs[j-1] = fs[j-1], fs[j]
		}
	}
	return fs
}

func numberString(f *protogen.Field) string { return strconv.Itoa(int(f.Desc.Number())) }
