package executor

import (
	"errors"
	"fmt"
	"time"
)

// Sentinel errors of the engine. Every error the engine reports or returns
// wraps one of them (or a platform's error) with %w, so callers branch with
// errors.Is.
var (
	// ErrSuperseded resolves the Handle of a queued request that a newer
	// request for the same object replaced before it started.
	ErrSuperseded = errors.New("superseded by a newer request")
	// ErrBusy is what a ReconcileGuard wraps when another party holds the
	// object (another CCRM replica's claim): Reconcile leaves the object
	// alone (ReconcileBusy).
	ErrBusy = errors.New("held by another party")
	// ErrStopped is returned by Submit after the engine stopped, and
	// resolves the Handle of a request that was still queued when it did.
	ErrStopped = errors.New("engine stopped")
	// ErrNotFound says that an object an operation depends on (a cloudlet,
	// an app, a cluster) is not known to the host. Getters return it as a
	// *NotFoundError (see NotFound).
	ErrNotFound = errors.New("not found")
	// ErrClusterNotReady says that an AppInst was requested on a cluster
	// that is not READY.
	ErrClusterNotReady = errors.New("cluster not ready")
	// ErrUnsupported says that the platform does not support the work
	// asked of it (see Features).
	ErrUnsupported = errors.New("not supported by the platform")
	// ErrNoChange says that an object was submitted in a state that asks
	// the engine for nothing (READY, an error state...).
	ErrNoChange = errors.New("nothing requested")
	// ErrTimeout says that an operation ran past its timeout from Settings.
	ErrTimeout = errors.New("timed out")
	// ErrCanceled says that an operation was stopped because the engine's
	// context ended.
	ErrCanceled = errors.New("canceled")
	// ErrInsufficientResources is wrapped by platforms when an object does
	// not fit in what the cloudlet has left (quota or capacity).
	ErrInsufficientResources = errors.New("insufficient resources")
	// ErrReserved is returned by ReservationSet.Reserve when another owner
	// holds the value.
	ErrReserved = errors.New("already reserved")
	// ErrConflict is returned by Reservations.Update when the set kept
	// changing under it for longer than the implementation retries.
	ErrConflict = errors.New("reservations kept changing")
	// ErrReportFailed says that the final report of an operation (its
	// outcome) could not be delivered after the retries of
	// Config.ReportRetry. The platform work is done (or undone) but the
	// host does not know it: the engine keeps the report (Engine.Resend
	// sends it again), and submitting the same request again is safe (the
	// platform adopts what exists and deleting what is absent succeeds).
	ErrReportFailed = errors.New("report not delivered")
	// ErrReportRejected is what a Sender wraps when the receiver refused
	// a report for good (a CCRM whose claim on the object is no longer
	// current, a receiver that does not know the object): the engine does
	// not retry it and forgets the object's last known Info, so Resend
	// does not send it again. A request whose final report is rejected
	// fails with an error matching both ErrReportFailed and
	// ErrReportRejected.
	ErrReportRejected = errors.New("report rejected")
	// ErrNotConfigured says that Config lacks what was asked for needs
	// (Reconcile needs the Getters and Listers of the objects it
	// reconciles: a missing one must never read as "the host has nothing").
	ErrNotConfigured = errors.New("engine not configured for this")
	// ErrBadObject says that a submitted object cannot be worked on: nil,
	// without a key, or of a type the engine does not handle.
	ErrBadObject = errors.New("bad object")
)

// OpError is the error of one failed operation, as reported in the Info's
// errors and returned by Handle.Err. It wraps the cause, so errors.Is
// matches both the engine's sentinels and the platform's errors.
type OpError struct {
	// Kind is the object kind ("ClusterInst").
	Kind string
	// Key is the object's key string.
	Key string
	// Op is what was being done ("create", "update", "delete"...).
	Op string
	// Err is the cause.
	Err error
}

// Error reads "create ClusterInst org/name: cause".
func (e *OpError) Error() string {
	return fmt.Sprintf("%s %s %s: %v", e.Op, e.Kind, e.Key, e.Err)
}

// Unwrap returns the cause.
func (e *OpError) Unwrap() error { return e.Err }

// TimeoutError says that an operation ran longer than its timeout. It
// matches ErrTimeout and context.DeadlineExceeded.
type TimeoutError struct {
	// Timeout is the limit that was exceeded.
	Timeout time.Duration
	// Err is what the platform returned when its context ended.
	Err error
}

// Error names the limit.
func (e *TimeoutError) Error() string {
	return fmt.Sprintf("%v after %v: %v", ErrTimeout, e.Timeout, e.Err)
}

// Unwrap returns ErrTimeout and the platform's error.
func (e *TimeoutError) Unwrap() []error { return []error{ErrTimeout, e.Err} }

// ReservedError says that a value is held by another owner. It matches
// ErrReserved.
type ReservedError struct {
	Kind, Value, Owner, Holder string
}

// Error names the value and both owners.
func (e *ReservedError) Error() string {
	return fmt.Sprintf("%s %s %q for %q: held by %q", e.Kind, ErrReserved, e.Value, e.Owner, e.Holder)
}

// Is matches ErrReserved.
func (e *ReservedError) Is(target error) bool { return target == ErrReserved }

// NotFoundError says that the host does not know an object: what a Getter
// returns for a key it has nothing under. It matches ErrNotFound.
type NotFoundError struct {
	// Kind is the object kind ("Cloudlet").
	Kind string
	// Key is the key string of what was looked up.
	Key string
}

// NotFound returns a *NotFoundError for an object of kind with key: what
// a Getter returns when the host has nothing under key.
func NotFound(kind, key string) error { return &NotFoundError{Kind: kind, Key: key} }

// Error reads "Cloudlet org/name not found".
func (e *NotFoundError) Error() string { return fmt.Sprintf("%s %s %v", e.Kind, e.Key, ErrNotFound) }

// Is matches ErrNotFound.
func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }

// reportFailed wraps the error of a report that could not be delivered.
func reportFailed(err error) error { return fmt.Errorf("%w: %w", ErrReportFailed, err) }
