package controller

import (
	"context"
	"errors"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/fieldmap"
	rmv1 "github.com/edgekit/edgekit/proto/edgekit/rm/v1"
	"google.golang.org/protobuf/proto"
)

// reportService serves the resource managers' ReportService: CCRMs (and
// admins, for tests and tools) report Info over gRPC.
type reportService struct {
	rmv1.UnimplementedReportServiceServer
	c *Controller
}

// ReportInfo applies one report. A report the controller judged and did not
// apply (stale, out of order, refused) is answered with applied=false and
// the reason, not with an error, so that the caller does not retry it;
// errors are left for failures to reach a verdict (bad request, store down).
func (s *reportService) ReportInfo(ctx context.Context, req *rmv1.ReportInfoRequest) (*rmv1.ReportInfoResponse, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	var info interface {
		proto.Message
		FieldSchema() *fieldmap.Schema
	}
	switch i := req.GetInfo().(type) {
	case *rmv1.ReportInfoRequest_CloudletInfo:
		info = i.CloudletInfo
	case *rmv1.ReportInfoRequest_ClusterInstInfo:
		info = i.ClusterInstInfo
	case *rmv1.ReportInfoRequest_AppInstInfo:
		info = i.AppInstInfo
	case *rmv1.ReportInfoRequest_TrustPolicyException:
		info = i.TrustPolicyException
	}
	if info == nil || !info.ProtoReflect().IsValid() {
		return nil, invalidf("report without an Info")
	}
	fm, err := info.FieldSchema().Parse(req.GetFields()...)
	if err != nil {
		return nil, invalidf("%v", err)
	}
	rep := Reporter{CCRM: p.CCRM, ReleaseClaim: req.GetReleaseClaim()}
	if f := req.GetFence(); f != nil {
		rep.Fence = &Fence{Key: f.GetKey(), Revision: f.GetRevision()}
	}
	released, err := s.c.applyReport(ctx, rep, info, fm)
	switch {
	case err == nil:
		return &rmv1.ReportInfoResponse{Applied: true, ClaimReleased: released}, nil
	case isVerdict(err):
		return &rmv1.ReportInfoResponse{Reason: err.Error()}, nil
	}
	return nil, apiError(err)
}

// isVerdict reports whether err is the controller's judgement of a report
// rather than a failure to judge it.
func isVerdict(err error) bool {
	return errors.Is(err, edgeproto.ErrInfoStateRejected) || errors.Is(err, ErrStaleReport) || errors.Is(err, ErrReportRefused)
}
