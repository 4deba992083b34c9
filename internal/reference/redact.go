package reference

import "google.golang.org/protobuf/reflect/protoreflect"

// Redact clears every field of m marked with the standard debug_redact
// option, at every depth: through singular message fields, oneofs, list
// elements and map values. It does not look inside google.protobuf.Any
// payloads (they are bytes). A nil or invalid m is left alone.
func Redact(m protoreflect.Message) {
	if m == nil || !m.IsValid() {
		return
	}
	for _, fd := range sortedFields(m.Descriptor()) {
		if !m.Has(fd) {
			continue
		}
		if isRedacted(fd) {
			m.Clear(fd)
			continue
		}
		switch {
		case fd.IsMap():
			if k := fd.MapValue().Kind(); k == protoreflect.MessageKind || k == protoreflect.GroupKind {
				m.Get(fd).Map().Range(func(_ protoreflect.MapKey, v protoreflect.Value) bool {
					Redact(v.Message())
					return true
				})
			}
		case fd.Message() != nil && fd.IsList():
			l := m.Get(fd).List()
			for i := 0; i < l.Len(); i++ {
				Redact(l.Get(i).Message())
			}
		case fd.Message() != nil:
			Redact(m.Get(fd).Message())
		}
	}
}
