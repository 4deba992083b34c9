// Command fluidos-node runs a FLUIDOS node: a provider and a consumer of
// flavors at once, speaking REAR v2 to its peers over mutual TLS, with its
// state in etcd (embedded under --data-dir by default), a gRPC API for
// edgectl, and /metrics.
//
// Two nodes that trust each other, in two commands (their certificates come
// from one development authority in ./fluidos-tls):
//
//	fluidos-node --id alice --data-dir ./alice --dev-tls ./fluidos-tls \
//	    --rear-listen 127.0.0.1:7443 --api-listen 127.0.0.1:7001 --metrics-listen 127.0.0.1:7002 --peers 127.0.0.1:7543
//	fluidos-node --id bob --data-dir ./bob --dev-tls ./fluidos-tls \
//	    --rear-listen 127.0.0.1:7543 --api-listen 127.0.0.1:7101 --metrics-listen 127.0.0.1:7102 --peers 127.0.0.1:7443
//
// What a node sells is provisioned on its platform (--platform, local by
// default: real processes under --platform-dir): a K8Slice as a cluster
// with a quota, on which its buyer runs images of the node's catalog
// (--image NAME=PATH); a Service as its blueprint's App (--blueprints, a
// JSON or YAML file), whose credentials go to its buyer once it runs.
// A contract lasts --contract-term after its purchase while its buyer
// never renews it (a reference buyer never does); from its first renewal
// on, --contract-lease after each renewal (an edgekit buyer renews every
// --renew-interval).
//
// SIGINT or SIGTERM stops it gracefully; the processes it started keep
// running and are adopted at its next start. The flags are those of
// node.Main, which "edgekit fluidos-node" runs too.
package main

import (
	"github.com/edgekit/edgekit/hosts/fluidos/node"
	"github.com/edgekit/edgekit/internal/cmdutil"
)

func main() { cmdutil.Exit("fluidos-node", node.Main) }
