// Package crm is the resource manager of one edge site (a cloudlet created
// with crm_on_edge): the lifecycle engine (executor.Engine) on a platform,
// fed by the controller's notify stream (proto/edgekit/notify/v1). It is
// importable so that a program with its own platforms can build its own
// CRM binary; cmd/crm is the thin main of the shipped one, on Run.
//
//	c, err := crm.New(crm.Config{
//		Controller: "127.0.0.1:55001",
//		Cloudlet:   &edgeproto.CloudletKey{Organization: "operator", Name: "site1"},
//		AccessKey:  key,      // shown once when the cloudlet was created
//		Platform:   platform, // from platforms.New
//	})
//	err = c.Start(ctx) // blocks until ctx ends, then stops gracefully
//
// # What it does
//
//   - It keeps one notify stream open, authenticated by the cloudlet's
//     access key (and a client certificate with mutual TLS), reconnecting
//     with jittered, doubling back-off. Each stream starts with the
//     controller's initial sync; the CRM keeps what it receives in typed
//     caches (executor.Cache) that the engine reads its lookups from, and
//     drops at the end of a full sync what the sync no longer holds. A
//     reconnecting CRM names the last revision it applied, and the
//     controller sends only what changed since, deletes included (a full
//     sync when the store compacted that revision). A stream
//     silent for three of the controller's keepalive intervals is taken
//     for dead.
//   - Every request (an object in a *_REQUESTED state; for the cloudlet
//     also a trust-policy update or a maintenance request) is submitted
//     to the engine once: the same request seen again, as after a resync,
//     is not submitted twice.
//   - On the first sync of the process it initialises its cloudlet
//     (InitCloudlet, then CloudletInfo READY with flavors, resources and
//     node info) or, when the cloudlet is READY already, gathers its info
//     again; and it reconciles clusters and instances with what the
//     platform has (executor.Engine.Reconcile, when the platform lists its
//     inventory; otherwise changes left in an *ING state are run again):
//     a CRM killed in the middle of a change finishes it, and what was
//     deleted while no CRM ran is removed.
//   - An object the controller deleted while the CRM was not looking (not
//     in a delete state in the CRM's last copy) is deleted on the platform.
//   - The engine's reports are applied to Info caches and streamed back as
//     partial reports carrying the flags that changed since the object's
//     last report, one in flight per object, each acknowledged by the
//     controller with a verdict (applied, rejected, failed). Nothing
//     unacknowledged is dropped while the process lives: reports in flight
//     when a stream breaks, or that the controller could not judge, are
//     sent again, so the engine's Sender never fails and Engine.Resend is
//     not needed. A report the controller rejected (a stale state) is not
//     sent again. Changes are merged into one report only within a phase
//     of an object: the changes of a phase not yet sent when its state
//     changes (the steps of CREATING when READY is reported), or when the
//     engine starts on a later request of the object (its request_id),
//     go as they were, before the new state, so the controller shows every
//     progress message with the state it was reported in. A report sent
//     again goes as it was, before anything reported after it: one that
//     answers a request the controller has superseded since (the READY of
//     a create, sent again after a reconnect, once an update was
//     requested) carries the older request_id and the controller rejects
//     it rather than take it for the outcome of the newer request.
//
// # Stopping
//
// When Start's context ends, no new request is taken; operations in flight
// get Config.StopTimeout to finish and, while the controller is reachable,
// their reports to be acknowledged; then the engine and the stream stop.
// Operations still running at the timeout are cancelled (each reports its
// error state); what a platform started outlives the process and is
// adopted by the next start.
//
// # Observability
//
// Logs go to Config.Logger (kinds, keys, states and errors; never objects
// or the access key). Metrics (Config.Registerer): edgekit_crm_connected,
// edgekit_crm_streams_total{end}, edgekit_crm_updates_received_total{kind},
// edgekit_crm_reports_sent_total, edgekit_crm_report_acks_total{verdict},
// edgekit_crm_requests_submitted_total{kind},
// edgekit_crm_initial_sync_seconds and edgekit_crm_reports_pending.
package crm
