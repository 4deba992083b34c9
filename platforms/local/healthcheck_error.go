package local

import "fmt"

// HealthCheckError reports why an application did not become healthy. It
// matches ErrUnhealthy with errors.Is and unwraps to the last probe error
// (or the context error that ended the wait).
type HealthCheckError struct {
	// Check is the kind of probe: "tcp" or "http".
	Check string
	// Addr is the probed address (host:port, and the path for HTTP).
	Addr string
	// Exited is true when the process ended before passing the check.
	Exited bool
	// Err is the last probe error, or the context error.
	Err error
}

// Error describes the failure.
func (e *HealthCheckError) Error() string {
	if e.Exited {
		return fmt.Sprintf("%s health check on %s: process exited before becoming healthy: %v", e.Check, e.Addr, e.Err)
	}
	return fmt.Sprintf("%s health check on %s did not pass: %v", e.Check, e.Addr, e.Err)
}

// Unwrap returns the underlying error.
func (e *HealthCheckError) Unwrap() error { return e.Err }

// Is reports whether target is ErrUnhealthy.
func (e *HealthCheckError) Is(target error) bool { return target == ErrUnhealthy }
