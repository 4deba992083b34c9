// Package executor is the lifecycle engine shared by every host of edgekit:
// the CRM (on the edge site, fed by the notify stream), the CCRM (N replicas
// off site, coordinating through etcd) and the FLUIDOS-style node. It never
// knows which host runs it.
//
// # Shape
//
//	eng, err := executor.New(executor.Config{
//		Platform:         p,               // from platforms.New
//		Objects:          objs,            // lookups of clusters, apps...
//		ClusterInstInfos: clusterSender,   // where reports go
//		AppInstInfos:     appSender,
//		CloudletInfos:    cloudletSender,
//		Settings:         settings,        // timeouts, pool size
//		Logger:           log,             // nil discards
//	})
//	go eng.Start(ctx)                      // blocks until ctx ends
//	res, err := eng.Reconcile(ctx, cloudlet) // after a restart: converge
//	h, err := eng.SubmitClusterInst(ci)    // or eng.Submit(obj)
//	err = h.Wait(ctx)                      // optional: the outcome
//	err = eng.Resend(ctx)                  // after a reconnect: every last Info again
//
// Submit and the typed Submit methods queue the change an object asks for
// through its TrackedState (CREATE_REQUESTED, UPDATE_REQUESTED,
// DELETE_REQUESTED; see each method for what else a Cloudlet, an AppInst
// and a TrustPolicyException can ask for). An object asking for nothing is
// ErrNoChange. Submitting before Start queues the work; after Start
// returned it is ErrStopped. SubmitContext binds a request to a context of
// the host's (see Request contexts).
//
// # Operations
//
// The engine moves an object through the *ING state to a final or error
// state and reports every step in the object's Info through a Sender:
// CREATE_REQUESTED -> CREATING -> READY or CREATE_ERROR; UPDATE_REQUESTED
// -> UPDATING -> READY or UPDATE_ERROR; DELETE_REQUESTED -> DELETING ->
// DELETE_DONE or DELETE_ERROR (cloudlets report CloudletState: INIT,
// READY, ERRORS, NOT_PRESENT). Every report is a partial update: the
// FieldMap names exactly the flags the engine set (always the key), so the
// receiver applies it with CopyInFields. StatusInfo carries the engine's
// tasks ("Creating ClusterInst", "Undoing create") and the platform's steps
// (Progress); steps arriving after the outcome are dropped.
//
//   - A failed create calls the matching delete to undo what was created
//     before it reports CREATE_ERROR; the errors list holds the cause and,
//     if undo failed too, the undo error.
//   - Platforms adopt what exists on create and succeed when deleting what
//     is absent, so the engine can be killed at any point and re-run.
//   - Each operation runs under a timeout from Settings (TimeoutsFrom
//     documents which setting and the default used when it is zero). A
//     timeout reports the error state with a *TimeoutError (ErrTimeout).
//   - When the context given to Start ends, running operations see their
//     context cancelled, report an error state (ErrCanceled) with a short
//     detached context, and undo as above; a success is reported only when
//     the platform returned success. Queued requests are resolved with
//     ErrStopped and nothing is reported for them: the object stays in its
//     *_REQUESTED state for the next run.
//
// # Lookups
//
// An operation reads what it depends on through the Getters of
// Config.Objects when it starts (a cluster's cloudlet; an app instance's
// cluster and app; a trust policy; an exception's app instances). A Getter
// answers with the object, with an error matching ErrNotFound (a
// *NotFoundError naming kind and key: the host does not know the object),
// or with any other error (the host could not tell: a store that is
// unreachable). Create and update need every dependency: any failure
// reports CREATE_ERROR or UPDATE_ERROR wrapping the Getter's error, and
// the platform is not called. A delete can proceed with the key alone
// when a dependency is gone (not found), because the platform deletes by
// key and deleting what is absent succeeds; when a lookup fails for any
// other reason the delete reports DELETE_ERROR and does nothing, so the
// platform never acts on a made-up object.
//
// # Start-up reconciliation
//
// A host that was down (a CRM restarted, a CCRM replica taking over a
// cloudlet, a FLUIDOS node after a crash) calls Engine.Reconcile for each
// cloudlet it serves, once the engine runs. Reconcile asks the platform
// what exists (the optional InventoryPlatform role), lists what the host
// has (Objects.ClusterInstsOn, Objects.AppInstsOn), and converges: what
// the host wants and the platform lacks is created, what the platform has
// and the host no longer wants is deleted, interrupted operations are run
// again to their end (platforms adopt on create and succeed on deleting
// what is absent), leftovers of failed creates are undone, and what is
// present on both sides is reported with its real state and runtime. The
// table is in Reconcile's documentation; everything is reported through
// the Senders as usual. An error listing either side changes nothing.
// A host that runs its requests itself narrows it to removing what it no
// longer has (OrphansOnly) and holds its own lock on each object while it
// is acted on (WithReconcileGuard: the object is read again under it).
//
// # Input limits
//
// Submit refuses, with a *ValidationError (ErrBadObject) naming the field,
// an object asking to be created or updated whose keys break the limits of
// ValidateKeys: organizations and names non-empty, at most MaxKeyFieldLen
// bytes of UTF-8 without control characters. Before creating or updating
// an AppInst the engine checks its App's ports (ValidatePorts:
// internal_port and end_port within MinPort..MaxPort) and reports
// CREATE_ERROR or UPDATE_ERROR without calling the platform. A delete is
// never refused for its key: deleting what could never have been created
// succeeds.
//
// # Scheduling
//
// At most one operation runs per object key at a time; operations of
// different keys run in parallel on a pool of Config.Workers goroutines
// (default Settings.max_concurrent_tasks, else DefaultWorkers). A request
// for a key that already has a queued, not yet started request replaces it:
// the older Handle resolves with ErrSuperseded. A request for a key whose
// operation is running waits for it.
//
// # Reporting and hosts
//
// Sender is the only way out. Cache is a Sender that applies reports to a
// typed in-memory cache (what the CRM sends back over its stream); Stream
// is a Sender that puts reports in wire form on a channel, and applies them
// to a Cache at the other end (what the CCRM sends over gRPC). Both give
// the same objects for the same reports.
//
// # Report delivery
//
// Every report goes through the engine's record of the object's last known
// Info before it reaches the Sender, and the reports of one object are
// sent one at a time, in order. A report the Sender fails to deliver is
// tried again (Config.ReportRetry: bounded attempts, jittered exponential
// back-off, ended early by the operation's context). When an intermediate
// report still fails, its flags travel again with the object's next
// report, so the receiver ends up with every field even if it missed a
// step. Every report of an operation carries the request_id of the object
// the engine acts on (when it has one), so that the receiver can refuse a
// report of a request it has superseded since; the undelivered flags of
// an earlier request never travel with a later request's reports. When
// the final report of an operation (its outcome) fails, the
// request's Handle fails with an error matching ErrReportFailed: the
// platform's work is done or undone, the operation can be submitted again
// (the platform adopts what exists, deleting what is absent succeeds), and
// Engine.Resend, which a host calls after its link to the receiver came
// back, sends the last known Info of every object again. The record of an
// object is forgotten once a report saying it is gone (DELETE_DONE,
// NOT_PRESENT) was delivered, so it stays bounded by the objects that
// exist, and when the Sender says the receiver refused a report for good
// (ErrReportRejected: a CCRM whose claim on the object is gone), which is
// not retried either.
//
// # Request contexts
//
// SubmitContext binds a request to a context of the host's: the
// operation's lookups, platform calls and reports see its values (a CCRM's
// claim token), and the operation is cancelled when it ends, as when the
// engine stops.
//
// # Reservations
//
// Reservations hands platforms values that must not be handed out twice per
// cloudlet (subnets, ports, addresses), each with an owner (OwnerOf).
// MemReservations is the in-process implementation; Update re-runs its
// function when another writer won a race, as a shared store does.
//
// # Logging and secrets
//
// The engine logs through the slog.Logger of Config (nil discards) with
// kind, key and op attributes. It never logs objects: keys, states,
// durations and errors only. Reports carry what platforms put in Info
// fields; fields marked debug_redact (kubeconfig, credentials) must not be
// sent to less trusted parties: use fieldmap.Redacted on a copy first.
package executor
