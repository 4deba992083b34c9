package fluidos

import "strconv"

// SchemaError reports a problem of a ConfigurationSchema itself. It matches
// ErrInvalidSchema and unwraps to the sentinel saying what is wrong.
type SchemaError struct {
	// Parameter is the name of the offending parameter.
	Parameter string
	// Index is the position of the parameter in the schema.
	Index int
	// Detail gives the values involved; may be empty.
	Detail string
	// Err says what is wrong.
	Err error
}

// Error names the parameter (or its position when it has no name), the
// problem and the values.
func (e *SchemaError) Error() string {
	name := strconv.Quote(e.Parameter)
	if e.Parameter == "" {
		name = "#" + strconv.Itoa(e.Index)
	}
	return joinMsg(ErrInvalidSchema.Error()+": parameter "+name, e.Err, e.Detail)
}

// Is matches ErrInvalidSchema.
func (e *SchemaError) Is(target error) bool { return target == ErrInvalidSchema }

// Unwrap returns Err.
func (e *SchemaError) Unwrap() error { return e.Err }
