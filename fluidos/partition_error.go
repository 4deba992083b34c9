package fluidos

// PartitionError reports a partition that cannot be made. It matches
// ErrInvalidPartition and unwraps to the sentinel saying why
// (ErrBelowMinimum, ErrNotStepMultiple, ErrExceedsFlavor...).
type PartitionError struct {
	// Resource is what is wrong, in proto names of K8SliceConfiguration
	// ("cpu", "memory", "pods", "storage", "gpu.cores", "gpu.memory",
	// "gpu.model"), or "flavor", "configuration" or "partitionability".
	Resource string
	// Detail gives the values involved; may be empty.
	Detail string
	// Err says what is wrong.
	Err error
}

// Error names the resource, the problem and the values.
func (e *PartitionError) Error() string {
	return joinMsg(ErrInvalidPartition.Error()+": "+e.Resource, e.Err, e.Detail)
}

// Is matches ErrInvalidPartition.
func (e *PartitionError) Is(target error) bool { return target == ErrInvalidPartition }

// Unwrap returns Err.
func (e *PartitionError) Unwrap() error { return e.Err }
