// Package region runs a whole edgekit region on this machine as real
// processes on loopback, with one call: Up. It is what "edgekit up" runs.
//
// The region: the controller (embedded etcd, development TLS), two CCRM
// replicas, one edge cloudlet ("edge1") whose CRM runs on the local
// platform, one cloudlet served by the CCRM replicas ("offsite1") on the
// local platform, with Options.KubeconfigFile one more CCRM cloudlet
// ("k8s1") on that Kubernetes cluster (platform kubernetes, the file's
// content its access variable KUBECONFIG, never printed), and two FLUIDOS nodes trading over mutual TLS: a
// provider selling a slice of this host and the key-value Service of
// package kvservice (provisioned as a real process through its lifecycle
// engine on the local platform), and a consumer that buys from it; with
// Options.KubeconfigFile a third node, KubernetesProvider, on that
// cluster (platform kubernetes), selling slices of it and the Service of
// KubernetesBlueprint, a database in the FLUIDOS reference's format. Every process is the multi-call edgekit binary run with a
// subcommand (edgekit controller, crm, ccrm, fluidos-node), copied into
// the state directory so that it outlives a "go run" build.
//
// Up prints what it started, a line per part as it gets ready, and how to
// reach the region (the edgectl context it wrote, the admin token, the
// status page); it supervises the processes (one that exits is started
// again, with back-off) until its context ends. Then it stops the region:
// it powers off the application instances of the region's cloudlets
// through the controller (so that their processes end and their ports are
// released the way the platform releases them, and the next Up powers
// them on again), stops the processes by pid in order (resource managers
// and nodes, then the controller), stops any application process of the
// state directory still running, and checks that every port is released.
// The state directory keeps everything for the next Up, which resumes the
// region; Options.Fresh starts from nothing.
//
// # State directory
//
//	up.lock                  one Up at a time (flock; holds up's pid)
//	region.json              the running region (Info), removed at stop
//	bin/edgekit              the binary every process runs
//	bin/edgekit-kv           a hard link of it: the provider's image "kv"
//	controller/              the controller's data: etcd/, tls/, admin.token
//	crm/edge1/, crm/edge1.key the CRM's platform state and access key (0600)
//	ccrm/                    the CCRM replicas' platform state
//	fluidos/provider/, fluidos/consumer/, fluidos/tls/, fluidos/blueprints.json
//	fluidos/provider-k8s/, fluidos/blueprints-k8s.json  with a kubeconfig
//	logs/<process>.log       each process's output, appended
//	run/<process>.json       each process's ready file (cmdutil.Ready)
//	powered-off.json         instances the last stop powered off
//
// Nothing is written outside it but the edgectl context (in edgectl's
// configuration file, see clientconfig).
package region
