package executor

import (
	"context"

	"github.com/edgekit/edgekit/edgeproto"
)

//go:generate go run go.uber.org/mock/mockgen@v0.6.0 -destination=mocks/platform.go -package=mocks github.com/edgekit/edgekit/executor Platform,CloudletPlatform,ClusterPlatform,AppPlatform,TrustPolicyPlatform,FeatureReporter,Progress,InventoryPlatform

// Progress receives the steps a platform takes while it works ("Creating
// network", "Waiting for health check"); the engine turns each into a
// StatusInfo step report. Implementations must be safe to call from any
// goroutine and must not block for long.
type Progress interface {
	Step(msg string)
}

// ProgressFunc adapts a function to Progress.
type ProgressFunc func(msg string)

// Step calls f(msg).
func (f ProgressFunc) Step(msg string) { f(msg) }

// CloudletPlatform is the cloudlet role of a platform: bring the site under
// management and describe it.
type CloudletPlatform interface {
	// InitCloudlet prepares the site for the engine (idempotent: running it
	// again on an initialised site succeeds).
	InitCloudlet(ctx context.Context, cloudlet *edgeproto.Cloudlet, res Reservations, p Progress) error
	// GatherCloudletInfo fills info with what the site offers: flavors,
	// resources snapshot, node infos, properties.
	GatherCloudletInfo(ctx context.Context, cloudlet *edgeproto.Cloudlet, info *edgeproto.CloudletInfo) error
	// CleanupCloudlet releases what InitCloudlet set up; deleting an
	// absent cloudlet succeeds.
	CleanupCloudlet(ctx context.Context, cloudlet *edgeproto.Cloudlet, p Progress) error
}

// ClusterPlatform is the cluster role of a platform.
type ClusterPlatform interface {
	// CreateCluster creates the cluster, or adopts it when it already exists
	// (a re-run after a crash). On error the engine calls DeleteCluster to
	// undo what was created. The platform may record what it created in
	// cluster.Resources; the engine reports it in ClusterInstInfo.
	CreateCluster(ctx context.Context, cloudlet *edgeproto.Cloudlet, cluster *edgeproto.ClusterInst, res Reservations, p Progress) error
	// UpdateCluster changes the cluster in place to match cluster (and may
	// update cluster.Resources, as CreateCluster).
	UpdateCluster(ctx context.Context, cloudlet *edgeproto.Cloudlet, cluster *edgeproto.ClusterInst, res Reservations, p Progress) error
	// DeleteCluster removes the cluster; deleting an absent one succeeds.
	DeleteCluster(ctx context.Context, cloudlet *edgeproto.Cloudlet, cluster *edgeproto.ClusterInst, res Reservations, p Progress) error
}

// AppPlatform is the application role of a platform.
type AppPlatform interface {
	// CreateAppInst deploys app as inst in cluster, or adopts a deployment
	// that already exists, and returns its runtime info.
	CreateAppInst(ctx context.Context, cluster *edgeproto.ClusterInst, app *edgeproto.App, inst *edgeproto.AppInst, res Reservations, p Progress) (*edgeproto.AppInstRuntime, error)
	// UpdateAppInst changes a deployment in place (config, env, power state).
	UpdateAppInst(ctx context.Context, cluster *edgeproto.ClusterInst, app *edgeproto.App, inst *edgeproto.AppInst, res Reservations, p Progress) (*edgeproto.AppInstRuntime, error)
	// DeleteAppInst removes a deployment; deleting an absent one succeeds.
	DeleteAppInst(ctx context.Context, cluster *edgeproto.ClusterInst, app *edgeproto.App, inst *edgeproto.AppInst, res Reservations, p Progress) error
}

// TrustPolicyPlatform applies trust policies and their exceptions.
type TrustPolicyPlatform interface {
	// UpdateTrustPolicy applies policy to the cloudlet; a nil policy
	// removes the cloudlet's policy.
	UpdateTrustPolicy(ctx context.Context, cloudlet *edgeproto.Cloudlet, policy *edgeproto.TrustPolicy) error
	// UpdateTrustPolicyException applies exc to the instance inst, in the
	// cluster (idempotent). It concerns that instance only: another
	// instance of the App in the same cluster has its own entry, applied
	// and removed on its own.
	UpdateTrustPolicyException(ctx context.Context, cloudlet *edgeproto.Cloudlet, exc *edgeproto.TrustPolicyException, clusterKey *edgeproto.ClusterKey, inst *edgeproto.AppInstKey) error
	// DeleteTrustPolicyException removes the exception from the instance
	// inst in the cluster; removing an absent one succeeds.
	DeleteTrustPolicyException(ctx context.Context, cloudlet *edgeproto.Cloudlet, key *edgeproto.TrustPolicyExceptionKey, clusterKey *edgeproto.ClusterKey, inst *edgeproto.AppInstKey) error
}

// Features describes what a platform supports, so the engine can refuse work
// it cannot do with a clear error.
type Features struct {
	// PlatformType is the registry name of the platform ("fake", "local").
	PlatformType string
	// SupportsMultiTenantCluster, SupportsTrustPolicy... gate optional work.
	SupportsMultiTenantCluster bool
	SupportsTrustPolicy        bool
	// IsSingleKubernetesCluster is true when the cloudlet is one cluster.
	IsSingleKubernetesCluster bool
}

// FeatureReporter reports a platform's Features.
type FeatureReporter interface {
	Features() Features
}

// Platform is every role together: what a platform implementation provides
// and what the registry builds.
type Platform interface {
	FeatureReporter
	CloudletPlatform
	ClusterPlatform
	AppPlatform
	TrustPolicyPlatform
}

// FeaturesFunc adapts a function to FeatureReporter.
type FeaturesFunc func() Features

// Features calls f.
func (f FeaturesFunc) Features() Features { return f() }

var _ FeatureReporter = FeaturesFunc(nil)
