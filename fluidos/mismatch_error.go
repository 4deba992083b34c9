package fluidos

// MismatchError says why a valid selector does not match a flavor. It
// matches ErrNoMatch and unwraps to ErrFlavorTypeMismatch, ErrFieldAbsent
// or nil (the field is there and its value is not what the filter wants).
type MismatchError struct {
	// Field is the path of the filter that failed, from the Selector, in
	// proto names, for example "k8slice.cpu" or "flavor_type".
	Field string
	// Detail gives the values involved.
	Detail string
	// Err is ErrFlavorTypeMismatch, ErrFieldAbsent or nil.
	Err error
}

// Error names the filter and the values.
func (e *MismatchError) Error() string {
	return joinMsg(ErrNoMatch.Error()+": "+e.Field, e.Err, e.Detail)
}

// Is matches ErrNoMatch.
func (e *MismatchError) Is(target error) bool { return target == ErrNoMatch }

// Unwrap returns Err.
func (e *MismatchError) Unwrap() error { return e.Err }
