package executor

import (
	"context"

	"github.com/edgekit/edgekit/edgeproto"
)

// clusterOps is how Reconcile works on ClusterInsts.
func (e *Engine) clusterOps() *kindOps[*edgeproto.ClusterInst] {
	return &kindOps[*edgeproto.ClusterInst]{
		kind: clusterSpec.kind,
		get: func(ctx context.Context, o *edgeproto.ClusterInst) (*edgeproto.ClusterInst, error) {
			return lookup(ctx, e.cfg.Objects.ClusterInsts, "cluster", o.GetKey())
		},
		withState: func(o *edgeproto.ClusterInst, s edgeproto.TrackedState) *edgeproto.ClusterInst {
			c := o.Clone()
			c.State = s
			return c
		},
		request: e.clusterRequest,
		undo: func(ctx context.Context, key string, o *edgeproto.ClusterInst) error {
			return e.runClusterInst(ctx, key, o.Clone(), true)
		},
		report: func(ctx context.Context, key string, host, inv *edgeproto.ClusterInst) error {
			r := newReporter(e.clusterInfos, clusterSpec, &edgeproto.ClusterInstInfo{Key: host.Key.Clone(), RequestId: host.RequestId}, clusterStatus)
			return finalReport(ctx, r, key, func(i *edgeproto.ClusterInstInfo) []string {
				i.State = host.State
				flags := []string{clusterSpec.state}
				if inv.Resources != nil {
					i.Resources = inv.Resources.Clone()
					flags = append(flags, edgeproto.ClusterInstInfoFieldResources)
				}
				return flags
			})
		},
	}
}

// appInstOps is how Reconcile works on AppInsts.
func (e *Engine) appInstOps() *kindOps[*edgeproto.AppInst] {
	return &kindOps[*edgeproto.AppInst]{
		kind: appInstSpec.kind,
		get: func(ctx context.Context, o *edgeproto.AppInst) (*edgeproto.AppInst, error) {
			return lookup(ctx, e.cfg.Objects.AppInsts, "app instance", o.GetKey())
		},
		withState: func(o *edgeproto.AppInst, s edgeproto.TrackedState) *edgeproto.AppInst {
			c := o.Clone()
			c.State = s
			return c
		},
		request: e.appInstRequest,
		undo: func(ctx context.Context, key string, o *edgeproto.AppInst) error {
			return e.runAppInst(ctx, key, o.Clone(), true)
		},
		report: func(ctx context.Context, key string, host, inv *edgeproto.AppInst) error {
			r := newReporter(e.appInstInfos, appInstSpec, &edgeproto.AppInstInfo{Key: host.Key.Clone(), RequestId: host.RequestId}, appInstStatus)
			return finalReport(ctx, r, key, func(i *edgeproto.AppInstInfo) []string {
				i.State = host.State
				flags := []string{appInstSpec.state}
				if inv.RuntimeInfo != nil {
					i.RuntimeInfo = inv.RuntimeInfo.Clone()
					flags = append(flags, edgeproto.AppInstInfoFieldRuntimeInfo)
				}
				if inv.Uri != "" {
					i.Uri = inv.Uri
					flags = append(flags, edgeproto.AppInstInfoFieldUri)
				}
				if inv.PowerState != edgeproto.PowerState_POWER_STATE_UNSPECIFIED {
					i.PowerState = inv.PowerState
					flags = append(flags, edgeproto.AppInstInfoFieldPowerState)
				}
				return flags
			})
		},
	}
}

// finalReport sends one report that is an outcome on its own (Reconcile's
// report of what exists).
func finalReport[T infoObject[T]](ctx context.Context, r *reporter[T], key string, mutate func(T) []string) error {
	rctx, cancel := reportContext(ctx)
	defer cancel()
	if err := r.final(rctx, mutate); err != nil {
		return &OpError{Kind: r.spec.kind, Key: key, Op: "report", Err: reportFailed(err)}
	}
	return nil
}
