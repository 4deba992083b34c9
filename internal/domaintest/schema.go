package domaintest

import (
	"regexp"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"

	optionsv1 "github.com/edgekit/edgekit/proto/edgekit/options/v1"
)

// sensitiveField names fields that must be marked debug_redact.
var sensitiveField = regexp.MustCompile(`kubeconfig|token|password|secret_value|access_vars|credentials|private_key`)

// SchemaOptions checks the messages of proto package pkg: keys lists every
// message with an object_key field and that field, listActions every message
// enabling list actions, and every field whose name looks sensitive must be
// debug_redact.
func SchemaOptions(t *testing.T, pkg protoreflect.FullName, keys map[protoreflect.Name]protoreflect.Name, listActions map[protoreflect.Name]bool) {
	t.Helper()
	seenKeys := map[protoreflect.Name]protoreflect.Name{}
	seenLists := map[protoreflect.Name]bool{}
	var files int
	protoregistry.GlobalFiles.RangeFilesByPackage(pkg, func(fd protoreflect.FileDescriptor) bool {
		files++
		msgs := fd.Messages()
		for i := range msgs.Len() {
			md := msgs.Get(i)
			mo, _ := proto.GetExtension(md.Options(), optionsv1.E_Message).(*optionsv1.MessageOptions)
			if mo.GetListActions() {
				seenLists[md.Name()] = true
			}
			fields := md.Fields()
			for j := range fields.Len() {
				f := fields.Get(j)
				fo, _ := f.Options().(*descriptorpb.FieldOptions)
				if sensitiveField.MatchString(string(f.Name())) && !fo.GetDebugRedact() {
					t.Errorf("%s looks sensitive but is not debug_redact", f.FullName())
				}
				eo, _ := proto.GetExtension(fo, optionsv1.E_Field).(*optionsv1.FieldOptions)
				if eo.GetObjectKey() {
					seenKeys[md.Name()] = f.Name()
				}
			}
		}
		return true
	})
	if files == 0 {
		t.Fatalf("no files registered for package %s", pkg)
	}
	for m, f := range keys {
		if seenKeys[m] != f {
			t.Errorf("object key of %s = %q, want %q", m, seenKeys[m], f)
		}
	}
	for m, f := range seenKeys {
		if _, ok := keys[m]; !ok {
			t.Errorf("%s has unexpected object key %q", m, f)
		}
	}
	for m := range listActions {
		if !seenLists[m] {
			t.Errorf("%s lacks list_actions", m)
		}
	}
	for m := range seenLists {
		if !listActions[m] {
			t.Errorf("%s has unexpected list_actions", m)
		}
	}
}
