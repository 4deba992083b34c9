package reference

import (
	"fmt"

	"google.golang.org/protobuf/reflect/protoreflect"
)

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

// Secrets returns the paths (dot-joined field names, with [i] and [key] for
// list elements and map values) of every populated field of m marked
// debug_redact, at every depth: what a Redact must leave empty.
func Secrets(m protoreflect.Message) []string {
	var out []string
	var walk func(m protoreflect.Message, prefix string)
	walk = func(m protoreflect.Message, prefix string) {
		if m == nil || !m.IsValid() {
			return
		}
		for _, fd := range sortedFields(m.Descriptor()) {
			if !m.Has(fd) {
				continue
			}
			path := prefix + string(fd.Name())
			if isRedacted(fd) {
				out = append(out, path)
				continue
			}
			switch {
			case fd.IsMap():
				if k := fd.MapValue().Kind(); k == protoreflect.MessageKind || k == protoreflect.GroupKind {
					m.Get(fd).Map().Range(func(k protoreflect.MapKey, v protoreflect.Value) bool {
						walk(v.Message(), fmt.Sprintf("%s[%v].", path, k.Interface()))
						return true
					})
				}
			case fd.Message() != nil && fd.IsList():
				l := m.Get(fd).List()
				for i := 0; i < l.Len(); i++ {
					walk(l.Get(i).Message(), fmt.Sprintf("%s[%d].", path, i))
				}
			case fd.Message() != nil:
				walk(m.Get(fd).Message(), path+".")
			}
		}
	}
	walk(m, "")
	return out
}
