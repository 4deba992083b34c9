package fieldmap

import (
	"slices"
	"strconv"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// KeyString renders a key message (the type of an object_key field) in the
// format of the generated GetKeyString of its objects, by reflection: the
// "name=value" pairs of every field in field number order, nested messages
// flattened with dotted names, values escaped as AppendKeyValue does, enums
// by name (by number when undefined). So KeyString(obj.GetKey()) equals
// obj.GetKeyString(), and code holding only a key (a cache lookup) finds the
// object. A nil key renders as an empty one.
func KeyString(key proto.Message) string {
	if key == nil {
		return ""
	}
	var b []byte
	first := true
	appendKeyFields(&b, key.ProtoReflect(), "", &first)
	return string(b)
}

func appendKeyFields(b *[]byte, m protoreflect.Message, prefix string, first *bool) {
	fields := m.Descriptor().Fields()
	fds := make([]protoreflect.FieldDescriptor, fields.Len())
	for i := range fds {
		fds[i] = fields.Get(i)
	}
	slices.SortFunc(fds, func(a, c protoreflect.FieldDescriptor) int { return int(a.Number()) - int(c.Number()) })
	for _, fd := range fds {
		name := prefix + string(fd.Name())
		if fd.Kind() == protoreflect.MessageKind || fd.Kind() == protoreflect.GroupKind {
			// A nil sub-message reads as an empty one: m.Get returns that.
			appendKeyFields(b, m.Get(fd).Message(), name+".", first)
			continue
		}
		if !*first {
			*b = append(*b, ',')
		}
		*first = false
		*b = append(*b, name...)
		*b = append(*b, '=')
		*b = AppendKeyScalar(*b, fd, m.Get(fd))
	}
}

// AppendKeyScalar appends v, a value of scalar or enum field fd, as the key
// string format renders it.
func AppendKeyScalar(b []byte, fd protoreflect.FieldDescriptor, v protoreflect.Value) []byte {
	switch fd.Kind() {
	case protoreflect.StringKind:
		return AppendKeyValue(b, v.String())
	case protoreflect.BoolKind:
		return strconv.AppendBool(b, v.Bool())
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind,
		protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return strconv.AppendInt(b, v.Int(), 10)
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return strconv.AppendUint(b, v.Uint(), 10)
	case protoreflect.FloatKind:
		return strconv.AppendFloat(b, v.Float(), 'g', -1, 32)
	case protoreflect.DoubleKind:
		return strconv.AppendFloat(b, v.Float(), 'g', -1, 64)
	case protoreflect.EnumKind:
		if ev := fd.Enum().Values().ByNumber(v.Enum()); ev != nil {
			return append(b, ev.Name()...)
		}
		return strconv.AppendInt(b, int64(v.Enum()), 10)
	}
	// Bytes and lists are not key fields (the generator rejects them):
	// render them escaped so the function stays total.
	return AppendKeyValue(b, v.String())
}
