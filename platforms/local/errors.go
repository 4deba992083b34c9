package local

import (
	"errors"
	"fmt"

	"github.com/edgekit/edgekit/executor"
)

// Sentinel errors of the local platform. Every error the platform returns
// wraps one of them (or a context error), so callers test with errors.Is.
var (
	// ErrInvalidConfig reports a Config that New cannot use.
	ErrInvalidConfig = errors.New("local: invalid config")
	// ErrClosed reports a call on a Platform after Close.
	ErrClosed = errors.New("local: platform closed")
	// ErrInvalidObject reports an object the platform cannot act on (a
	// missing key, an empty command, a malformed port). It wraps
	// executor.ErrBadObject.
	ErrInvalidObject = fmt.Errorf("local: invalid object: %w", executor.ErrBadObject)
	// ErrClusterNotFound reports an operation on a cluster that does not
	// exist (or is being deleted). It wraps executor.ErrNotFound.
	ErrClusterNotFound = fmt.Errorf("local: cluster %w", executor.ErrNotFound)
	// ErrInstanceNotFound reports an update of an application instance that
	// was never created. It wraps executor.ErrNotFound.
	ErrInstanceNotFound = fmt.Errorf("local: application instance %w", executor.ErrNotFound)
	// ErrNoFreePorts reports that no port range (for a cluster) or no
	// ports (for an application) are left to hand out. It wraps
	// executor.ErrInsufficientResources.
	ErrNoFreePorts = fmt.Errorf("local: no free ports: %w", executor.ErrInsufficientResources)
	// ErrQuotaExceeded reports an application instance that does not fit
	// in what its cluster's quota leaves; the error is a *QuotaError. It
	// wraps executor.ErrInsufficientResources.
	ErrQuotaExceeded = fmt.Errorf("local: quota exceeded: %w", executor.ErrInsufficientResources)
	// ErrStart reports that the application's process could not be started.
	ErrStart = errors.New("local: cannot start process")
	// ErrUnhealthy reports that an application did not pass its health
	// check in time; the error is a *HealthCheckError.
	ErrUnhealthy = errors.New("local: health check failed")
	// ErrStop reports that a process could not be stopped.
	ErrStop = errors.New("local: cannot stop process")
	// ErrNotOwned reports a live process that a state file names but that
	// the platform cannot prove it started (no marker of the recorded
	// launch, not leading its process group): it is
	// never signalled, and the operation that needed it gone fails.
	ErrNotOwned = errors.New("local: process not recognised as started by this platform")
	// ErrState reports an unreadable or unwritable state file.
	ErrState = errors.New("local: state file")
	// ErrUnsupported reports a request the platform does not model (trust
	// policies with rules). It wraps executor.ErrUnsupported and
	// errors.ErrUnsupported.
	ErrUnsupported = fmt.Errorf("local: %w (%w)", executor.ErrUnsupported, errors.ErrUnsupported)
	// ErrNoNetworkRules is the refusal of a trust policy exception: the
	// platform runs processes on the host, whose network it does not
	// filter, so it cannot enforce an exception's rules. It wraps
	// ErrUnsupported.
	ErrNoNetworkRules = fmt.Errorf("the local platform cannot enforce network rules (the outbound traffic of its processes is not filtered): %w", ErrUnsupported)
)
