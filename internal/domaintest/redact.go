// Package domaintest holds the checks every domain package (edgeproto,
// fluidos) runs on itself: its generated Redact leaves no secret behind,
// and its schema carries the object keys, list actions and debug_redact
// marks it declares.
package domaintest

import (
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/edgekit/edgekit/internal/randmsg"
	"github.com/edgekit/edgekit/internal/reference"
)

type redacter interface{ Redact() }

// RedactLeavesNoSecret fills `seeds` random messages of every message type of proto package
// pkg, calls their generated Redact and fails naming any secret left. It
// also fails when no message of pkg carried a secret before redaction, so
// the check cannot pass vacuously, and reports how many did.
func RedactLeavesNoSecret(t *testing.T, pkg protoreflect.FullName, seeds int) {
	t.Helper()
	types, withSecrets := 0, 0
	protoregistry.GlobalTypes.RangeMessages(func(mt protoreflect.MessageType) bool {
		md := mt.Descriptor()
		if md.ParentFile().Package() != pkg {
			return true
		}
		types++
		for seed := range seeds {
			m := mt.New()
			randmsg.Fill(m, randmsg.New(uint64(seed)), randmsg.Options{})
			before := reference.Clone(m.Interface()) // not proto.Clone, which drops -0
			if len(reference.Secrets(m)) > 0 {
				withSecrets++
			}
			r, ok := m.Interface().(redacter)
			if !ok {
				t.Fatalf("%s has no generated Redact method", md.FullName())
			}
			r.Redact()
			if left := reference.Secrets(m); len(left) > 0 {
				t.Fatalf("%s (seed %d): Redact left secrets at %v", md.FullName(), seed, left)
			}
			// Redact must change nothing else: the reference redaction of the
			// original must equal the result.
			reference.Redact(before.ProtoReflect())
			if !proto.Equal(before, m.Interface()) {
				t.Fatalf("%s (seed %d): Redact changed non-secret fields", md.FullName(), seed)
			}
		}
		return true
	})
	if types == 0 {
		t.Fatalf("no message types registered for package %s", pkg)
	}
	if withSecrets == 0 {
		t.Fatalf("no random message of package %s carried a secret: the check proves nothing", pkg)
	}
	t.Logf("%d message types, %d random messages carried secrets, none left after Redact", types, withSecrets)
}
