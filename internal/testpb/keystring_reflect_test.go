package testpb_test

import (
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	_ "github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/fieldmap"
	_ "github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/internal/randmsg"
)

// TestKeyStringReflectMatchesGenerated holds fieldmap.KeyString (used by
// code that holds only a key, such as a cache lookup) to the generated
// GetKeyString of every object with a message key, on random objects.
func TestKeyStringReflectMatchesGenerated(t *testing.T) {
	type keyed interface {
		GetKeyString() string
	}
	checked := 0
	protoregistry.GlobalTypes.RangeMessages(func(mt protoreflect.MessageType) bool {
		md := mt.Descriptor()
		fd := md.Fields().ByName("key")
		if _, ok := mt.New().Interface().(keyed); !ok || fd == nil || fd.Message() == nil {
			return true
		}
		for seed := range 100 {
			m := mt.New()
			randmsg.Fill(m, randmsg.New(uint64(seed)), randmsg.Options{})
			if seed%10 == 0 {
				m.Clear(fd) // a nil key renders as an empty one
			}
			want := m.Interface().(keyed).GetKeyString()
			// An unset key reads as the read-only empty one.
			var key proto.Message = m.Get(fd).Message().Interface()
			if got := fieldmap.KeyString(key); got != want {
				t.Fatalf("%s (seed %d): fieldmap.KeyString = %q, GetKeyString = %q", md.FullName(), seed, got, want)
			}
			checked++
		}
		return true
	})
	if checked == 0 {
		t.Fatal("no keyed message types found")
	}
}
