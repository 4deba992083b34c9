package reference

import (
	"slices"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/edgekit/edgekit/fieldmap"
)

// ValidateEnums returns a *fieldmap.InvalidEnumError for the first enum
// value held in m that its enum does not define, or nil. Fields are visited
// by field number, depth first; list elements by index and map entries by
// key. The error's Message is m's full name and its Field the dot-joined
// proto names from m (for a list or map, the field's path without index or
// key). Extensions and google.protobuf.Any payloads are not inspected.
func ValidateEnums(m protoreflect.Message) error {
	if m == nil || !m.IsValid() {
		return nil
	}
	return validateEnums(m, string(m.Descriptor().FullName()), "")
}

func validateEnums(m protoreflect.Message, top, prefix string) error {
	if !m.IsValid() {
		return nil
	}
	for _, fd := range sortedFields(m.Descriptor()) {
		if !m.Has(fd) {
			continue
		}
		path := prefix + string(fd.Name())
		v := m.Get(fd)
		switch {
		case fd.IsList():
			l := v.List()
			for i := 0; i < l.Len(); i++ {
				if err := checkEnum(fd, l.Get(i), top, path); err != nil {
					return err
				}
			}
		case fd.IsMap():
			mp := v.Map()
			keys := make([]protoreflect.MapKey, 0, mp.Len())
			mp.Range(func(k protoreflect.MapKey, _ protoreflect.Value) bool {
				keys = append(keys, k)
				return true
			})
			slices.SortFunc(keys, compareKeys)
			for _, k := range keys {
				if err := checkEnum(fd.MapValue(), mp.Get(k), top, path); err != nil {
					return err
				}
			}
		default:
			if err := checkEnum(fd, v, top, path); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkEnum checks one value of field fd: an enum value, or a message to
// descend into.
func checkEnum(fd protoreflect.FieldDescriptor, v protoreflect.Value, top, path string) error {
	switch fd.Kind() {
	case protoreflect.EnumKind:
		if fd.Enum().Values().ByNumber(v.Enum()) == nil {
			return &fieldmap.InvalidEnumError{Message: top, Field: path,
				Enum: string(fd.Enum().FullName()), Value: int32(v.Enum())}
		}
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return validateEnums(v.Message(), top, path+".")
	}
	return nil
}

// compareKeys orders map keys of one kind.
func compareKeys(a, b protoreflect.MapKey) int {
	switch x := a.Interface().(type) {
	case bool:
		y := b.Bool()
		switch {
		case x == y:
			return 0
		case !x:
			return -1
		}
		return 1
	case int32, int64:
		return cmpOrdered(a.Int(), b.Int())
	case uint32, uint64:
		return cmpOrdered(a.Uint(), b.Uint())
	}
	return cmpOrdered(a.String(), b.String())
}

func cmpOrdered[T int64 | uint64 | string](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
