package keys

import (
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
)

// requiresUTF8 reports whether string field fd must hold valid UTF-8, as
// proto.Marshal enforces it: proto3 fields, never proto2 fields, and
// editions fields unless features.utf8_validation, set on the field or
// else on its file, is NONE. Every edition so far defaults to VERIFY.
func requiresUTF8(fd protoreflect.FieldDescriptor) bool {
	switch fd.Syntax() {
	case protoreflect.Proto2:
		return false
	case protoreflect.Proto3:
		return true
	}
	for _, d := range []protoreflect.Descriptor{fd, fd.ParentFile()} {
		if v, ok := utf8Validation(d); ok {
			return v != descriptorpb.FeatureSet_NONE
		}
	}
	return true
}

// utf8Validation returns the features.utf8_validation set explicitly in the
// options of d.
func utf8Validation(d protoreflect.Descriptor) (descriptorpb.FeatureSet_Utf8Validation, bool) {
	opts := d.Options()
	if opts == nil {
		return 0, false
	}
	m := opts.ProtoReflect()
	f := m.Descriptor().Fields().ByName("features")
	if f == nil || !m.Has(f) {
		return 0, false
	}
	fs, ok := m.Get(f).Message().Interface().(*descriptorpb.FeatureSet)
	if !ok || fs.Utf8Validation == nil {
		return 0, false
	}
	return fs.GetUtf8Validation(), true
}
