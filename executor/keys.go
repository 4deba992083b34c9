package executor

import (
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// keyStringer is implemented by key messages with a generated GetKeyString.
type keyStringer interface{ GetKeyString() string }

// KeyString renders a key message (CloudletKey, ClusterKey...) or an object
// that has one in its "key" field (Cloudlet, ClusterInstInfo...) as a
// string that is equal for equal keys. An object and its key give the same
// string, so a cache of objects can be read by key. It uses the key
// message's generated GetKeyString when there is one; otherwise it joins
// the key's fields in field order ("organization=acme,name=site1", nested
// keys in braces). A nil or keyless message gives "".
func KeyString(m proto.Message) string {
	if m == nil {
		return ""
	}
	rm := m.ProtoReflect()
	if !rm.IsValid() {
		return ""
	}
	if fd := rm.Descriptor().Fields().ByName("key"); fd != nil && fd.Message() != nil && !fd.IsList() && !fd.IsMap() {
		if !rm.Has(fd) {
			return ""
		}
		return keyMsgString(rm.Get(fd).Message().Interface())
	}
	return keyMsgString(m)
}

func keyMsgString(m proto.Message) string {
	if k, ok := m.(keyStringer); ok {
		return k.GetKeyString()
	}
	var b strings.Builder
	writeKey(&b, m.ProtoReflect())
	return b.String()
}

func writeKey(b *strings.Builder, m protoreflect.Message) {
	fields := m.Descriptor().Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(string(fd.Name()))
		b.WriteByte('=')
		v := m.Get(fd)
		switch {
		case fd.IsList() || fd.IsMap():
			// Keys hold only scalars and keys; anything else is rendered
			// by its count so the function stays total.
			b.WriteString(strconv.Itoa(listOrMapLen(v, fd)))
		case fd.Message() != nil:
			b.WriteByte('{')
			writeKey(b, v.Message())
			b.WriteByte('}')
		case fd.Kind() == protoreflect.StringKind:
			b.WriteString(quoteKey(v.String()))
		default:
			b.WriteString(v.String())
		}
	}
}

func listOrMapLen(v protoreflect.Value, fd protoreflect.FieldDescriptor) int {
	if fd.IsMap() {
		return v.Map().Len()
	}
	return v.List().Len()
}

// quoteKey escapes the separators so that distinct keys never render alike.
func quoteKey(s string) string {
	if !strings.ContainsAny(s, `,={}\`) {
		return s
	}
	r := strings.NewReplacer(`\`, `\\`, `,`, `\,`, `=`, `\=`, `{`, `\{`, `}`, `\}`)
	return r.Replace(s)
}
