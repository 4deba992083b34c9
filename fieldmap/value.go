package fieldmap

import (
	"bytes"
	"fmt"
	"maps"
	"reflect"
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

// The non-generic Values below are what the generator emits since
// SupportPackageIsVersion5: a generic Value costs the package that
// instantiates it three methods, a dictionary and type descriptors per type
// argument, where these cost it nothing but static data. They take the
// equality of a message type as Eq, a function of type func(*M, *M) bool
// held in an interface (the message's generated Equal method expression,
// (*M).Equal, a fieldmap helper such as EqualTimestamp, or Equal[*M]), and
// a oneof member's wrapper type as Wrapper, a nil pointer of that type held
// in an interface: both are static data in a shape literal. Eq must compare
// two messages of type *M under proto.Equal's rules, nil (absent) included;
// it is called through the shared signature func(a, b unsafe.Pointer) bool,
// which has the same calling convention.

// eqFunc is how the Values call an Eq: func(*M, *M) bool over raw pointers.
type eqFunc = func(a, b unsafe.Pointer) bool

// eface is the layout of an interface value of static type any.
type eface struct{ typ, data unsafe.Pointer }

// equalFunc returns the function eq holds, as an eqFunc.
func equalFunc(eq any) eqFunc {
	data := (*eface)(unsafe.Pointer(&eq)).data
	return *(*eqFunc)(unsafe.Pointer(&data))
}

// checkEq reports whether eq holds a func(*M, *M) bool for a struct type M,
// the only functions a Value may call as an eqFunc.
func checkEq(eq any) bool {
	t := reflect.TypeOf(eq)
	return t != nil && t.Kind() == reflect.Func && t.NumIn() == 2 && t.NumOut() == 1 &&
		t.In(0) == t.In(1) && t.In(0).Kind() == reflect.Pointer && t.In(0).Elem().Kind() == reflect.Struct &&
		t.Out(0).Kind() == reflect.Bool && !t.IsVariadic()
}

// checkWrapper reports whether w holds a nil pointer to a struct, as a
// oneof member's Wrapper does.
func checkWrapper(w any) bool {
	t := reflect.TypeOf(w)
	return t != nil && t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Struct
}

// checker is implemented by the Values whose fields a shape's preparation
// checks (Shape.prepare): a hand-written literal with a wrong Eq or Wrapper
// fails there, naming the field, instead of calling a function of another
// type.
type checker interface{ check() bool }

// oneofField is any interface type with a method: the Go type of a oneof
// field (an unexported interface of the message's package) has the same
// layout, so member reads the field through it.
type oneofField interface{ OneofWrapper() }

// member returns the wrapper of type wrapper's type that the oneof field at
// offset off of m holds, or nil (also for a typed nil wrapper, which holds
// no member).
func member(m unsafe.Pointer, off uintptr, wrapper any) unsafe.Pointer {
	x := any(*(*oneofField)(unsafe.Add(m, off)))
	ex, ew := (*eface)(unsafe.Pointer(&x)), (*eface)(unsafe.Pointer(&wrapper))
	if ex.typ != ew.typ {
		return nil
	}
	return ex.data
}

// EqMessage is the Value of a singular message field compared with Eq:
// nil is absent.
type EqMessage struct {
	Off uintptr
	Eq  any
}

func (v *EqMessage) equal(a, b unsafe.Pointer) bool {
	return equalFunc(v.Eq)(*field[unsafe.Pointer](a, v.Off), *field[unsafe.Pointer](b, v.Off))
}

func (v *EqMessage) present(m unsafe.Pointer) bool { return *field[unsafe.Pointer](m, v.Off) != nil }

func (v *EqMessage) get(m unsafe.Pointer) unsafe.Pointer { return *field[unsafe.Pointer](m, v.Off) }

func (v *EqMessage) check() bool { return checkEq(v.Eq) }

// EqMessageList is the Value of a list of messages compared with Eq, whose
// Go struct has Size bytes (checked against Eq's type when the shape is
// prepared): a nil element equals an empty message.
type EqMessageList struct {
	notMessage
	Off  uintptr
	Eq   any
	Size uintptr
}

func (v *EqMessageList) equal(a, b unsafe.Pointer) bool {
	la, lb := *field[[]unsafe.Pointer](a, v.Off), *field[[]unsafe.Pointer](b, v.Off)
	if len(la) != len(lb) {
		return false
	}
	eq := equalFunc(v.Eq)
	for i, x := range la {
		y := lb[i]
		if x == nil || y == nil {
			if x == y {
				continue
			}
			// A fresh empty message of the element type, not a shared
			// zero block: an Eq that falls back to proto.Equal stores the
			// message's runtime state into it.
			zero := reflect.New(reflect.TypeOf(v.Eq).In(0).Elem()).UnsafePointer()
			if x == nil {
				x = zero
			} else {
				y = zero
			}
		}
		if !eq(x, y) {
			return false
		}
	}
	return true
}

func (v *EqMessageList) check() bool {
	return checkEq(v.Eq) && reflect.TypeOf(v.Eq).In(0).Elem().Size() == v.Size
}

// OpMember is the Value of a oneof member of a scalar, enum, string or bytes
// kind whose wrapper type is Wrapper's, the oneof field being at Off: Op
// compares the values (floats as in a oneof, where -0 equals +0 and NaN
// equals NaN).
type OpMember struct {
	notMessage
	Off     uintptr
	Wrapper any
	Op      Op
}

func (v *OpMember) equal(a, b unsafe.Pointer) bool {
	aw, bw := member(a, v.Off, v.Wrapper), member(b, v.Off, v.Wrapper)
	if aw == nil || bw == nil {
		return aw == nil && bw == nil
	}
	switch v.Op {
	case OpFloat32:
		return EqualFloat32(*(*float32)(aw), *(*float32)(bw))
	case OpFloat64:
		return EqualFloat64(*(*float64)(aw), *(*float64)(bw))
	}
	return opEqual(v.Op, aw, bw)
}

func (v *OpMember) check() bool {
	return checkWrapper(v.Wrapper) && v.Op > OpNone && v.Op <= OpBytes
}

// EqMember is the Value of a oneof member holding a message, compared with
// Eq, whose wrapper type is Wrapper's, the oneof field being at Off.
type EqMember struct {
	Off     uintptr
	Wrapper any
	Eq      any
}

func (v *EqMember) equal(a, b unsafe.Pointer) bool {
	aw, bw := member(a, v.Off, v.Wrapper), member(b, v.Off, v.Wrapper)
	if aw == nil || bw == nil {
		return aw == nil && bw == nil
	}
	return equalFunc(v.Eq)(*(*unsafe.Pointer)(aw), *(*unsafe.Pointer)(bw))
}

func (v *EqMember) present(m unsafe.Pointer) bool { return member(m, v.Off, v.Wrapper) != nil }

func (v *EqMember) get(m unsafe.Pointer) unsafe.Pointer {
	if w := member(m, v.Off, v.Wrapper); w != nil {
		return *(*unsafe.Pointer)(w)
	}
	return nil
}

func (v *EqMember) check() bool { return checkWrapper(v.Wrapper) && checkEq(v.Eq) }

// checkDetail describes the Eq and Wrapper of c for the panic of a failed
// check.
func checkDetail(c checker) string {
	switch v := c.(type) {
	case *EqMessage:
		return fmt.Sprintf("Eq %T", v.Eq)
	case *EqMessageList:
		return fmt.Sprintf("Eq %T, Size %d", v.Eq, v.Size)
	case *OpMember:
		return fmt.Sprintf("Wrapper %T, Op %d", v.Wrapper, v.Op)
	case *EqMember:
		return fmt.Sprintf("Wrapper %T, Eq %T", v.Wrapper, v.Eq)
	}
	return fmt.Sprintf("%T", c)
}
