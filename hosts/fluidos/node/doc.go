// Package node runs a FLUIDOS node: one process that is a provider
// (package provider: flavors, REAR v2 provider routes, reservations,
// contracts), an allocator (package allocator: what was sold provisioned
// through the lifecycle engine on the node's platform, local by default)
// and a consumer (package consumer: peers, discovery, solvers, and what
// was bought followed) at once, with its state in the store on embedded
// etcd (or an external cluster), its REAR endpoint over mutual TLS (or
// plain HTTP when asked; the routes of the slices it sold beside REAR's),
// its gRPC API for its operator (solvers, flavors, service blueprints,
// contracts and their release, allocations, instances on bought slices,
// peers; health and reflection on), and /metrics.
//
// Run starts everything from Options and stops it in order when its
// context ends. The node's identity is its certificate's Common Name,
// which must be its NodeID: peers check it on every call. The API admits
// callers whose certificates, of the same authorities, name one of
// Options.APIClients (by default "admin" and the node itself); a contract
// or an allocation the node sold is shown there without its credentials,
// which are its buyer's.
package node
