// Package notify is the controller's side of the notify stream
// (proto/edgekit/notify/v1): the server that CRMs, the resource managers
// running on edge sites, connect to.
//
// # Contract
//
// A CRM opens NotifyService.Connect and sends a Hello naming its cloudlet
// and the cloudlet's access key. The server checks the key through the
// Backend (a wrong key, a cloudlet without one, and with
// Config.RequireClientCert a connection without a verified client
// certificate are refused with Unauthenticated and logged), then:
//
//  1. reads, at one revision (the one the server's watch has reached),
//     what the CRM needs: the settings, every flavor, its cloudlet, the
//     trust policies of the cloudlet's organization, its cluster and app
//     instances and the Apps those instances run; and sends it between a
//     SyncStart and a SyncEnd. Of the instances and clusters it reads
//     only those the watch places on the cloudlet, so that a sync costs
//     what the cloudlet holds, not what the region holds.
//     A Hello naming a resume_revision (the last one the CRM applied on an
//     earlier stream) gets a resumed sync instead: the server reads the
//     region at that revision and now, and sends only the objects of the
//     CRM's scope that changed since or entered it, and deletes of those
//     that left it or are gone, between a SyncStart and a SyncEnd marked
//     resumed; a revision the store compacted (or never had) gets a full
//     sync;
//  2. sends every later change of what the CRM needs, in revision order:
//     an object that enters the CRM's scope is sent whole (an App when the
//     first instance on the cloudlet runs it), one that leaves it is sent
//     as a delete (an App when the last such instance goes). Secrets
//     (debug_redact fields of Apps and of the cloudlet) reach only the CRM
//     whose instances or cloudlet they belong to;
//  3. applies every Report through the Backend (as the CRM of its cloudlet:
//     a report on another cloudlet's object is refused and logged) and
//     answers each with a ReportAck carrying the verdict. Reports of
//     different objects are applied in parallel, those of one object in
//     order.
//
// # One watch, fanned out
//
// The server watches the region once, however many CRMs are connected (a
// hub, started with the first stream and stopped with the last): each
// change is decoded once and handed to the streams it concerns, by the
// route of its kind (kinds.go): flavors, Apps and the settings to every
// stream, a cloudlet to its own, a trust policy to those of its
// organization's cloudlets, a cluster or app instance to the stream of the
// cloudlet it is on and, when a change moves or deletes it, to that of the
// cloudlet it was on, a trust policy exception to the streams of the
// cloudlets of its entries and of those its entries left (the hub records
// where each is). A stream joins the
// hub before its initial sync and keeps what the hub hands it meanwhile,
// skipping what the sync already holds, so that nothing falls between the
// two. The cost of a change grows with the streams it concerns, not with
// every stream.
//
// # Flow control
//
// Each stream has a Queue (internal/notify) of at most Config.MaxQueue
// items that keeps only the latest change of each object: a slow CRM
// costs at most one queued item per object. When the queue is full anyway
// the stream ends with ResourceExhausted and the CRM resynchronises. The
// server sends a Keepalive whenever it had nothing to send for
// Config.KeepaliveInterval, so a CRM detects a dead controller (and the
// gRPC transport keepalives a dead connection).
//
// At most Config.MaxSyncs initial syncs run at once (a sync holds its
// slot from its reads until its SyncEnd is sent, so the objects of at
// most that many syncs are held at once) and Config.MaxWaitingSyncs
// streams wait for one; past that a stream ends with Unavailable and a
// RetryInfo detail saying when to connect again, each CRM turned away
// told a later time than the one before, so that every CRM reconnecting at
// once after a controller restart is synchronised at a bounded pace. The
// CRM waits at least that long (with jitter) before it connects again.
//
// A newer stream of the same cloudlet ends the older one (Aborted); a
// change or removal of the cloudlet's access key (rotation, deletion of the
// cloudlet) ends it with Unauthenticated; a broken watch (the store
// compacted the revision, lost its leader) ends every stream with
// Unavailable. In every case the CRM connects again and resynchronises
// (a resumed sync when it can, see above).
package notify
