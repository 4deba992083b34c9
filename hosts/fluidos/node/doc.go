// Package node runs a FLUIDOS node: one process that is a provider
// (package provider: flavors, REAR v2 provider routes, reservations,
// contracts) and a consumer (package consumer: peers, discovery,
// solvers) at once, with its state in the store on embedded etcd (or an
// external cluster), its REAR endpoint over mutual TLS (or plain HTTP when
// asked), its gRPC API for its operator (solvers, flavors, service
// blueprints, contracts, allocations, peers; health and reflection on),
// and /metrics.
//
// Run starts everything from Options and stops it in order when its
// context ends. The node's identity is its certificate's Common Name,
// which must be its NodeID: peers check it on every call. The API admits
// callers whose certificates, of the same authorities, name one of
// Options.APIClients (by default "admin" and the node itself); a contract
// the node sold is shown there without its credentials, which are its
// buyer's.
package node
