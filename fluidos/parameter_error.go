package fluidos

import "strconv"

// ParameterError reports a parameter of a ServiceConfiguration that its
// schema does not accept. It matches ErrInvalidConfiguration and unwraps to
// ErrMissingParameter, ErrUnknownParameter, ErrWrongType, ErrOutOfRange or
// ErrPatternMismatch.
type ParameterError struct {
	// Parameter is the parameter's name.
	Parameter string
	// Detail gives the values involved; may be empty.
	Detail string
	// Err says what is wrong.
	Err error
}

// Error names the parameter, the problem and the values.
func (e *ParameterError) Error() string {
	return joinMsg(ErrInvalidConfiguration.Error()+": parameter "+strconv.Quote(e.Parameter), e.Err, e.Detail)
}

// Is matches ErrInvalidConfiguration.
func (e *ParameterError) Is(target error) bool { return target == ErrInvalidConfiguration }

// Unwrap returns Err.
func (e *ParameterError) Unwrap() error { return e.Err }
