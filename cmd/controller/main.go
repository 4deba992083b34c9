// Command controller runs a region's controller: the API server users talk
// to (gRPC, with edgectl), its state in etcd (embedded under --data-dir by
// default, or an external cluster with --etcd-endpoints).
//
//	controller --data-dir ./region
//
// The first start writes an admin token to <data-dir>/admin.token. SIGINT
// or SIGTERM stops it gracefully: in-flight calls finish (bounded by
// --stop-timeout), then etcd closes. The flags are those of
// controller.Main, which "edgekit controller" runs too.
package main

import (
	"github.com/edgekit/edgekit/hosts/controller"
	"github.com/edgekit/edgekit/internal/cmdutil"
)

func main() { cmdutil.Exit("controller", controller.Main) }
