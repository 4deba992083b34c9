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
//     its processes and releases the range and its instances' ports.
//   - An AppInst is a process started from App.Command and App.Args (a
//     command with spaces and no arguments is split on them, no shell) in
//     its own process group, working in its directory, with stdout and
//     stderr appended to log files. Each declared port gets a block of
//     ports from the cluster's range (kind "port"; an app that declares
//     none gets one port). The process sees PORT (the first port),
//     PORT_<internal_port> for each declared port (and PORT_<n>_END for a
//     range), HOME (its working directory), its App env vars (secret ones
//     with their secret value) and, of this program's environment, only
//     the variables named in Config.InheritEnv (PATH by default). It is
//     ready when its health check passes: an HTTP GET of
//     health_check_path answering 2xx, or a TCP connect, on 127.0.0.1,
//     polled until the context's deadline; a process that exits first
//     fails at once. The runtime info holds its pid and ports; inst.Uri
//     and inst.MappedPorts are set on the caller's copy.
//   - Power off stops the process and keeps its ports; power on starts it;
//     a reboot, or an update that changes command, arguments, environment
//     or ports, restarts it.
//   - Stopping sends SIGTERM to the process group and SIGKILL after
//     Config.StopGrace (or when the context ends first), so children die
//     too.
//
// # Restarts
//
// The platform keeps nothing in memory that matters: every instance's pid,
// process start time (field 22 of /proc/<pid>/stat), ports and
// configuration hash are in a state file, and processes outlive the
// program that started them. CreateAppInst on an instance with a record
// adopts the process when the pid is alive, leads its own group and has
// the recorded start time; otherwise the record is stale (the process died
// or its pid was reused) and the process is started again. An adopted
// instance's ports, and a cluster's recorded range, are reserved again, so
// an engine whose reservation store was in memory recovers them.
// Deleting an absent cluster or instance succeeds.
//
// # On-disk layout
//
//	<root>/cloudlets/<cloudlet>/cloudlet.json
//	<root>/cloudlets/<cloudlet>/clusters/<cluster>/cluster.json   key, port range
//	<root>/cloudlets/<cloudlet>/clusters/<cluster>/apps/<inst>/state.json
//	                                                   .../stdout.log, stderr.log
//	                                                   .../work/   working directory
//
// Names are "<organization>.<name>" of the object's key with every byte
// outside [A-Za-z0-9-] written as _XX, so distinct keys never share a
// directory. Directories are 0700, files 0600; state files are replaced
// atomically.
//
// # What it does not model
//
// No isolation beyond directories and process groups: processes run as the
// engine's user and see its filesystem and network. No resource limits:
// flavors and quotas are reported, never enforced. No trust policies:
// policies and exceptions with rules fail with ErrUnsupported (empty ones
// succeed). Only loopback: instances are reached on 127.0.0.1 and nothing
// is exposed on other addresses. Ports are reserved per cloudlet, so two
// cloudlets on one host may pick the same range; a port something else
// on the host already listens on is skipped when an instance starts, not
// when the range is reserved. UDP ports are handed out but not probed.
// A process that dies between its start and the write of its state file
// is not tracked (the window is the duration of one small file write).
// Configuration files of the App (configs) and images are ignored.
//
// # Security
//
// Secret env var values reach the process environment only: they are not
// logged, not written to state files and not reported; the state file
// holds only a SHA-256 hash of the whole configuration, secrets included,
// to notice changes. Like any process
// environment, they are readable through /proc by the same user. The
// platform signals a process only after checking that its pid still has
// the recorded start time and leads its own process group, so it never
// signals a process it did not start; after such a leader exits, the rest
// of its group may still be killed, since a group that still has members
// keeps its id from being reused. Health probes use no proxy and go to
// loopback only. Applications run the developer's command with the
// engine's privileges: use this platform on a host dedicated to it.
package local
