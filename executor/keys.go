package executor

import (
	"google.golang.org/protobuf/proto"

	"github.com/edgekit/edgekit/fieldmap"
)

// keyStringer is implemented by objects with a generated GetKeyString.
type keyStringer interface{ GetKeyString() string }

// KeyString renders an object (Cloudlet, ClusterInstInfo...) or its key
// message (CloudletKey, ClusterKey...) as the object's generated
// GetKeyString does, so that an object and its key give the same string and
// a cache of objects can be read by key. A nil message, or an object whose
// key field is unset, gives "".
func KeyString(m proto.Message) string {
	if m == nil || !m.ProtoReflect().IsValid() {
		return ""
	}
	rm := m.ProtoReflect()
	if fd := rm.Descriptor().Fields().ByName("key"); fd != nil && fd.Message() != nil && !fd.IsList() && !fd.IsMap() {
		if !rm.Has(fd) {
			return "" // an object without its key: not addressable
		}
		if k, ok := m.(keyStringer); ok {
			return k.GetKeyString()
		}
		return fieldmap.KeyString(rm.Get(fd).Message().Interface())
	}
	if k, ok := m.(keyStringer); ok {
		return k.GetKeyString()
	}
	return fieldmap.KeyString(m)
}
