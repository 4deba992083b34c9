package controller

import (
	"context"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/internal/store"
	"google.golang.org/grpc"
)

type cloudletService struct {
	edgeproto.UnimplementedCloudletServiceServer
	c *Controller
}

// CreateCloudlet creates a cloudlet. For a cloudlet whose resource manager
// runs on the edge site it issues the access key that CRM authenticates
// with: the first response carries it, the store keeps only its hash.
func (s *cloudletService) CreateCloudlet(req *edgeproto.CreateCloudletRequest, stream grpc.ServerStreamingServer[edgeproto.CreateCloudletResponse]) error {
	var accessKey string
	prepare := func(tx *store.Tx, cl *edgeproto.Cloudlet) error {
		if !cl.GetCrmOnEdge() {
			return nil
		}
		key, err := s.c.accessKeys.issue(tx, cl.Key)
		accessKey = key
		return err
	}
	first := true
	send := func(p *edgeproto.Progress) error {
		resp := &edgeproto.CreateCloudletResponse{Progress: p}
		if first {
			resp.CrmAccessKey = accessKey
			first = false
		}
		return stream.Send(resp)
	}
	return s.c.cloudlets.create(stream.Context(), s.c, req.GetCloudlet(), req.GetNoWait(), send, prepare)
}

func (s *cloudletService) UpdateCloudlet(req *edgeproto.UpdateCloudletRequest, stream grpc.ServerStreamingServer[edgeproto.UpdateCloudletResponse]) error {
	return s.c.cloudlets.update(stream.Context(), s.c, req.GetCloudlet(), req.GetFields(), req.GetNoWait(),
		progressSender(stream, func(p *edgeproto.Progress) *edgeproto.UpdateCloudletResponse {
			return &edgeproto.UpdateCloudletResponse{Progress: p}
		}), nil)
}

func (s *cloudletService) DeleteCloudlet(req *edgeproto.DeleteCloudletRequest, stream grpc.ServerStreamingServer[edgeproto.DeleteCloudletResponse]) error {
	return s.c.cloudlets.remove(stream.Context(), s.c, req.GetKey(), req.GetCrmOverride(), req.GetNoWait(),
		progressSender(stream, func(p *edgeproto.Progress) *edgeproto.DeleteCloudletResponse {
			return &edgeproto.DeleteCloudletResponse{Progress: p}
		}))
}

func (s *cloudletService) ShowCloudlets(req *edgeproto.ShowCloudletsRequest, stream grpc.ServerStreamingServer[edgeproto.ShowCloudletsResponse]) error {
	return showObjects(stream.Context(), s.c, s.c.cloudlets.kind, req.GetFilter(), func(o *edgeproto.Cloudlet) error {
		return stream.Send(&edgeproto.ShowCloudletsResponse{Cloudlet: o})
	})
}

func (s *cloudletService) ShowCloudletInfos(req *edgeproto.ShowCloudletInfosRequest, stream grpc.ServerStreamingServer[edgeproto.ShowCloudletInfosResponse]) error {
	return showInfos(stream.Context(), s.c, s.c.cloudlets, req.GetFilter(), func(o *edgeproto.CloudletInfo) error {
		return stream.Send(&edgeproto.ShowCloudletInfosResponse{CloudletInfo: o})
	})
}

func (s *cloudletService) WatchCloudletInfos(req *edgeproto.WatchCloudletInfosRequest, stream grpc.ServerStreamingServer[edgeproto.WatchCloudletInfosResponse]) error {
	return watchInfos(stream.Context(), s.c.cloudlets, req.GetFilter(), func(t edgeproto.EventType, o *edgeproto.CloudletInfo) error {
		return stream.Send(&edgeproto.WatchCloudletInfosResponse{Type: t, CloudletInfo: o})
	})
}

func (s *cloudletService) RotateCloudletAccessKey(ctx context.Context, req *edgeproto.RotateCloudletAccessKeyRequest) (*edgeproto.RotateCloudletAccessKeyResponse, error) {
	if req.GetKey() == nil {
		return nil, invalidf("Cloudlet: key is missing")
	}
	key, err := s.c.RotateAccessKey(ctx, req.GetKey())
	if err != nil {
		return nil, err
	}
	return &edgeproto.RotateCloudletAccessKeyResponse{CrmAccessKey: key}, nil
}
