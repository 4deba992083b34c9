package fieldmap

import (
	"bytes"
	"slices"
	"unsafe"
)

// Op is how the table-driven DiffFields (Diff) compares a field of a
// scalar kind, or a list of one, which the
// field's ShapeField.Off locates in the message's Go struct. Fields of
// other kinds (maps, messages, lists of messages, oneof members) have a
// Value instead. An enum field is OpInt32 (enums are int32 in Go), sint32
// and sfixed32 too; fixed32 is OpUint32, and so on.
type Op uint8

// The Ops: implicit-presence scalars, explicit-presence scalars (Go
// pointers, OpPtr*), bytes with explicit presence (nil is absent), and
// lists.
const (
	OpNone Op = iota // the field has a Value
	OpBool
	OpInt32
	OpInt64
	OpUint32
	OpUint64
	OpFloat32
	OpFloat64
	OpString
	OpBytes
	OpBytesPresence
	OpPtrBool
	OpPtrInt32
	OpPtrInt64
	OpPtrUint32
	OpPtrUint64
	OpPtrFloat32
	OpPtrFloat64
	OpPtrString
	OpListBool
	OpListInt32
	OpListInt64
	OpListUint32
	OpListUint64
	OpListFloat32
	OpListFloat64
	OpListString
	OpListBytes
	numOps
)

// opEqual reports whether the fields at a and b are equal under
// proto.Equal's rules.
func opEqual(op Op, a, b unsafe.Pointer) bool {
	switch op {
	case OpBool:
		return *(*bool)(a) == *(*bool)(b)
	case OpInt32, OpUint32:
		return *(*int32)(a) == *(*int32)(b)
	case OpInt64, OpUint64:
		return *(*int64)(a) == *(*int64)(b)
	case OpFloat32:
		return EqualImplicitFloat32(*(*float32)(a), *(*float32)(b))
	case OpFloat64:
		return EqualImplicitFloat64(*(*float64)(a), *(*float64)(b))
	case OpString:
		return *(*string)(a) == *(*string)(b)
	case OpBytes:
		return bytes.Equal(*(*[]byte)(a), *(*[]byte)(b))
	case OpBytesPresence:
		return EqualBytesPresence(*(*[]byte)(a), *(*[]byte)(b))
	case OpPtrBool:
		return EqualPtr(*(**bool)(a), *(**bool)(b))
	case OpPtrInt32, OpPtrUint32:
		return EqualPtr(*(**int32)(a), *(**int32)(b))
	case OpPtrInt64, OpPtrUint64:
		return EqualPtr(*(**int64)(a), *(**int64)(b))
	case OpPtrFloat32:
		return EqualPtrFloat32(*(**float32)(a), *(**float32)(b))
	case OpPtrFloat64:
		return EqualPtrFloat64(*(**float64)(a), *(**float64)(b))
	case OpPtrString:
		return EqualPtr(*(**string)(a), *(**string)(b))
	case OpListBool:
		return slices.Equal(*(*[]bool)(a), *(*[]bool)(b))
	case OpListInt32, OpListUint32:
		return slices.Equal(*(*[]int32)(a), *(*[]int32)(b))
	case OpListInt64, OpListUint64:
		return slices.Equal(*(*[]int64)(a), *(*[]int64)(b))
	case OpListFloat32:
		return EqualListFunc(*(*[]float32)(a), *(*[]float32)(b), EqualFloat32)
	case OpListFloat64:
		return EqualListFunc(*(*[]float64)(a), *(*[]float64)(b), EqualFloat64)
	case OpListString:
		return slices.Equal(*(*[]string)(a), *(*[]string)(b))
	case OpListBytes:
		return EqualListFunc(*(*[][]byte)(a), *(*[][]byte)(b), bytes.Equal)
	}
	panic("fieldmap: unknown Op")
}
