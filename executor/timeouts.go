package executor

import (
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"google.golang.org/protobuf/types/known/durationpb"
)

// Default timeouts, used when Settings leave the matching duration unset or
// zero (or negative).
const (
	DefaultCreateCloudletTimeout    = 30 * time.Minute
	DefaultUpdateCloudletTimeout    = 20 * time.Minute
	DefaultCreateClusterInstTimeout = 30 * time.Minute
	DefaultUpdateClusterInstTimeout = 20 * time.Minute
	DefaultDeleteClusterInstTimeout = 20 * time.Minute
	DefaultCreateAppInstTimeout     = 30 * time.Minute
	DefaultUpdateAppInstTimeout     = 20 * time.Minute
	DefaultDeleteAppInstTimeout     = 20 * time.Minute
	// DefaultReportTimeout bounds the final report of an operation that
	// ended because the engine's context ended (the report itself must
	// not depend on that context).
	DefaultReportTimeout = 10 * time.Second
)

// Timeouts are the time limits of each operation, resolved from Settings.
type Timeouts struct {
	CreateCloudlet, UpdateCloudlet, DeleteCloudlet          time.Duration
	CreateClusterInst, UpdateClusterInst, DeleteClusterInst time.Duration
	CreateAppInst, UpdateAppInst, DeleteAppInst             time.Duration
	TrustPolicy                                             time.Duration
}

// TimeoutsFrom resolves the operation timeouts from s (nil reads as empty):
//
//	operation                  setting                        default
//	create cloudlet            create_cloudlet_timeout        30m
//	update cloudlet            update_cloudlet_timeout        20m
//	delete cloudlet            update_cloudlet_timeout        20m
//	create/update/delete
//	  cluster                  *_cluster_inst_timeout         30m/20m/20m
//	create/update/delete
//	  app instance             *_app_inst_timeout             30m/20m/20m
//	trust policy, exception    update_cloudlet_timeout        20m
//
// Settings have no delete_cloudlet or trust-policy timeout; the cloudlet
// update one is used for both.
func TimeoutsFrom(s *edgeproto.Settings) Timeouts {
	return Timeouts{
		CreateCloudlet:    dur(s.GetCreateCloudletTimeout(), DefaultCreateCloudletTimeout),
		UpdateCloudlet:    dur(s.GetUpdateCloudletTimeout(), DefaultUpdateCloudletTimeout),
		DeleteCloudlet:    dur(s.GetUpdateCloudletTimeout(), DefaultUpdateCloudletTimeout),
		CreateClusterInst: dur(s.GetCreateClusterInstTimeout(), DefaultCreateClusterInstTimeout),
		UpdateClusterInst: dur(s.GetUpdateClusterInstTimeout(), DefaultUpdateClusterInstTimeout),
		DeleteClusterInst: dur(s.GetDeleteClusterInstTimeout(), DefaultDeleteClusterInstTimeout),
		CreateAppInst:     dur(s.GetCreateAppInstTimeout(), DefaultCreateAppInstTimeout),
		UpdateAppInst:     dur(s.GetUpdateAppInstTimeout(), DefaultUpdateAppInstTimeout),
		DeleteAppInst:     dur(s.GetDeleteAppInstTimeout(), DefaultDeleteAppInstTimeout),
		TrustPolicy:       dur(s.GetUpdateCloudletTimeout(), DefaultUpdateCloudletTimeout),
	}
}

func dur(d *durationpb.Duration, def time.Duration) time.Duration {
	if d == nil {
		return def
	}
	if v := d.AsDuration(); v > 0 {
		return v
	}
	return def
}
