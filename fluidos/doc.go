// Package fluidos holds the FLUIDOS objects generated from proto/fluidos/v1
// (Flavor with its K8Slice, Service, VM and Sensor types, ServiceBlueprint,
// Selector, Solver, Discovery, PeeringCandidate, Reservation, Transaction,
// Contract, Allocation, Configuration) and the hand-written domain logic
// over them:
//
//   - Selector.Validate and Selector.Match: whether a flavor is what a
//     buyer looks for;
//   - PartitionK8Slice: splitting a Kubernetes slice flavor by a
//     K8SliceConfiguration within its Partitionability policy;
//   - ValidateConfigurationSchema, ValidateServiceConfiguration and
//     ServiceBlueprint.ValidateConfiguration: checking the parameters of a
//     service against its blueprint's ConfigurationSchema;
//   - DecodeServiceBlueprints: reading blueprints in edgekit's form or as
//     the FLUIDOS reference's ServiceBlueprint resource.
//
// Errors are typed (*SelectorError, *MismatchError, *PartitionError,
// *SchemaError, *ParameterError) and wrap the sentinels of errors.go, so
// callers test them with errors.Is and errors.As. Several problems found at
// once are joined with errors.Join. Nothing here modifies its inputs or
// panics on nil ones.
package fluidos
