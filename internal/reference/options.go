package reference

import (
	"reflect"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/gofeaturespb"

	optionsv1 "github.com/edgekit/edgekit/proto/edgekit/options/v1"
)

// optionTypes resolves the extensions this package reads from descriptor
// options, for options whose extensions arrived as unknown fields or with a
// dynamic extension type (descriptors built by protocompile or protodesc).
var optionTypes = func() *protoregistry.Types {
	t := new(protoregistry.Types)
	for _, xt := range []protoreflect.ExtensionType{
		optionsv1.E_Message, optionsv1.E_Field, optionsv1.E_File, gofeaturespb.E_Go,
	} {
		if err := t.RegisterExtension(xt); err != nil {
			panic(err) // static set of distinct extensions
		}
	}
	return t
}()

// extension returns the value of extension xt in the options message opts,
// or the zero T when opts does not carry it. It works whether the extension
// is present with its generated type, with a dynamic type, or as unknown
// fields (descriptors built by protocompile, protodesc or dynamicpb).
func extension[T proto.Message](opts proto.Message, xt protoreflect.ExtensionType) T {
	var zero T
	if opts == nil || !opts.ProtoReflect().IsValid() {
		return zero
	}
	m := opts.ProtoReflect()
	if v, ok := knownExtension[T](m, xt); ok {
		return v
	}
	// Re-read the wire form into the generated options type with a resolver
	// that knows xt.
	target := newGeneratedOptions(m.Descriptor().FullName())
	if target == nil {
		return zero
	}
	b, err := proto.MarshalOptions{AllowPartial: true}.Marshal(opts)
	if err != nil || len(b) == 0 {
		return zero
	}
	if err := (proto.UnmarshalOptions{AllowPartial: true, Resolver: optionTypes}).Unmarshal(b, target); err != nil {
		return zero
	}
	if !proto.HasExtension(target, xt) {
		return zero
	}
	v, _ := proto.GetExtension(target, xt).(T)
	return v
}

// knownExtension reads xt from m when m holds it with xt's own Go type.
func knownExtension[T proto.Message](m protoreflect.Message, xt protoreflect.ExtensionType) (T, bool) {
	var zero T
	xd := xt.TypeDescriptor()
	found := false
	var val protoreflect.Value
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.IsExtension() && fd.Number() == xd.Number() {
			found, val = true, v
			if xfd, ok := fd.(protoreflect.ExtensionTypeDescriptor); !ok || xfd.Type() != xt {
				found = false // dynamic type: take the slow path
			}
			return false
		}
		return true
	})
	if !found {
		return zero, false
	}
	v, ok := val.Message().Interface().(T)
	return v, ok
}

// newGeneratedOptions returns a new generated message for an options (or
// feature set) message of descriptor.proto.
func newGeneratedOptions(name protoreflect.FullName) proto.Message {
	switch name {
	case "google.protobuf.MessageOptions":
		return new(descriptorpb.MessageOptions)
	case "google.protobuf.FieldOptions":
		return new(descriptorpb.FieldOptions)
	case "google.protobuf.FileOptions":
		return new(descriptorpb.FileOptions)
	case "google.protobuf.FeatureSet":
		return new(descriptorpb.FeatureSet)
	}
	return nil
}

// listActionsEnabled reports (edgekit.options.v1.message).list_actions.
func listActionsEnabled(md protoreflect.MessageDescriptor) bool {
	return extension[*optionsv1.MessageOptions](md.Options(), optionsv1.E_Message).GetListActions()
}

// isAtomic reports (edgekit.options.v1.field).atomic.
func isAtomic(fd protoreflect.FieldDescriptor) bool {
	return extension[*optionsv1.FieldOptions](fd.Options(), optionsv1.E_Field).GetAtomic()
}

// isRedacted reports the standard debug_redact field option, also when the
// options message is not the generated descriptorpb type.
func isRedacted(fd protoreflect.FieldDescriptor) bool {
	if o, ok := fd.Options().(*descriptorpb.FieldOptions); ok {
		return o.GetDebugRedact()
	}
	opts := fd.Options()
	if opts == nil || !opts.ProtoReflect().IsValid() {
		return false
	}
	b, err := proto.MarshalOptions{AllowPartial: true}.Marshal(opts)
	if err != nil {
		return false
	}
	var o descriptorpb.FieldOptions
	if err := (proto.UnmarshalOptions{AllowPartial: true, DiscardUnknown: true}).Unmarshal(b, &o); err != nil {
		return false
	}
	return o.GetDebugRedact()
}

// isWellKnown reports whether md belongs to package google.protobuf.
func isWellKnown(md protoreflect.MessageDescriptor) bool {
	return md.ParentFile() != nil && md.ParentFile().Package() == "google.protobuf"
}

// isOpaque reports whether the Go struct of md is not open (opaque API).
// A registered Go type decides through the protogen tag of its state field;
// without one, the pb.go api_level feature of md, its enclosing messages or
// its file decides, defaulting to opaque from edition 2024 on.
func isOpaque(md protoreflect.MessageDescriptor) bool {
	if mt, err := protoregistry.GlobalTypes.FindMessageByName(md.FullName()); err == nil {
		if t := reflect.TypeOf(mt.Zero().Interface()); t != nil && t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Struct {
			if sf, ok := t.Elem().FieldByName("state"); ok {
				return sf.Tag.Get("protogen") == "opaque.v1"
			}
		}
		return false
	}
	if md.ParentFile() == nil || md.ParentFile().Syntax() != protoreflect.Editions {
		return false
	}
	for d := protoreflect.Descriptor(md); d != nil; d = d.Parent() {
		if lvl, ok := apiLevel(d.Options()); ok {
			return lvl == gofeaturespb.GoFeatures_API_OPAQUE
		}
		if _, isFile := d.(protoreflect.FileDescriptor); isFile {
			break
		}
	}
	return fileEdition(md.ParentFile()) >= descriptorpb.Edition_EDITION_2024
}

// apiLevel returns the explicit pb.go api_level feature in opts.
func apiLevel(opts proto.Message) (gofeaturespb.GoFeatures_APILevel, bool) {
	if opts == nil || !opts.ProtoReflect().IsValid() {
		return 0, false
	}
	fd := opts.ProtoReflect().Descriptor().Fields().ByName("features")
	if fd == nil || !opts.ProtoReflect().Has(fd) {
		return 0, false
	}
	gf := extension[*gofeaturespb.GoFeatures](opts.ProtoReflect().Get(fd).Message().Interface(), gofeaturespb.E_Go)
	if gf == nil || gf.ApiLevel == nil || gf.GetApiLevel() == gofeaturespb.GoFeatures_API_LEVEL_UNSPECIFIED {
		return 0, false
	}
	return gf.GetApiLevel(), true
}

// fileEdition returns the edition of an editions file.
func fileEdition(fd protoreflect.FileDescriptor) descriptorpb.Edition {
	type editioner interface{ Edition() int32 }
	if e, ok := fd.(editioner); ok {
		return descriptorpb.Edition(e.Edition())
	}
	return protodesc.ToFileDescriptorProto(fd).GetEdition()
}
