package reference_test

import (
	"testing"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/edgekit/edgekit/fieldmap"
	"github.com/edgekit/edgekit/internal/reference"
	"github.com/edgekit/edgekit/internal/reference/reftest"
)

// desc returns a test message descriptor.
func desc(t testing.TB, name protoreflect.FullName) protoreflect.MessageDescriptor {
	t.Helper()
	md, err := reftest.Message(name)
	if err != nil {
		t.Fatal(err)
	}
	return md
}

// msg builds a dynamic message of type name from text format.
func msg(t testing.TB, name protoreflect.FullName, text string) protoreflect.Message {
	t.Helper()
	m := dynamicpb.NewMessage(desc(t, name))
	if err := prototext.Unmarshal([]byte(text), m); err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	return m
}

// fm builds a validated FieldMap of md from flags or name paths with
// optional ":add" / ":remove" suffixes.
func fm(t testing.TB, md protoreflect.MessageDescriptor, elems ...string) *fieldmap.FieldMap {
	t.Helper()
	m, err := reference.NewSchema(md).Parse(elems...)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// text renders m compactly for failure messages.
func text(m protoreflect.Message) string {
	return prototext.MarshalOptions{}.Format(m.Interface())
}

// clone deep-copies a message (proto.Clone loses -0 in generated
// implicit-presence floats; reference.Clone does not).
func clone(m protoreflect.Message) protoreflect.Message {
	return reference.Clone(m.Interface()).ProtoReflect()
}

// bits marshals m deterministically: equal bytes mean bit-for-bit equal
// content (floats included), which is what the change count reports.
func bits(t testing.TB, m protoreflect.Message) string {
	t.Helper()
	b, err := proto.MarshalOptions{Deterministic: true, AllowPartial: true}.Marshal(m.Interface())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
