package reference

import (
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"

	optionsv1 "github.com/edgekit/edgekit/proto/edgekit/options/v1"
)

// TestExtensionForms reads the message option from the three forms options
// arrive in: with the generated extension type, as unknown fields, and
// absent.
func TestExtensionForms(t *testing.T) {
	typed := &descriptorpb.MessageOptions{}
	proto.SetExtension(typed, optionsv1.E_Message, &optionsv1.MessageOptions{ListActions: true})
	b, err := proto.Marshal(typed)
	if err != nil {
		t.Fatal(err)
	}
	unknown := &descriptorpb.MessageOptions{}
	if err := (proto.UnmarshalOptions{Resolver: new(protoregistry.Types)}).Unmarshal(b, unknown); err != nil {
		t.Fatal(err)
	}
	if len(unknown.ProtoReflect().GetUnknown()) == 0 {
		t.Fatal("test setup: option is not an unknown field")
	}
	for name, tc := range map[string]struct {
		opts proto.Message
		want bool
	}{
		"typed":   {typed, true},
		"unknown": {unknown, true},
		"absent":  {&descriptorpb.MessageOptions{}, false},
		"nil":     {(*descriptorpb.MessageOptions)(nil), false},
	} {
		got := extension[*optionsv1.MessageOptions](tc.opts, optionsv1.E_Message).GetListActions()
		if got != tc.want {
			t.Errorf("%s: list_actions = %v, want %v", name, got, tc.want)
		}
	}
	// The unknown form is left as it was.
	if len(unknown.ProtoReflect().GetUnknown()) == 0 {
		t.Error("reading changed the options message")
	}
}

func TestIsOpaque(t *testing.T) {
	// Generated open struct.
	if isOpaque((&optionsv1.MessageOptions{}).ProtoReflect().Descriptor()) {
		t.Error("optionsv1.MessageOptions reads as opaque")
	}
	// Proto2/proto3 descriptors without a Go type are never opaque.
	if isOpaque((&descriptorpb.FileDescriptorProto{}).ProtoReflect().Descriptor()) {
		t.Error("descriptorpb reads as opaque")
	}
}
