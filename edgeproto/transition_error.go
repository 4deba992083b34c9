package edgeproto

import (
	"errors"
	"fmt"
	"strings"
)

// ErrInfoStateRejected is matched (errors.Is) by every *TransitionError.
var ErrInfoStateRejected = errors.New("info state not accepted")

// TransitionError says that an object in state Object does not accept the
// Info state Info reported by an engine.
type TransitionError struct {
	// Object is the state of the object the controller holds.
	Object TrackedState
	// Info is the state the engine reported.
	Info TrackedState
}

// Error names both states.
func (e *TransitionError) Error() string {
	return fmt.Sprintf("%s: object in state %s does not accept info state %s",
		ErrInfoStateRejected, stateName(e.Object), stateName(e.Info))
}

// Is matches ErrInfoStateRejected.
func (e *TransitionError) Is(target error) bool {
	return target == ErrInfoStateRejected
}

// stateName is the enum value name without its TRACKED_STATE_ prefix, or
// the number for an unknown value.
func stateName(s TrackedState) string {
	return strings.TrimPrefix(s.String(), "TRACKED_STATE_")
}
