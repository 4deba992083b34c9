package controller

import (
	"fmt"

	"github.com/edgekit/edgekit/fieldmap"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// withKey returns a new T whose key field is a copy of key.
func withKey[T proto.Message](key proto.Message) (T, error) {
	var zero T
	obj := zero.ProtoReflect().New()
	fd := obj.Descriptor().Fields().ByName("key")
	if fd == nil || fd.Message() == nil || key == nil || !key.ProtoReflect().IsValid() {
		return zero, invalidf("%s: key is missing", obj.Descriptor().Name())
	}
	if fd.Message().FullName() != key.ProtoReflect().Descriptor().FullName() {
		return zero, fmt.Errorf("%s: key of type %s", obj.Descriptor().Name(), key.ProtoReflect().Descriptor().FullName())
	}
	obj.Set(fd, protoreflect.ValueOfMessage(proto.Clone(key).ProtoReflect()))
	return obj.Interface().(T), nil
}

// stamp sets the Timestamp field name of obj to now, when obj has one.
func stamp(obj proto.Message, name protoreflect.Name) {
	m := obj.ProtoReflect()
	fd := m.Descriptor().Fields().ByName(name)
	if fd == nil || fd.Message() == nil || fd.Message().FullName() != "google.protobuf.Timestamp" {
		return
	}
	m.Set(fd, protoreflect.ValueOfMessage(timestamppb.Now().ProtoReflect()))
}

// redacted returns a copy of obj without its debug_redact fields, for
// anything sent to users.
func redacted[T proto.Message](obj T) T { return fieldmap.Redacted(obj) }

// matches reports whether every field set in filter has the same value in
// obj: message fields are compared field by field, lists and maps as a
// whole, scalars by value. An empty or nil filter matches everything.
func matches(filter, obj proto.Message) bool {
	if filter == nil || !filter.ProtoReflect().IsValid() {
		return true
	}
	return matchMessage(filter.ProtoReflect(), obj.ProtoReflect())
}

func matchMessage(f, o protoreflect.Message) bool {
	ok := true
	f.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList() || fd.IsMap():
			ok = o.Has(fd) && v.Equal(o.Get(fd))
		case fd.Message() != nil:
			ok = o.Has(fd) && matchMessage(v.Message(), o.Get(fd).Message())
		default:
			ok = v.Equal(o.Get(fd))
		}
		return ok
	})
	return ok
}
