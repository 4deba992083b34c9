// Command crm runs the resource manager of one edge site (a cloudlet
// created with crm_on_edge): it connects to the region's controller,
// receives the cloudlet's objects and carries out every change on the
// platform, reporting progress back.
//
//	crm --controller 127.0.0.1:55001 --cloudlet operator/site1 \
//	    --access-key-file site1.key --platform local --state-dir ./site1
//
// The access key is the one shown once when the cloudlet was created (or
// rotated). SIGINT or SIGTERM stops it gracefully: operations in flight
// finish (bounded by --stop-timeout) and their reports reach the
// controller; processes the local platform started keep running and are
// adopted by the next start. The flags are those of crm.Main, which
// "edgekit crm" runs too.
package main

import (
	"github.com/edgekit/edgekit/hosts/crm"
	"github.com/edgekit/edgekit/internal/cmdutil"
	_ "github.com/edgekit/edgekit/platforms/fake"       // registers "fake"
	_ "github.com/edgekit/edgekit/platforms/kubernetes" // registers "kubernetes"
	_ "github.com/edgekit/edgekit/platforms/local"      // registers "local"
)

func main() { cmdutil.Exit("crm", crm.Main) }
