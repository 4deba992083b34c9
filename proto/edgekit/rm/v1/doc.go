// Package rmv1 is the report service through which resource managers off
// the edge site (the CCRM replicas) send Info reports to the controller,
// each fenced by the claim it was made under (report.proto). Generated,
// with the gRPC service and edgekit's helpers; the server is in
// hosts/controller, the client in hosts/ccrm.
package rmv1
