// Package ccrm is the CCRM: the lifecycle engine run off the edge site for
// every cloudlet without crm_on_edge, as any number of identical replicas
// that coordinate through the controller's etcd. Any replica can pick up
// any operation; a replica can die at any moment.
//
// # Work and claims
//
// A Replica follows the region's cloudlets, clusters and application
// instances through watch-fed store caches (store.Cache). An object needs
// work when it is in a *_REQUESTED state, or in an *ING state with no
// claim (its holder is gone: the operation is run again, and platforms
// adopt what exists and succeed when deleting what is absent). A replica
// claims an operation by creating the object's claim key
// (controller.ClaimKey) bound to the lease of its Session, reads the
// object and its cloudlet again from etcd in that same transaction (after
// the claim's put), and submits the object to the engine of its cloudlet
// under the claim (executor SubmitContext), whose lookup of that cloudlet
// gets the copy read with the claim; the claim key is deleted when the
// operation ends: by the controller, in the transaction of the report
// that settles the object when the replica asks it to
// (rmv1.ReportInfoRequest.release_claim; a claim taken for a cloudlet's
// resources refresh goes with the snapshot's report the same way), else
// by the replica. One claim per object at a time; a replica holds at
// most Config.Workers claims, and a busier replica waits a little longer
// before claiming, so idle replicas take new work first. When a replica's
// lease is lost (a crash, a pause, a partition) etcd deletes its claims
// and the others take their operations over; the replica itself notices
// as soon as its lease's deadline passes (Session.Alive), ends its claims,
// and goes on under a new lease.
//
// # Fencing
//
// A claim key's create revision is the claim's fencing token (Fence). Every
// report carries it, and the controller applies a report only while the
// claim key still has that create revision, in the same etcd transaction
// as the write. Reports and platform calls are not even attempted once a
// claim is known to be gone (ErrNoClaim), so an operation cancelled by the
// loss of its claim does not undo what the next holder does. Platform calls
// carry the claim in their context (FenceFrom) for platforms that fence at
// their own back end: they refuse work under a token older than the newest
// they saw for the object.
//
// # Platforms
//
// Each cloudlet gets its own engine, on the platform its platform_type
// names (Config.NewPlatform, by default the platforms registry), built when
// the cloudlet is first worked on and built again when the cloudlet
// changes (the engine it replaces finishes its work and stops), so one
// replica serves cloudlets of several platform types, each with its own
// features. Config.Platforms restricts the types a replica serves.
// Operations run under the region's Settings (their timeouts), followed
// as they change. Reservations live in etcd (package reservations), shared by every
// replica; values whose owner is gone are collected periodically.
//
// # Stopping
//
// When Start's context ends the replica claims nothing more, lets its
// operations finish for up to Config.DrainTimeout, then hands the claims
// of those still running back: they send no more reports and make no
// more platform calls, and another replica runs them again. Finally it
// revokes its lease.
//
// The replica writes to etcd only its lease, its claim keys and the
// reservations; objects and Info are written by the controller alone,
// from the replica's reports.
package ccrm
