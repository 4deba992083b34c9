// Command ccrm runs one replica of the CCRM: the lifecycle engine for the
// cloudlets without crm_on_edge, off the edge site. Run as many replicas
// as wanted against one controller; they share the work through etcd.
//
//	ccrm --etcd-endpoints "$(cat region/etcd-endpoint)" --controller 127.0.0.1:55001 --dev-tls region/tls \
//	    --encryption-key-file region/encryption.keys
//
// It serves the platforms linked in here (fake, local); a build with other
// platforms imports them and calls ccrm.Main the same way. SIGINT or
// SIGTERM stops it gracefully: running operations finish (bounded by
// --drain-timeout), the others' claims are handed back, the lease revoked.
package main

import (
	"github.com/edgekit/edgekit/hosts/ccrm"
	"github.com/edgekit/edgekit/internal/cmdutil"
	_ "github.com/edgekit/edgekit/platforms/fake"
	_ "github.com/edgekit/edgekit/platforms/kubernetes"
	_ "github.com/edgekit/edgekit/platforms/local"
)

func main() { cmdutil.Exit("ccrm", ccrm.Main) }
