package fieldmap

import (
	"bytes"
	"maps"
	"unsafe"

	"google.golang.org/protobuf/proto"
)

// Value is how the table-driven DiffFields (Diff) compares a field that has
// no Op: a map, a message, a list of messages or a oneof member. Generated
// shapes hold a pointer to a literal of one of the exported types below,
// which implement it: static data, like the rest of a shape, so that a
// package's shapes cost no code to build. Their Off is the offset of the
// field's Go struct field; the methods take pointers to the messages
// holding the field.
type Value interface {
	// equal compares the fields of a and b under proto.Equal's rules.
	equal(a, b unsafe.Pointer) bool
	// present and get serve message fields (and message members) that
	// flags lie below: whether m holds the message, and the message (or
	// nil).
	present(m unsafe.Pointer) bool
	get(m unsafe.Pointer) unsafe.Pointer
}

// notMessage is embedded by the Values of fields no flag lies below.
type notMessage struct{}

func (notMessage) present(unsafe.Pointer) bool { panic("fieldmap: not a message field") }
func (notMessage) get(unsafe.Pointer) unsafe.Pointer {
	panic("fieldmap: not a message field")
}

// field returns a pointer to the field of type T at offset off of m.
func field[T any](m unsafe.Pointer, off uintptr) *T { return (*T)(unsafe.Add(m, off)) }

// MessageField is the Value of a singular message field of Go type P: nil
// is absent; messages compare with Equal (through the generated method
// when there is one).
type MessageField[P proto.Message] struct{ Off uintptr }

func (v *MessageField[P]) equal(a, b unsafe.Pointer) bool {
	return Equal(*field[P](a, v.Off), *field[P](b, v.Off))
}

func (v *MessageField[P]) present(m unsafe.Pointer) bool {
	return *field[unsafe.Pointer](m, v.Off) != nil
}

func (v *MessageField[P]) get(m unsafe.Pointer) unsafe.Pointer {
	return *field[unsafe.Pointer](m, v.Off)
}

// MessageBelow is the Value of a singular message field with flags below
// it, which Diff compares through its shape: it only reads the pointer, so
// it is not generic, and costs a package no type per message.
type MessageBelow struct{ Off uintptr }

func (v *MessageBelow) equal(a, b unsafe.Pointer) bool {
	panic("fieldmap: a message field with flags below it is compared through its shape")
}

func (v *MessageBelow) present(m unsafe.Pointer) bool {
	return *field[unsafe.Pointer](m, v.Off) != nil
}

func (v *MessageBelow) get(m unsafe.Pointer) unsafe.Pointer { return *field[unsafe.Pointer](m, v.Off) }

// MessageList is the Value of a list of messages of Go type P: a nil
// element equals an empty message.
type MessageList[P proto.Message] struct {
	notMessage
	Off uintptr
}

func (v *MessageList[P]) equal(a, b unsafe.Pointer) bool {
	return EqualListFunc(*field[[]P](a, v.Off), *field[[]P](b, v.Off), equalHeld[P])
}

// equalHeld compares two messages held where the proto runtime reads nil
// as an empty message (a list element, a map value), as EqualElem does: a
// message equals an empty one exactly when it has nothing to encode.
func equalHeld[P proto.Message](a, b P) bool {
	an, bn := isNilMessage(a), isNilMessage(b)
	switch {
	case an && bn:
		return true
	case an:
		return proto.Size(b) == 0
	case bn:
		return proto.Size(a) == 0
	}
	return Equal(a, b)
}

// isNilMessage reports whether m, a message pointer, is nil.
func isNilMessage[P proto.Message](m P) bool {
	return *(*unsafe.Pointer)(unsafe.Pointer(&m)) == nil
}

// ScalarMap is the Value of a map whose values compare with == (integers,
// bools, strings, enums).
type ScalarMap[K, V comparable] struct {
	notMessage
	Off uintptr
}

func (v *ScalarMap[K, V]) equal(a, b unsafe.Pointer) bool {
	return maps.Equal(*field[map[K]V](a, v.Off), *field[map[K]V](b, v.Off))
}

// FloatMap is the Value of a map of floats or doubles: NaN equals NaN.
type FloatMap[K comparable, V float32 | float64] struct {
	notMessage
	Off uintptr
}

func (v *FloatMap[K, V]) equal(a, b unsafe.Pointer) bool {
	return EqualMapFunc(*field[map[K]V](a, v.Off), *field[map[K]V](b, v.Off), func(x, y V) bool { return x == y || x != x && y != y })
}

// BytesMap is the Value of a map of bytes.
type BytesMap[K comparable] struct {
	notMessage
	Off uintptr
}

func (v *BytesMap[K]) equal(a, b unsafe.Pointer) bool {
	return EqualMapFunc(*field[map[K][]byte](a, v.Off), *field[map[K][]byte](b, v.Off), bytes.Equal)
}

// MessageMap is the Value of a map of messages of Go type P: a nil value
// equals an empty message.
type MessageMap[K comparable, P proto.Message] struct {
	notMessage
	Off uintptr
}

func (v *MessageMap[K, P]) equal(a, b unsafe.Pointer) bool {
	return EqualMapFunc(*field[map[K]P](a, v.Off), *field[map[K]P](b, v.Off), equalHeld[P])
}

// A oneof member's Value reads the oneof's interface field through Load, a
// function generated code gives because that field's type may be
// unexported in another package (the member's wrapper type never is),
// and the member's value in the wrapper's one field, at offset 0 as
// protoc-gen-go declares wrappers. W is the wrapper's pointer type.

// wrapper returns the wrapper of type W that m's oneof holds, or nil (also
// for a typed nil wrapper, which holds no member).
func wrapper[W any](load func(unsafe.Pointer) any, m unsafe.Pointer) unsafe.Pointer {
	w, _ := load(m).(W)
	return *(*unsafe.Pointer)(unsafe.Pointer(&w))
}

// equalMember compares the member of wrapper type W of a and b with eq.
func equalMember[W, V any](load func(unsafe.Pointer) any, a, b unsafe.Pointer, eq func(x, y V) bool) bool {
	aw, bw := wrapper[W](load, a), wrapper[W](load, b)
	if aw == nil || bw == nil {
		return aw == nil && bw == nil
	}
	return eq(*(*V)(aw), *(*V)(bw))
}

// ScalarMember is the Value of a oneof member whose value compares with
// == (integers, bools, strings, enums).
type ScalarMember[W any, V comparable] struct {
	notMessage
	Load func(m unsafe.Pointer) any
}

func (v *ScalarMember[W, V]) equal(a, b unsafe.Pointer) bool {
	return equalMember[W](v.Load, a, b, func(x, y V) bool { return x == y })
}

// FloatMember is the Value of a oneof member of type float or double: NaN
// equals NaN.
type FloatMember[W any, V float32 | float64] struct {
	notMessage
	Load func(m unsafe.Pointer) any
}

func (v *FloatMember[W, V]) equal(a, b unsafe.Pointer) bool {
	return equalMember[W](v.Load, a, b, func(x, y V) bool { return x == y || x != x && y != y })
}

// BytesMember is the Value of a oneof member of type bytes.
type BytesMember[W any] struct {
	notMessage
	Load func(m unsafe.Pointer) any
}

func (v *BytesMember[W]) equal(a, b unsafe.Pointer) bool {
	return equalMember[W](v.Load, a, b, bytes.Equal)
}

// MessageMember is the Value of a oneof member holding a message of Go
// type P, compared with Equal.
type MessageMember[W any, P proto.Message] struct {
	Load func(m unsafe.Pointer) any
}

func (v *MessageMember[W, P]) equal(a, b unsafe.Pointer) bool {
	return equalMember[W](v.Load, a, b, Equal[P])
}

func (v *MessageMember[W, P]) present(m unsafe.Pointer) bool { return wrapper[W](v.Load, m) != nil }

func (v *MessageMember[W, P]) get(m unsafe.Pointer) unsafe.Pointer {
	if w := wrapper[W](v.Load, m); w != nil {
		return *(*unsafe.Pointer)(w)
	}
	return nil
}
