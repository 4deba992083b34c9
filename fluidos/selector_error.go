package fluidos

// SelectorError reports an invalid selector. It matches ErrInvalidSelector
// and unwraps to the sentinel saying what is wrong (ErrMinAboveMax,
// ErrNegativeQuantity, ErrInvalidRegex...).
type SelectorError struct {
	// Field is the path of the offending field from the Selector, in proto
	// names, for example "k8slice.cpu.range".
	Field string
	// Detail gives the values involved; may be empty.
	Detail string
	// Err says what is wrong.
	Err error
}

// Error names the field, the problem and the values.
func (e *SelectorError) Error() string {
	return joinMsg(ErrInvalidSelector.Error()+": "+e.Field, e.Err, e.Detail)
}

// Is matches ErrInvalidSelector.
func (e *SelectorError) Is(target error) bool { return target == ErrInvalidSelector }

// Unwrap returns Err.
func (e *SelectorError) Unwrap() error { return e.Err }

// joinMsg renders "head: err: detail", leaving out what is empty.
func joinMsg(head string, err error, detail string) string {
	s := head
	if err != nil {
		s += ": " + err.Error()
	}
	if detail != "" {
		s += ": " + detail
	}
	return s
}
