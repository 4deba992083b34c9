// Package notify holds what both ends of the notify stream share (the
// controller's server in hosts/controller/notify and the CRM's client in
// hosts/crm): the mapping between domain objects and the messages of
// proto/edgekit/notify/v1, the coalescing send queue the server keeps per
// CRM, and the jittered back-off the CRM reconnects with.
//
// Nothing here does I/O or logs: it is the protocol's vocabulary, tested on
// its own.
package notify
