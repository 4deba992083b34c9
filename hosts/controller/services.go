package controller

import (
	"context"

	"github.com/edgekit/edgekit/edgeproto"
	rmv1 "github.com/edgekit/edgekit/proto/edgekit/rm/v1"
	"google.golang.org/grpc"
)

// register adds the user API services to s.
func (c *Controller) register(s grpc.ServiceRegistrar) {
	edgeproto.RegisterCloudletServiceServer(s, &cloudletService{c: c})
	edgeproto.RegisterClusterInstServiceServer(s, &clusterInstService{c: c})
	edgeproto.RegisterAppInstServiceServer(s, &appInstService{c: c})
	edgeproto.RegisterFlavorServiceServer(s, &flavorService{c: c})
	edgeproto.RegisterAppServiceServer(s, &appService{c: c})
	edgeproto.RegisterTrustPolicyServiceServer(s, &trustPolicyService{c: c})
	edgeproto.RegisterTrustPolicyExceptionServiceServer(s, &trustPolicyExceptionService{c: c})
	edgeproto.RegisterCloudletPoolServiceServer(s, &cloudletPoolService{c: c})
	edgeproto.RegisterSettingsServiceServer(s, &settingsService{c: c})
	edgeproto.RegisterAlertServiceServer(s, &alertService{c: c})
	rmv1.RegisterReportServiceServer(s, &reportService{c: c})
}

// progressSender adapts a Progress stream of one response type.
func progressSender[R any](stream grpc.ServerStreamingServer[R], wrap func(*edgeproto.Progress) *R) func(*edgeproto.Progress) error {
	return func(p *edgeproto.Progress) error { return stream.Send(wrap(p)) }
}

type clusterInstService struct {
	edgeproto.UnimplementedClusterInstServiceServer
	c *Controller
}

func (s *clusterInstService) CreateClusterInst(req *edgeproto.CreateClusterInstRequest, stream grpc.ServerStreamingServer[edgeproto.CreateClusterInstResponse]) error {
	return s.c.clusters.create(stream.Context(), s.c, req.GetClusterInst(), req.GetNoWait(),
		progressSender(stream, func(p *edgeproto.Progress) *edgeproto.CreateClusterInstResponse {
			return &edgeproto.CreateClusterInstResponse{Progress: p}
		}), nil)
}

func (s *clusterInstService) UpdateClusterInst(req *edgeproto.UpdateClusterInstRequest, stream grpc.ServerStreamingServer[edgeproto.UpdateClusterInstResponse]) error {
	return s.c.clusters.update(stream.Context(), s.c, req.GetClusterInst(), req.GetFields(), req.GetNoWait(),
		progressSender(stream, func(p *edgeproto.Progress) *edgeproto.UpdateClusterInstResponse {
			return &edgeproto.UpdateClusterInstResponse{Progress: p}
		}), nil)
}

func (s *clusterInstService) DeleteClusterInst(req *edgeproto.DeleteClusterInstRequest, stream grpc.ServerStreamingServer[edgeproto.DeleteClusterInstResponse]) error {
	return s.c.clusters.remove(stream.Context(), s.c, req.GetKey(), req.GetCrmOverride(), req.GetNoWait(),
		progressSender(stream, func(p *edgeproto.Progress) *edgeproto.DeleteClusterInstResponse {
			return &edgeproto.DeleteClusterInstResponse{Progress: p}
		}))
}

func (s *clusterInstService) ShowClusterInsts(req *edgeproto.ShowClusterInstsRequest, stream grpc.ServerStreamingServer[edgeproto.ShowClusterInstsResponse]) error {
	return showObjects(stream.Context(), s.c, s.c.clusters.kind, req.GetFilter(), func(o *edgeproto.ClusterInst) error {
		return stream.Send(&edgeproto.ShowClusterInstsResponse{ClusterInst: o})
	})
}

func (s *clusterInstService) ShowClusterInstInfos(req *edgeproto.ShowClusterInstInfosRequest, stream grpc.ServerStreamingServer[edgeproto.ShowClusterInstInfosResponse]) error {
	return showInfos(stream.Context(), s.c, s.c.clusters, req.GetFilter(), func(o *edgeproto.ClusterInstInfo) error {
		return stream.Send(&edgeproto.ShowClusterInstInfosResponse{ClusterInstInfo: o})
	})
}

func (s *clusterInstService) WatchClusterInstInfos(req *edgeproto.WatchClusterInstInfosRequest, stream grpc.ServerStreamingServer[edgeproto.WatchClusterInstInfosResponse]) error {
	return watchInfos(stream.Context(), s.c.clusters, req.GetFilter(), func(t edgeproto.EventType, o *edgeproto.ClusterInstInfo) error {
		return stream.Send(&edgeproto.WatchClusterInstInfosResponse{Type: t, ClusterInstInfo: o})
	})
}

type appInstService struct {
	edgeproto.UnimplementedAppInstServiceServer
	c *Controller
}

func (s *appInstService) CreateAppInst(req *edgeproto.CreateAppInstRequest, stream grpc.ServerStreamingServer[edgeproto.CreateAppInstResponse]) error {
	return s.c.appInsts.create(stream.Context(), s.c, req.GetAppInst(), req.GetNoWait(),
		progressSender(stream, func(p *edgeproto.Progress) *edgeproto.CreateAppInstResponse {
			return &edgeproto.CreateAppInstResponse{Progress: p}
		}), nil)
}

func (s *appInstService) UpdateAppInst(req *edgeproto.UpdateAppInstRequest, stream grpc.ServerStreamingServer[edgeproto.UpdateAppInstResponse]) error {
	return s.c.appInsts.update(stream.Context(), s.c, req.GetAppInst(), req.GetFields(), req.GetNoWait(),
		progressSender(stream, func(p *edgeproto.Progress) *edgeproto.UpdateAppInstResponse {
			return &edgeproto.UpdateAppInstResponse{Progress: p}
		}), nil)
}

func (s *appInstService) DeleteAppInst(req *edgeproto.DeleteAppInstRequest, stream grpc.ServerStreamingServer[edgeproto.DeleteAppInstResponse]) error {
	return s.c.appInsts.remove(stream.Context(), s.c, req.GetKey(), req.GetCrmOverride(), req.GetNoWait(),
		progressSender(stream, func(p *edgeproto.Progress) *edgeproto.DeleteAppInstResponse {
			return &edgeproto.DeleteAppInstResponse{Progress: p}
		}))
}

func (s *appInstService) ShowAppInsts(req *edgeproto.ShowAppInstsRequest, stream grpc.ServerStreamingServer[edgeproto.ShowAppInstsResponse]) error {
	return showObjects(stream.Context(), s.c, s.c.appInsts.kind, req.GetFilter(), func(o *edgeproto.AppInst) error {
		return stream.Send(&edgeproto.ShowAppInstsResponse{AppInst: o})
	})
}

func (s *appInstService) ShowAppInstInfos(req *edgeproto.ShowAppInstInfosRequest, stream grpc.ServerStreamingServer[edgeproto.ShowAppInstInfosResponse]) error {
	return showInfos(stream.Context(), s.c, s.c.appInsts, req.GetFilter(), func(o *edgeproto.AppInstInfo) error {
		return stream.Send(&edgeproto.ShowAppInstInfosResponse{AppInstInfo: o})
	})
}

func (s *appInstService) WatchAppInstInfos(req *edgeproto.WatchAppInstInfosRequest, stream grpc.ServerStreamingServer[edgeproto.WatchAppInstInfosResponse]) error {
	return watchInfos(stream.Context(), s.c.appInsts, req.GetFilter(), func(t edgeproto.EventType, o *edgeproto.AppInstInfo) error {
		return stream.Send(&edgeproto.WatchAppInstInfosResponse{Type: t, AppInstInfo: o})
	})
}

type flavorService struct {
	edgeproto.UnimplementedFlavorServiceServer
	c *Controller
}

func (s *flavorService) CreateFlavor(ctx context.Context, req *edgeproto.CreateFlavorRequest) (*edgeproto.CreateFlavorResponse, error) {
	obj, _, err := createObject(ctx, s.c, s.c.flavors, s.c.flavorRules(), req.GetFlavor(), nil)
	if err != nil {
		return nil, err
	}
	return &edgeproto.CreateFlavorResponse{Flavor: redacted(obj)}, nil
}

func (s *flavorService) UpdateFlavor(ctx context.Context, req *edgeproto.UpdateFlavorRequest) (*edgeproto.UpdateFlavorResponse, error) {
	obj, _, _, err := updateObject(ctx, s.c, s.c.flavors, s.c.flavorRules(), req.GetFlavor(), req.GetFields(), nil)
	if err != nil {
		return nil, err
	}
	return &edgeproto.UpdateFlavorResponse{Flavor: redacted(obj)}, nil
}

func (s *flavorService) DeleteFlavor(ctx context.Context, req *edgeproto.DeleteFlavorRequest) (*edgeproto.DeleteFlavorResponse, error) {
	if _, _, err := deleteObject(ctx, s.c, s.c.flavors, s.c.flavorRules(), req.GetKey(), nil); err != nil {
		return nil, err
	}
	return &edgeproto.DeleteFlavorResponse{}, nil
}

func (s *flavorService) ShowFlavors(req *edgeproto.ShowFlavorsRequest, stream grpc.ServerStreamingServer[edgeproto.ShowFlavorsResponse]) error {
	return showObjects(stream.Context(), s.c, s.c.flavors, req.GetFilter(), func(o *edgeproto.Flavor) error {
		return stream.Send(&edgeproto.ShowFlavorsResponse{Flavor: o})
	})
}

type appService struct {
	edgeproto.UnimplementedAppServiceServer
	c *Controller
}

func (s *appService) CreateApp(ctx context.Context, req *edgeproto.CreateAppRequest) (*edgeproto.CreateAppResponse, error) {
	obj, _, err := createObject(ctx, s.c, s.c.apps, s.c.appRules(), req.GetApp(), nil)
	if err != nil {
		return nil, err
	}
	return &edgeproto.CreateAppResponse{App: redacted(obj)}, nil
}

func (s *appService) UpdateApp(ctx context.Context, req *edgeproto.UpdateAppRequest) (*edgeproto.UpdateAppResponse, error) {
	obj, _, _, err := updateObject(ctx, s.c, s.c.apps, s.c.appRules(), req.GetApp(), req.GetFields(), nil)
	if err != nil {
		return nil, err
	}
	return &edgeproto.UpdateAppResponse{App: redacted(obj)}, nil
}

func (s *appService) DeleteApp(ctx context.Context, req *edgeproto.DeleteAppRequest) (*edgeproto.DeleteAppResponse, error) {
	if _, _, err := deleteObject(ctx, s.c, s.c.apps, s.c.appRules(), req.GetKey(), nil); err != nil {
		return nil, err
	}
	return &edgeproto.DeleteAppResponse{}, nil
}

func (s *appService) ShowApps(req *edgeproto.ShowAppsRequest, stream grpc.ServerStreamingServer[edgeproto.ShowAppsResponse]) error {
	return showObjects(stream.Context(), s.c, s.c.apps, req.GetFilter(), func(o *edgeproto.App) error {
		return stream.Send(&edgeproto.ShowAppsResponse{App: o})
	})
}

type trustPolicyService struct {
	edgeproto.UnimplementedTrustPolicyServiceServer
	c *Controller
}

func (s *trustPolicyService) CreateTrustPolicy(ctx context.Context, req *edgeproto.CreateTrustPolicyRequest) (*edgeproto.CreateTrustPolicyResponse, error) {
	obj, _, err := createObject(ctx, s.c, s.c.trustPolicies, s.c.trustPolicyRules(), req.GetTrustPolicy(), nil)
	if err != nil {
		return nil, err
	}
	return &edgeproto.CreateTrustPolicyResponse{TrustPolicy: redacted(obj)}, nil
}

func (s *trustPolicyService) UpdateTrustPolicy(ctx context.Context, req *edgeproto.UpdateTrustPolicyRequest) (*edgeproto.UpdateTrustPolicyResponse, error) {
	obj, _, _, err := updateObject(ctx, s.c, s.c.trustPolicies, s.c.trustPolicyRules(), req.GetTrustPolicy(), req.GetFields(), nil)
	if err != nil {
		return nil, err
	}
	return &edgeproto.UpdateTrustPolicyResponse{TrustPolicy: redacted(obj)}, nil
}

func (s *trustPolicyService) DeleteTrustPolicy(ctx context.Context, req *edgeproto.DeleteTrustPolicyRequest) (*edgeproto.DeleteTrustPolicyResponse, error) {
	if _, _, err := deleteObject(ctx, s.c, s.c.trustPolicies, s.c.trustPolicyRules(), req.GetKey(), nil); err != nil {
		return nil, err
	}
	return &edgeproto.DeleteTrustPolicyResponse{}, nil
}

func (s *trustPolicyService) ShowTrustPolicies(req *edgeproto.ShowTrustPoliciesRequest, stream grpc.ServerStreamingServer[edgeproto.ShowTrustPoliciesResponse]) error {
	return showObjects(stream.Context(), s.c, s.c.trustPolicies, req.GetFilter(), func(o *edgeproto.TrustPolicy) error {
		return stream.Send(&edgeproto.ShowTrustPoliciesResponse{TrustPolicy: o})
	})
}

type trustPolicyExceptionService struct {
	edgeproto.UnimplementedTrustPolicyExceptionServiceServer
	c *Controller
}

func (s *trustPolicyExceptionService) CreateTrustPolicyException(ctx context.Context, req *edgeproto.CreateTrustPolicyExceptionRequest) (*edgeproto.CreateTrustPolicyExceptionResponse, error) {
	obj, _, err := createObject(ctx, s.c, s.c.tpes, s.c.tpeRules(), req.GetTrustPolicyException(), nil)
	if err != nil {
		return nil, err
	}
	return &edgeproto.CreateTrustPolicyExceptionResponse{TrustPolicyException: redacted(obj)}, nil
}

func (s *trustPolicyExceptionService) UpdateTrustPolicyException(ctx context.Context, req *edgeproto.UpdateTrustPolicyExceptionRequest) (*edgeproto.UpdateTrustPolicyExceptionResponse, error) {
	// Approving or rejecting an exception is an admin's decision.
	for _, f := range req.GetFields() {
		if f == edgeproto.TrustPolicyExceptionFieldState {
			if err := requireAdmin(ctx); err != nil {
				return nil, err
			}
		}
	}
	obj, _, _, err := updateObject(ctx, s.c, s.c.tpes, s.c.tpeRules(), req.GetTrustPolicyException(), req.GetFields(), nil)
	if err != nil {
		return nil, err
	}
	return &edgeproto.UpdateTrustPolicyExceptionResponse{TrustPolicyException: redacted(obj)}, nil
}

func (s *trustPolicyExceptionService) DeleteTrustPolicyException(ctx context.Context, req *edgeproto.DeleteTrustPolicyExceptionRequest) (*edgeproto.DeleteTrustPolicyExceptionResponse, error) {
	// The exception leaves the store once removed from every instance
	// that holds it (see removeTPE).
	if _, _, err := deleteObject(ctx, s.c, s.c.tpes, s.c.tpeRules(), req.GetKey(), s.c.removeTPE); err != nil {
		return nil, err
	}
	return &edgeproto.DeleteTrustPolicyExceptionResponse{}, nil
}

func (s *trustPolicyExceptionService) ShowTrustPolicyExceptions(req *edgeproto.ShowTrustPolicyExceptionsRequest, stream grpc.ServerStreamingServer[edgeproto.ShowTrustPolicyExceptionsResponse]) error {
	return showObjects(stream.Context(), s.c, s.c.tpes, req.GetFilter(), func(o *edgeproto.TrustPolicyException) error {
		return stream.Send(&edgeproto.ShowTrustPolicyExceptionsResponse{TrustPolicyException: o})
	})
}
