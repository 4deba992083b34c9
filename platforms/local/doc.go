// Package local is the platform that runs edge workloads as real processes
// on this host. It registers itself with the platforms registry as "local".
//
// # Model
//
//   - The cloudlet is the host. GatherCloudletInfo reports its CPUs
//     (runtime.NumCPU), memory (/proc/meminfo) and the disk of the
//     filesystem holding the state directory (statfs); flavors are fixed
//     shapes ("local.tiny" ... "local.xlarge") that fit the host, plus
//     "local.host", the whole host. The snapshot also lists the cloudlet's
//     clusters; one NodeInfo describes the host; properties give OS, arch,
//     kernel, hostname and the port bounds.
//   - A ClusterInst is a directory under the state root with a port range
//     of Config.PortRangeSize ports, reserved through the engine's
//     Reservations (kind "port-range", owner executor.OwnerOf the cluster),
//     so no two clusters of a cloudlet overlap. Deleting the cluster stops
//     its processes and releases the range and every port reserved in it.
//   - An AppInst is a process started from App.Command and App.Args (a
//     command with spaces and no arguments is split on them, no shell) in
//     its own process group, working in its directory, with stdout and
//     stderr appended to log files. Each declared port gets a block of
//     ports from the cluster's range (kind "port"; an app that declares
//     none gets one port); ports something on the host already listens on
//     are skipped, trying every port of the range before giving up with
//     ErrNoFreePorts. The process sees PORT (the first port),
//     PORT_<internal_port> for each declared port (and PORT_<n>_END for a
//     range), HOME (its working directory), its App env vars (secret ones
//     with their secret value), MarkerEnv (below) and, of this program's
//     environment, only the variables named in Config.InheritEnv (PATH by
//     default). It is ready when its health check passes: an HTTP GET of
//     health_check_path answering 2xx, or a TCP connect, on 127.0.0.1,
//     polled until the context's deadline; a process that exits first
//     fails at once. The runtime info holds its pid and ports; inst.Uri
//     and inst.MappedPorts are set on the caller's copy.
//   - A cluster may have a quota, stated by its node pools: the sum over
//     the pools of num_nodes (at least 1) times each node's resources,
//     CPU from NodeResources.opt_res_map "cpu" (a Kubernetes quantity,
//     "1500m") or else vcpus cores, memory from "memory" ("1Gi") or else
//     ram_mb MiB, and instances from "pods" (no limit unless a pool names
//     it). A cluster without node pools has no quota. An App states what
//     each of its instances requests with the annotations
//     resources.edgekit.io/cpu and resources.edgekit.io/memory. Creating
//     or updating an instance first checks that its requests fit in what
//     the cluster's other instances leave (a *QuotaError, matching
//     ErrQuotaExceeded and executor.ErrInsufficientResources, names the
//     resource, the request, the use and the limit), and a cluster with a
//     CPU or memory quota refuses an app that does not request it. The
//     check and the write of the instance's record, which holds its
//     requests, happen under one lock per cluster, so concurrent creates
//     never share out more than the quota; the records on disk are what is
//     counted, so the accounting survives restarts.
//   - Power off stops the process and keeps its ports; power on starts it;
//     a reboot, or an update that changes command, arguments, environment
//     or ports, restarts it. Updating a cluster or an instance that was
//     never created fails with an error matching executor.ErrNotFound.
//   - Stopping sends SIGTERM to the process group and SIGKILL after
//     Config.StopGrace (or when the context ends first), so children die
//     too.
//   - ListInsts (executor.InventoryPlatform) reports what the state
//     directory and the host hold, including instances whose create was
//     interrupted (CREATING) and processes whose state file is lost. A
//     state file that cannot be read (truncated, garbage) affects its
//     object only: the cloudlet and the other objects keep working, and
//     the object is listed so that the engine reports it in error (see
//     ListInsts); the cloudlet's own record, which only marks it
//     initialised, is written again by InitCloudlet.
//
// Keys and ports are checked by the engine when work is submitted
// (executor.ValidateKeys, executor.ValidatePorts). The platform refuses to
// create anything for an empty name or an empty cloudlet key, and deleting
// such a key succeeds at once (nothing can exist for it). Errors name
// objects by at most 64 bytes of their key and files by their path inside
// the state directory, never by where it is on the host.
//
// # Several platforms per state directory, fenced
//
// Several platforms may use one state directory at once, in this process
// or others (the CCRM replicas serving one local cloudlet, each with its
// own engine). Operations lock the objects they work on from the
// cloudlet down: shared on the cloudlet and cluster of an instance,
// exclusive on the object. Each lock is taken within the platform and on
// the object's lock file (flock on <root>/locks/<hash of the object's
// names>.lock, shared or exclusive the same way), so it holds between
// platforms; it ends with the operation or with the holder's process, so
// a killed engine never leaves one behind. Everything that decides what
// runs — the check whether the instance's process already runs and its
// start, a record's read and its write, the stop of a process and the
// removal of its directory — happens under the object's exclusive lock,
// so two platforms never start a duplicate or corrupt a record. A cluster
// delete therefore waits for the operations running on its instances,
// whichever platform runs them, and it first marks the cluster as being
// deleted, so that an instance create arriving later (even after an
// interrupted delete) fails with ErrClusterNotFound. Reads (ListInsts,
// the cloudlet's snapshot) take shared locks on the cloudlet only, so they
// run while other platforms work on its clusters and instances. New holds
// <root>/lock only while it creates the directory's key.
//
// Each record (cloudlet.json, cluster.json, state.json) holds the fence
// it was last written under (executor.FenceFrom: the token of the claim
// the host runs the operation under; the greatest one that wrote it). An
// operation under a fence older than its object's record is refused,
// under the object's lock and before it starts, stops or writes anything,
// with an error matching executor.ErrFenced: an engine whose claim moved
// to another one while it was paused finds the new holder's fence and
// does nothing. Operations without a fence (a host with one engine per
// cloudlet) are not refused and keep the recorded fence.
//
// # Surviving a kill at any instant
//
// The platform keeps nothing in memory that matters, and processes
// outlive the program that started them. Every process it starts carries,
// in its environment, MarkerEnv: the state directory's identity, a random
// id of this launch and the instance's directory names. A launch writes
// the instance's state file before it starts the process (the intent:
// ports and launch id), again once the process runs (pid, start time,
// executable, boot id), and once it is healthy. Whatever instant a kill
// hits, a re-run finds every process of an instance by scanning /proc for
// its marker, even when the state file is missing or unreadable:
//
//   - a create adopts the recorded process when it is provably the one the
//     record describes (below), once its health check passes (run again
//     even when it passed before: a process can hang while no engine
//     watches it; one that fails it is stopped and the create fails); any
//     other process of the instance (an
//     interrupted start, a lost record) is stopped before a new one starts,
//     so there is never a duplicate;
//   - a delete of an instance, a cluster or a cloudlet stops every process
//     carrying a marker at or below it, so there is never an orphan; an
//     unreadable state file does not stop it (what the file would have
//     named is found by its marker) and does not make it succeed while a
//     process runs;
//   - an adopted instance's ports, and a cluster's recorded range, are
//     reserved again, so an engine whose reservation store was in memory
//     recovers them; a cluster delete releases every port in its range,
//     whoever the store says holds it;
//   - a record is written to a temporary file (".<name>.tmp" and a tag
//     random per Platform) renamed over it: a kill in between leaves the
//     record as it was and the temporary file, which is removed when its
//     object is next touched (the key's when a Platform opens the
//     directory, the cloudlet's by InitCloudlet, a cluster's by its
//     create or update, an instance's by its create or update; a delete
//     removes the whole directory). Temporary files carrying the tag of
//     the Platform at work are its writes in progress and are kept.
//
// # On-disk layout
//
//	<root>/lock, <root>/key
//	<root>/locks/<hash>.lock                                      one per object, kept after it is deleted
//	<root>/cloudlets/<cloudlet>/cloudlet.json
//	<root>/cloudlets/<cloudlet>/clusters/<cluster>/cluster.json   key, phase, port range, quota
//	<root>/cloudlets/<cloudlet>/clusters/<cluster>/apps/<inst>/state.json
//	                                                   .../stdout.log, stderr.log
//	                                                   .../work/   working directory
//
// Names are "<organization>.<name>" of the object's key with every byte
// outside [A-Za-z0-9-] written as _XX, so distinct keys never share a
// directory and a name can be read back into its key; a name longer than
// 255 bytes is replaced by "~" and its SHA-256 (such an instance can still
// be listed, from its state file). Directories are 0700, files 0600;
// state files are replaced atomically and carry a format number: a file
// of another format is unreadable to this version.
//
// # What it does not model
//
// No isolation beyond directories and process groups: processes run as the
// engine's user and see its filesystem and network. Quotas are accounting
// of what instances request, checked when they are admitted: a running
// process is not stopped from using more CPU or memory than it requested
// (no cgroups), and the cloudlet's flavors and resource quotas are
// reported, never enforced. No trust policies: a policy with rules fails
// with ErrUnsupported (an empty one succeeds), and every trust policy
// exception with ErrNoNetworkRules, which the exception shows on each of
// its instances on the cloudlet. Only loopback: instances are reached on 127.0.0.1 and nothing
// is exposed on other addresses. Ports are reserved per cloudlet, so two
// cloudlets on one host may pick the same range; a port something else on
// the host already listens on is skipped when an instance starts, not when
// the range is reserved. UDP ports are handed out but not probed. The
// marker lives in the process's environment block: an application that
// overwrites that block (as some daemons do to set their process title),
// or a descendant that clears its environment and leaves the process
// group, is no longer found by the scan, and a process that a state file
// names but that has lost its marker (an exec with an emptied
// environment, as `exec env -i server` does) is not recognised as the
// platform's: it is never signalled, and the operation that needed it
// gone fails with ErrNotOwned. An exec that keeps the environment (a
// wrapper script ending in `exec server`, the usual way) keeps the
// process the platform's.
// The object locks are flocks: they do not hold across hosts sharing a
// network filesystem. Configuration files of the App (configs)
// and images are ignored.
//
// # Security
//
// Secret env var values reach the process environment only: they are not
// logged, not written to state files and not reported. To notice changes,
// the state file holds an HMAC-SHA256 of the whole configuration, secrets
// included, keyed with the state directory's own random 32-byte key
// (<root>/key, 0600): without the key the hash does not let anyone test
// guesses of a secret. Like any process environment, secrets are readable
// through /proc by the same user, who can read the key too. The marker
// carries an identity derived from the key, not the key.
//
// The platform signals only what it can prove it started. A process is
// signalled only when its environment carries this state directory's
// marker for the object being stopped, re-checked with its start time
// just before the signal (single processes are signalled through a pidfd,
// so a reused pid never receives it); a process group only when its
// leader is such a process, or while members remain after such a leader
// exited (a group id is not reused while it has members). A process that a
// state file names is adopted only when it runs under the same boot with
// the recorded start time, leads its own process group and carries the
// marker of the recorded launch (a random id per start); its executable
// is not part of the proof, since the application may exec another
// program, which keeps all three. Pid 0, pid 1 (and so
// kill(-1)), this program and its process group are never signalled,
// whatever a state file says. Health probes use no proxy and go to
// loopback only. Applications run the developer's command with the
// engine's privileges: use this platform on a host dedicated to it.
package local
