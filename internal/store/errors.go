package store

import (
	"errors"
	"fmt"
	"strings"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
)

// Sentinels matched (errors.Is) by the errors of the store. The controller
// maps them to gRPC codes.
var (
	// ErrNotFound: the object does not exist.
	ErrNotFound = errors.New("not found")
	// ErrAlreadyExists: Create of an object that exists.
	ErrAlreadyExists = errors.New("already exists")
	// ErrConflict: concurrent writers kept changing what an operation read,
	// and it gave up after its bounded number of attempts.
	ErrConflict = errors.New("conflict with concurrent writes")
	// ErrCompacted: the revision an operation needs was compacted away.
	ErrCompacted = errors.New("revision compacted")
	// ErrPrecondition: a compare given to Tx.Require did not hold.
	ErrPrecondition = errors.New("precondition failed")
	// ErrBadValue: a stored value cannot be decoded as its kind.
	ErrBadValue = errors.New("bad stored value")
	// ErrSeal: a value could not be encrypted (the key provider failed).
	ErrSeal = errors.New("cannot encrypt the value")
	// ErrNoSpace: etcd refused a write because its NOSPACE alarm is on
	// (the database reached its quota). Writes that add data fail until
	// the alarm is disarmed; reads and deletes work.
	ErrNoSpace = errors.New("no space: etcd's NOSPACE alarm is on (the database reached its quota)")
)

// noSpace wraps etcd's refusal of a write for lack of space as an *Error
// matching ErrNoSpace; nil for any other error.
func noSpace(op, kind, key string, err error) error {
	if !errors.Is(err, rpctypes.ErrNoSpace) {
		return nil
	}
	return &Error{Op: op, Kind: kind, Key: key, Err: ErrNoSpace, Cause: err}
}

// Error is an error of the store about a kind of object, and one object
// when Key is set. It matches its sentinel (Err) and its cause, if any.
type Error struct {
	Op   string // the operation: "get", "update", "txn", "watch", ...
	Kind string // the kind's name, or "" for a transaction
	Key  string // the object's key string, or ""
	Err  error  // one of the sentinels of this package, or ctx.Err() of a wait
	// Cause is what went wrong below the sentinel, or nil: the decoding
	// error of a bad value, etcd's error of a compaction.
	Cause error
	// Rev is the revision the error is about, or 0: for ErrCompacted the
	// compaction revision (the oldest one still readable).
	Rev int64
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("store: ")
	b.WriteString(e.Op)
	if e.Kind != "" {
		b.WriteString(" ")
		b.WriteString(e.Kind)
	}
	if e.Key != "" {
		fmt.Fprintf(&b, " %q", e.Key)
	}
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	if e.Rev != 0 {
		fmt.Fprintf(&b, " (revision %d)", e.Rev)
	}
	if e.Cause != nil {
		b.WriteString(": ")
		b.WriteString(e.Cause.Error())
	}
	return b.String()
}

// Unwrap returns the sentinel and the cause.
func (e *Error) Unwrap() []error {
	if e.Cause == nil {
		return []error{e.Err}
	}
	return []error{e.Err, e.Cause}
}
