package fieldmap

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// EnumErrorAt re-roots err, returned by the ValidateEnums of a sub-message
// held at field path field (dot-joined proto names) of message, so that it
// names message and the full path from it. A *InvalidEnumError anywhere in
// err's chain gives a new *InvalidEnumError; any other error is wrapped with
// the path. A nil err gives nil.
func EnumErrorAt(err error, message, field string) error {
	if err == nil {
		return nil
	}
	var ie *InvalidEnumError
	if errors.As(err, &ie) {
		return &InvalidEnumError{Message: message, Field: field + "." + ie.Field, Enum: ie.Enum, Value: ie.Value}
	}
	return fmt.Errorf("%s.%s: %w", message, field, err)
}

// ValidateEnumsAt validates sub, a message held at field path field of
// message, and reports what it finds as EnumErrorAt does. It calls sub's
// generated ValidateEnums when sub has one; otherwise it walks sub by
// reflection in the order generated code uses: fields by number, depth
// first, list elements by index and map entries by key. Extensions and the
// payloads of google.protobuf.Any are not inspected. A nil sub is valid.
func ValidateEnumsAt(sub proto.Message, message, field string) error {
	if v, ok := sub.(enumValidator); ok {
		return EnumErrorAt(v.ValidateEnums(), message, field)
	}
	if sub == nil {
		return nil
	}
	return validateEnumsOrdered(sub.ProtoReflect(), message, field+".")
}

func validateEnumsOrdered(m protoreflect.Message, top, prefix string) error {
	if !m.IsValid() {
		return nil
	}
	fields := m.Descriptor().Fields()
	fds := make([]protoreflect.FieldDescriptor, fields.Len())
	for i := range fds {
		fds[i] = fields.Get(i)
	}
	slices.SortFunc(fds, func(a, b protoreflect.FieldDescriptor) int { return int(a.Number()) - int(b.Number()) })
	for _, fd := range fds {
		if !m.Has(fd) {
			continue
		}
		path := prefix + string(fd.Name())
		v := m.Get(fd)
		switch {
		case fd.IsList():
			l := v.List()
			for i := 0; i < l.Len(); i++ {
				if err := checkEnumOrdered(fd, l.Get(i), top, path); err != nil {
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
			slices.SortFunc(keys, validateCompareKeys)
			for _, k := range keys {
				if err := checkEnumOrdered(fd.MapValue(), mp.Get(k), top, path); err != nil {
					return err
				}
			}
		default:
			if err := checkEnumOrdered(fd, v, top, path); err != nil {
				return err
			}
		}
	}
	return nil
}

func checkEnumOrdered(fd protoreflect.FieldDescriptor, v protoreflect.Value, top, path string) error {
	switch fd.Kind() {
	case protoreflect.EnumKind:
		if fd.Enum().Values().ByNumber(v.Enum()) == nil {
			return &InvalidEnumError{Message: top, Field: path, Enum: string(fd.Enum().FullName()), Value: int32(v.Enum())}
		}
	case protoreflect.MessageKind, protoreflect.GroupKind:
		if fd.Message().FullName() == "google.protobuf.Any" {
			return nil
		}
		return validateEnumsOrdered(v.Message(), top, path+".")
	}
	return nil
}

// validateCompareKeys orders two map keys of one kind: false before true,
// numbers by value, strings by bytes.
func validateCompareKeys(a, b protoreflect.MapKey) int {
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
		return validateCmp(a.Int(), b.Int())
	case uint32, uint64:
		return validateCmp(a.Uint(), b.Uint())
	}
	return strings.Compare(a.String(), b.String())
}

func validateCmp[T int64 | uint64](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
