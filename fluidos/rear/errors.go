package rear

import (
	"errors"
	"fmt"
)

// Sentinels; every error of this package wraps one of them.
var (
	// ErrInvalid: an object that cannot be converted between the wire and
	// the typed model (a bad quantity, an unknown type name...).
	ErrInvalid = errors.New("invalid REAR object")
	// ErrBadFilter: a discovery query string the filter grammar refuses.
	ErrBadFilter = errors.New("invalid flavor filter")
	// ErrInvalidTemplate: a configuration template that is not a JSON
	// Schema this package compiles.
	ErrInvalidTemplate = errors.New("invalid configuration template")
	// ErrInvalidConfiguration: a configuration its template refuses.
	ErrInvalidConfiguration = errors.New("configuration does not satisfy the template")
	// ErrGarbage: a peer answered something that is not the JSON expected.
	ErrGarbage = errors.New("peer answered garbage")
)

// FieldError is a conversion error naming the wire field.
type FieldError struct {
	// Field is the JSON path of the field, for example
	// "type.data.charateristics.cpu".
	Field string
	// Err is what is wrong.
	Err error
}

func (e *FieldError) Error() string { return fmt.Sprintf("%s: %v", e.Field, e.Err) }

// Unwrap returns ErrInvalid and the cause.
func (e *FieldError) Unwrap() []error { return []error{ErrInvalid, e.Err} }

func fieldErr(field string, format string, args ...any) error {
	return &FieldError{Field: field, Err: fmt.Errorf(format, args...)}
}

// within prefixes the field of a *FieldError (or wraps another error) with
// the path of the object it was found in.
func within(prefix string, err error) error {
	if err == nil {
		return nil
	}
	var fe *FieldError
	if errors.As(err, &fe) {
		return &FieldError{Field: prefix + "." + fe.Field, Err: fe.Err}
	}
	return &FieldError{Field: prefix, Err: err}
}

// StatusError is a peer's answer with a status other than the one
// expected.
type StatusError struct {
	// Code is the HTTP status.
	Code int
	// Message is the start of the body, as text.
	Message string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("peer answered %d: %s", e.Code, e.Message)
}
