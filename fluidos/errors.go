package fluidos

import "errors"

// Sentinels of selector validation and matching.
var (
	// ErrInvalidSelector is matched by every *SelectorError.
	ErrInvalidSelector = errors.New("invalid selector")
	// ErrNoMatch is matched by every *MismatchError.
	ErrNoMatch = errors.New("flavor does not match selector")
	// ErrFlavorTypeMismatch: the flavor is not of the type the selector wants.
	ErrFlavorTypeMismatch = errors.New("flavor type differs")
	// ErrFieldAbsent: a filter is set on a field the flavor does not have.
	ErrFieldAbsent = errors.New("flavor lacks the filtered field")
	// ErrUnknownFlavorType: a flavor type the enum does not define.
	ErrUnknownFlavorType = errors.New("unknown flavor type")
	// ErrFilterTypeConflict: the selector's filter is for another flavor
	// type than its flavor_type.
	ErrFilterTypeConflict = errors.New("filter does not agree with flavor type")
	// ErrMinAboveMax: a range whose minimum is above its maximum.
	ErrMinAboveMax = errors.New("minimum above maximum")
	// ErrInvalidRegex: a regular expression that does not compile.
	ErrInvalidRegex = errors.New("invalid regular expression")
	// ErrEmptyValue: an empty text where one is required.
	ErrEmptyValue = errors.New("empty value")
	// ErrNotANumber: a NaN or infinite number.
	ErrNotANumber = errors.New("not a finite number")
	// ErrNoFlavor: a nil flavor was given.
	ErrNoFlavor = errors.New("no flavor")
)

// Sentinels shared by selectors and partitions.
var (
	// ErrNegativeQuantity: a quantity below zero.
	ErrNegativeQuantity = errors.New("negative quantity")
)

// Sentinels of partitioning.
var (
	// ErrInvalidPartition is matched by every *PartitionError.
	ErrInvalidPartition = errors.New("invalid partition")
	// ErrNoConfiguration: a nil configuration was given.
	ErrNoConfiguration = errors.New("no configuration")
	// ErrNotK8Slice: the flavor is not a Kubernetes slice.
	ErrNotK8Slice = errors.New("flavor is not a K8Slice")
	// ErrNotPartitionable: the flavor has no partitionability policy, or
	// no characteristics to split.
	ErrNotPartitionable = errors.New("flavor is not partitionable")
	// ErrInvalidPolicy: the flavor's partitionability policy has negative
	// minimums or steps.
	ErrInvalidPolicy = errors.New("invalid partitionability policy")
	// ErrNonPositiveQuantity: a quantity that must be above zero is not.
	ErrNonPositiveQuantity = errors.New("quantity must be above zero")
	// ErrBelowMinimum: a quantity below the policy's minimum.
	ErrBelowMinimum = errors.New("below the partition minimum")
	// ErrNotStepMultiple: a quantity that is not a multiple of the policy's step.
	ErrNotStepMultiple = errors.New("not a multiple of the partition step")
	// ErrExceedsFlavor: more than the flavor has.
	ErrExceedsFlavor = errors.New("exceeds what the flavor has")
	// ErrModelMismatch: a GPU model other than the flavor's.
	ErrModelMismatch = errors.New("GPU model differs")
)

// Sentinels of service configurations.
var (
	// ErrInvalidSchema is matched by every *SchemaError.
	ErrInvalidSchema = errors.New("invalid configuration schema")
	// ErrInvalidConfiguration is matched by every *ParameterError and by
	// a blueprint mismatch.
	ErrInvalidConfiguration = errors.New("invalid configuration")
	// ErrBlueprintMismatch: the configuration names another blueprint.
	ErrBlueprintMismatch = errors.New("configuration is for another blueprint")
	// ErrMissingParameter: a required parameter without value or default.
	ErrMissingParameter = errors.New("missing required parameter")
	// ErrUnknownParameter: a parameter the schema does not define.
	ErrUnknownParameter = errors.New("unknown parameter")
	// ErrDuplicateParameter: a schema defining a parameter twice.
	ErrDuplicateParameter = errors.New("duplicate parameter")
	// ErrWrongType: a value that does not parse as the parameter's type,
	// or a schema constraint that does not apply to the type.
	ErrWrongType = errors.New("wrong type")
	// ErrOutOfRange: a value outside the parameter's minimum and maximum.
	ErrOutOfRange = errors.New("out of range")
	// ErrPatternMismatch: a value that does not match the parameter's pattern.
	ErrPatternMismatch = errors.New("does not match pattern")
)
