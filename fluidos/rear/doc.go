// Package rear is the REAR v2 protocol between FLUIDOS nodes as the
// reference FLUIDOS node speaks it: the provider routes, the JSON objects on
// the wire, their conversion to and from the typed objects of package
// fluidos, the query-string filters of flavor discovery, the JSON Schema of a
// Service flavor's configuration, and a client.
//
// # The wire and the typed model
//
// The wire structs (Flavor, Transaction, Contract...) have exactly the JSON
// field names of the reference node, including its spellings: a K8Slice's
// characteristics are "charateristics", and a Location's country is sent
// under "altitude". Every conversion lives in this package: Encode* turns a
// typed object into its wire form, Decode* the reverse, and a decode
// followed by an encode gives back what was received, field for field
// (values, not spelling: a quantity "4" may come back as "4000m"'s
// canonical form "4", a list sent as [] comes back as null).
//
// Quantities travel as Kubernetes quantity strings ("4000m", "16Gi",
// "110") and are held typed as integers: CPU in millicores, memory and
// storage in bytes, pods and GPU cores as counts (ParseQuantity,
// FormatCPU, FormatBytes). A fractional quantity is rounded up, as
// Kubernetes does; a negative one is an error.
//
// What the typed model has and REAR lacks stays home: a flavor's
// updated_at, a K8Slice's CIDR network_authorizations, a contract's
// network_requests, a service's blueprint. What REAR
// has and the typed model words differently is carried in dedicated
// fields (NetworkIntents, Service.configuration_template,
// ServiceConfiguration.configuration_data, Contract.network_requests_text).
// edgekit adds a few fields of its own to the wire (the endpoint, token and
// cluster name of peering credentials, a service's instance counts), which
// a reference node ignores.
//
// # edgekit's routes
//
// Beside REAR's routes, an edgekit seller serves routes a reference node
// does not have (it answers them 404), whose bodies are the protojson of
// the typed objects: a buyer follows the allocation of a contract it
// bought, with the credentials once it is provisioned
// (RouteContractAllocation), renews the contract's lease
// (RouteContractRenew) and releases it (RouteContractRelease); and it runs
// instances on a K8Slice it bought (RouteSliceInstance,
// RouteSliceInstances) with the slice's token. The Client has a method for
// each.
//
// # Configuration templates
//
// A Service flavor's configurationTemplate is a JSON Schema. TemplateOf
// gives the one a typed ConfigurationSchema stands for (draft 2020-12, an
// object with one property per parameter, anchored patterns, required
// names, no other properties). CompileTemplate compiles any template,
// one received from a reference node included, with
// github.com/santhosh-tekuri/jsonschema/v6, never loading a referenced
// resource; Template.Validate checks a configuration against it.
//
// # Errors
//
// Every error wraps a sentinel of errors.go: ErrInvalid for a wire object
// or typed object that cannot be converted (the message names the field),
// ErrBadFilter for a query string the filter grammar refuses,
// ErrInvalidTemplate and ErrInvalidConfiguration for templates and the
// configurations they check, *StatusError and ErrGarbage for what a peer
// answered.
package rear
