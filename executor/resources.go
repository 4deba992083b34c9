package executor

import (
	"context"
	"errors"
	"log/slog"

	"github.com/edgekit/edgekit/edgeproto"
)

// Resources refresh.
//
// Every ClusterInst and AppInst operation changes what its cloudlet uses,
// so when one ends (whatever its outcome: a failed create may have left
// something until its undo) the engine asks the platform for the
// cloudlet's resources again (GatherCloudletInfo) and reports the snapshot
// alone: a CloudletInfo report carrying only resources_snapshot.
//
// Refreshes are coalesced per cloudlet: the refresh is a request of the
// engine's queue under its own key (kind "CloudletResources", the
// cloudlet's key string), and the queue keeps at most one running and one
// pending request per key, a newer request superseding the pending one.
// So a refresh asked while one runs runs once after it (trailing: the last
// change is always seen), and a burst of operations ending while a refresh
// runs costs one more refresh, not one each. Nothing polls.

// resourcesKind is the queue kind of resources refreshes.
const resourcesKind = "CloudletResources"

// refreshAfter wraps the run of an operation on an object of cloudlet so
// that a resources refresh of cloudlet is requested when it ends. The
// refresh runs under the engine's context, not the operation's (whose
// right to act, a CCRM's claim of the object, ends with it), and under
// Config.ResourcesGuard when set.
func (e *Engine) refreshAfter(cloudlet *edgeproto.CloudletKey, run func(context.Context) error) func(context.Context) error {
	if cloudlet == nil {
		return run
	}
	cloudlet = cloudlet.Clone()
	return func(rctx context.Context) error {
		err := run(rctx)
		e.requestRefresh(cloudlet)
		return err
	}
}

// requestRefresh queues a resources refresh of cloudlet, superseding one
// already pending.
func (e *Engine) requestRefresh(cloudlet *edgeproto.CloudletKey) {
	key := KeyString(cloudlet)
	if key == "" {
		return
	}
	h := newHandle(resourcesKind, key)
	run := func(rctx context.Context) error { return e.refreshResources(rctx, cloudlet) }
	if err := e.q.push(resourcesKind+"/"+key, &task{handle: h, run: run}); err != nil {
		e.log.LogAttrs(context.Background(), slog.LevelDebug, "resources refresh not queued",
			slog.String("cloudlet", key), slog.Any("error", err))
	}
}

// refreshResources gathers the cloudlet's resources snapshot and reports
// it. A cloudlet the host does not know (deleted meanwhile) or that is
// being deleted is skipped. Errors are logged: the next change refreshes
// again.
func (e *Engine) refreshResources(ctx context.Context, key *edgeproto.CloudletKey) error {
	ks := KeyString(key)
	log := e.log.With(slog.String("kind", resourcesKind), slog.String("key", ks))
	if g := e.cfg.ResourcesGuard; g != nil {
		gctx, done, err := g(ctx, cloudletSpec.kind, ks)
		if errors.Is(err, ErrBusy) {
			log.LogAttrs(ctx, slog.LevelDebug, "resources refresh skipped", slog.Any("error", err))
			return nil
		}
		if err != nil {
			log.LogAttrs(ctx, slog.LevelWarn, "resources refresh not guarded", slog.Any("error", err))
			return &OpError{Kind: cloudletSpec.kind, Key: ks, Op: "refresh resources", Err: err}
		}
		if done != nil {
			defer done()
		}
		ctx = gctx
	}
	to := e.timeouts().UpdateCloudlet
	opCtx, cancel := context.WithTimeout(ctx, to)
	defer cancel()
	c, err := lookup(opCtx, e.cfg.Objects.Cloudlets, "cloudlet to refresh", key)
	if err != nil {
		log.LogAttrs(ctx, slog.LevelDebug, "resources refresh skipped", slog.Any("error", err))
		return nil
	}
	switch c.GetState() {
	case edgeproto.TrackedState_TRACKED_STATE_DELETE_REQUESTED, edgeproto.TrackedState_TRACKED_STATE_DELETING,
		edgeproto.TrackedState_TRACKED_STATE_DELETE_DONE:
		return nil
	}
	gathered := &edgeproto.CloudletInfo{Key: key.Clone()}
	if err := e.cfg.Platform.GatherCloudletInfo(opCtx, c, gathered); err != nil {
		err = classify(ctx, opCtx, to, err)
		log.LogAttrs(ctx, slog.LevelWarn, "resources refresh failed", slog.Any("error", err))
		return &OpError{Kind: cloudletSpec.kind, Key: ks, Op: "refresh resources", Err: err}
	}
	info := &edgeproto.CloudletInfo{Key: key.Clone(), ResourcesSnapshot: gathered.ResourcesSnapshot}
	rctx, rcancel := reportContext(ctx)
	defer rcancel()
	fm := fieldsOf(info.FieldSchema(), cloudletSpec.key, []string{edgeproto.CloudletInfoFieldResourcesSnapshot})
	if err := e.cloudletInfos.send(rctx, info, fm); err != nil {
		log.LogAttrs(rctx, slog.LevelWarn, "resources report failed", slog.Any("error", err))
		return &OpError{Kind: cloudletSpec.kind, Key: ks, Op: "report resources", Err: reportFailed(err)}
	}
	log.LogAttrs(rctx, slog.LevelDebug, "resources refreshed")
	return nil
}
