package ccrm

import (
	"context"
	"errors"
	"fmt"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/fieldmap"
	rmv1 "github.com/edgekit/edgekit/proto/edgekit/rm/v1"
	"google.golang.org/protobuf/proto"
)

// ErrNoClaim says that a report or a platform call was attempted outside a
// valid claim: the claim it was made under was released, handed back or
// lost with the replica's lease. Such a report is not sent and such a call
// is not made; it wraps executor.ErrReportRejected, so the engine drops
// the report for good.
var ErrNoClaim = errors.New("ccrm: no valid claim")

// reportSender sends one kind of Info report to the controller, fenced by
// the claim of the report's context. A report without a valid claim is
// not sent; a report the controller judged and refused (a stale claim, an
// out-of-order state) is executor.ErrReportRejected: retrying it would not
// change the verdict.
func reportSender[T proto.Message](r *Replica, wrap func(T) *rmv1.ReportInfoRequest) executor.Sender[T] {
	return executor.SenderFunc[T](func(ctx context.Context, info T, fm *fieldmap.FieldMap) error {
		kind := string(info.ProtoReflect().Descriptor().Name())
		c, ok := ClaimFrom(ctx)
		if !ok || !c.Valid() {
			r.metrics.reportRejections.WithLabelValues(kind, "no_claim").Inc()
			return fmt.Errorf("%w: %w: report on %s not sent", executor.ErrReportRejected, ErrNoClaim, executor.KeyString(info))
		}
		if c.orphan {
			// The region has no such object: nobody to tell that it is
			// being removed from the platform.
			return nil
		}
		req := wrap(info)
		req.Fields = encodeFields(fm)
		req.Fence = &rmv1.Fence{Key: c.Fence.Key, Revision: c.Fence.Revision}
		// The operation's outcome, or the one report of a resources
		// refresh, releases the claim in the report's own transaction:
		// one etcd write instead of two.
		req.ReleaseClaim = c.releaseWithReport || settles(info, fm)
		resp, err := r.reports.ReportInfo(ctx, req)
		if err != nil {
			return fmt.Errorf("ccrm: report %s: %w", kind, err)
		}
		if resp.GetClaimReleased() {
			c.released.Store(true)
			c.end()
		}
		if !resp.GetApplied() {
			r.metrics.reportRejections.WithLabelValues(kind, "controller").Inc()
			r.log.Info("report rejected by the controller", "kind", kind, "key", executor.KeyString(info),
				"claim", c.Fence.Revision, "reason", resp.GetReason())
			if r.cfg.OnReportRejected != nil {
				r.cfg.OnReportRejected(kind, executor.KeyString(info), resp.GetReason())
			}
			return fmt.Errorf("%w: %s", executor.ErrReportRejected, resp.GetReason())
		}
		return nil
	})
}

// settles reports whether a report is its operation's outcome, the last
// report the engine sends under the claim: the state of a ClusterInstInfo
// or AppInstInfo, set by the report, is READY, an error state, DELETE_DONE
// or NOT_PRESENT. (A cloudlet's claim is released as before.)
func settles(info proto.Message, fm *fieldmap.FieldMap) bool {
	if fm == nil {
		return false
	}
	var s edgeproto.TrackedState
	switch i := info.(type) {
	case *edgeproto.ClusterInstInfo:
		if !fm.Has(edgeproto.ClusterInstInfoFieldState) {
			return false
		}
		s = i.GetState()
	case *edgeproto.AppInstInfo:
		if !fm.Has(edgeproto.AppInstInfoFieldState) {
			return false
		}
		s = i.GetState()
	default:
		return false
	}
	switch s {
	case edgeproto.TrackedState_TRACKED_STATE_READY,
		edgeproto.TrackedState_TRACKED_STATE_DELETE_DONE,
		edgeproto.TrackedState_TRACKED_STATE_NOT_PRESENT:
		return true
	}
	return edgeproto.IsErrorState(s)
}

func cloudletInfoReport(i *edgeproto.CloudletInfo) *rmv1.ReportInfoRequest {
	return &rmv1.ReportInfoRequest{Info: &rmv1.ReportInfoRequest_CloudletInfo{CloudletInfo: i}}
}

func clusterInfoReport(i *edgeproto.ClusterInstInfo) *rmv1.ReportInfoRequest {
	return &rmv1.ReportInfoRequest{Info: &rmv1.ReportInfoRequest_ClusterInstInfo{ClusterInstInfo: i}}
}

func appInstInfoReport(i *edgeproto.AppInstInfo) *rmv1.ReportInfoRequest {
	return &rmv1.ReportInfoRequest{Info: &rmv1.ReportInfoRequest_AppInstInfo{AppInstInfo: i}}
}

func tpeReport(e *edgeproto.TrustPolicyException) *rmv1.ReportInfoRequest {
	return &rmv1.ReportInfoRequest{Info: &rmv1.ReportInfoRequest_TrustPolicyException{TrustPolicyException: e}}
}

// encodeFields renders a FieldMap as the flags of a report, with their
// list actions ("9:add").
func encodeFields(fm *fieldmap.FieldMap) []string {
	flags := fm.Fields()
	for i, f := range flags {
		if a := fm.ListAction(f); a != fieldmap.Replace {
			flags[i] = f + ":" + a.String()
		}
	}
	return flags
}
