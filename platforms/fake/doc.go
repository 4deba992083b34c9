// Package fake is a deterministic in-memory platform for tests, demos and
// benchmarks of the engine. It registers itself as "fake" with the
// platforms registry.
//
// What it models:
//
//   - Cloudlets: InitCloudlet marks the site initialised (idempotent);
//     GatherCloudletInfo reports the configured flavors, one node with the
//     configured capacity, a resources snapshot (used, total, quota per
//     resource, the clusters counted) and the property platform=fake;
//     CleanupCloudlet forgets the site (an absent one succeeds).
//   - Resource accounting per cloudlet: a cluster uses vCPUs, RAM (MB) and
//     Disk (GB) of its node pools, or of one node of its flavor when it has
//     no pools, and one External IP when its IP access is DEDICATED. A
//     create or update that does not fit in min(quota, capacity) minus what
//     the cloudlet's other clusters use fails with a *ResourceError naming
//     the resource, the amount requested and the amount available
//     (errors.Is executor.ErrInsufficientResources).
//   - Reservations: a cluster reserves a /24 subnet, an application
//     instance one public port per port of its App, through the engine's
//     Reservations under executor.OwnerOf(object); deletes release them.
//     Values are the lowest free ones, so runs are reproducible.
//   - Idempotency: creating what exists adopts it (no new work, counted in
//     Stats.Adopted); deleting what is absent succeeds (and still releases
//     the object's reservations, cleaning up after a crash).
//   - Application instances need their cluster to exist on the fake;
//     updates apply the power state asked for (on, off, reboot) and return
//     the runtime info (container id "fake-<name>", the public ports).
//   - Trust policies per cloudlet and exceptions per cluster are recorded.
//   - Listing (executor.InventoryPlatform): ListInsts reports the clusters
//     and application instances of a cloudlet, READY, or CREATING for a
//     create that crashed half way (Fault.Crash: the object recorded, its
//     reservations held, the work not finished). A later create finishes
//     it (Stats.Adopted), a delete removes it.
//
// Test controls: Inject (fail the next N calls of an operation, or every
// call for one key, before or after doing the work, or half way through a
// create as a crash would), SetLatency (every call
// of an operation waits, honouring its context), Pause (block matching
// calls until the test releases them; Reached tells when one arrived),
// Calls and Stats (per-key counters that expose duplicate work), and
// inspection of what exists (Cluster, AppInst, Usage...).
//
// What it does not model: real time taken by infrastructure (apart from
// injected latency), failures other than injected ones, dependencies
// between objects beyond "an AppInst needs its cluster" (a cluster with
// instances can be deleted; clusters do not need an initialised cloudlet),
// resources used by application instances (only clusters count against
// quotas), GPUs and optional resources, node flavors chosen by matching,
// Kubernetes or Docker semantics, networking or reachability of what it
// "runs", persistence (a new Platform starts empty: adoption after an
// engine restart works only within one Platform value), and multi-process
// sharing (use one Platform per cloudlet set, in one process).
package fake
