package fieldmap

import (
	"errors"
	"fmt"
)

// ErrUnknownField is matched (errors.Is) by every error about a flag that a
// message does not have.
var ErrUnknownField = errors.New("unknown field flag")

// ErrInvalidEnum is matched (errors.Is) by every error about an enum field
// holding a value its enum does not define.
var ErrInvalidEnum = errors.New("invalid enum value")

// ErrListAction is matched (errors.Is) by every error about a list action set
// on a flag that cannot take it.
var ErrListAction = errors.New("invalid list action")

// UnknownFieldError reports a flag that the message does not have.
type UnknownFieldError struct {
	Message string // full proto name of the message
	Flag    string // the offending flag, as given
}

func (e *UnknownFieldError) Error() string {
	return fmt.Sprintf("%s: unknown field flag %q", e.Message, e.Flag)
}

// Is reports whether target is ErrUnknownField.
func (e *UnknownFieldError) Is(target error) bool { return target == ErrUnknownField }

// InvalidEnumError reports an enum field holding an undefined value.
type InvalidEnumError struct {
	Message string // full proto name of the message holding the field
	Field   string // dot-joined proto field names from that message
	Enum    string // full proto name of the enum
	Value   int32
}

func (e *InvalidEnumError) Error() string {
	return fmt.Sprintf("%s.%s: value %d is not defined in enum %s", e.Message, e.Field, e.Value, e.Enum)
}

// Is reports whether target is ErrInvalidEnum.
func (e *InvalidEnumError) Is(target error) bool { return target == ErrInvalidEnum }

// ListActionError reports a list action the schema does not allow on a flag.
type ListActionError struct {
	Message string
	Flag    string
	Action  Action
	Reason  string
}

func (e *ListActionError) Error() string {
	return fmt.Sprintf("%s: list action %s on field flag %q: %s", e.Message, e.Action, e.Flag, e.Reason)
}

// Is reports whether target is ErrListAction.
func (e *ListActionError) Is(target error) bool { return target == ErrListAction }

// ErrSchemaMismatch is matched (errors.Is) by every error about a FieldMap
// bound to the schema of another message.
var ErrSchemaMismatch = errors.New("field map of another message")

// SchemaMismatchError reports a FieldMap of one message used with another.
type SchemaMismatchError struct {
	Want string // full proto name of the message the map was used with
	Got  string // full proto name of the message the map belongs to
}

func (e *SchemaMismatchError) Error() string {
	return fmt.Sprintf("%s: field map belongs to %s", e.Want, e.Got)
}

// Is reports whether target is ErrSchemaMismatch.
func (e *SchemaMismatchError) Is(target error) bool { return target == ErrSchemaMismatch }
