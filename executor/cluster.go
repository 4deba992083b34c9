package executor

import (
	"context"
	"fmt"

	"github.com/edgekit/edgekit/edgeproto"
)

var clusterSpec = &infoSpec{
	kind:       "ClusterInst",
	key:        edgeproto.ClusterInstInfoFieldKey,
	request:    edgeproto.ClusterInstInfoFieldRequestId,
	state:      edgeproto.ClusterInstInfoFieldState,
	errors:     edgeproto.ClusterInstInfoFieldErrors,
	status:     edgeproto.ClusterInstInfoFieldStatus,
	taskNumber: edgeproto.ClusterInstInfoFieldStatusTaskNumber,
	taskName:   edgeproto.ClusterInstInfoFieldStatusTaskName,
	stepName:   edgeproto.ClusterInstInfoFieldStatusStepName,
	msgCount:   edgeproto.ClusterInstInfoFieldStatusMsgCount,
	msgs:       edgeproto.ClusterInstInfoFieldStatusMsgs,
}

var clusterInfo = &trackedInfo[*edgeproto.ClusterInstInfo]{
	spec:      clusterSpec,
	setState:  func(i *edgeproto.ClusterInstInfo, s edgeproto.TrackedState) { i.State = s },
	setErrors: func(i *edgeproto.ClusterInstInfo, errs []string) { i.Errors = errs },
	getErrors: (*edgeproto.ClusterInstInfo).GetErrors,
}

func clusterStatus(i *edgeproto.ClusterInstInfo) *edgeproto.StatusInfo {
	if i.Status == nil {
		i.Status = &edgeproto.StatusInfo{}
	}
	return i.Status
}

// SubmitClusterInst queues the change ci asks for by its state:
// CREATE_REQUESTED, UPDATE_REQUESTED or DELETE_REQUESTED (any other state
// is ErrNoChange). The engine works on a clone of ci.
//
// Reports (ClusterInstInfo): CREATING then READY, or CREATE_ERROR after
// DeleteCluster undid the partial create; UPDATING then READY or
// UPDATE_ERROR; DELETING then DELETE_DONE or DELETE_ERROR. Success reports
// carry the resources the platform recorded in the ClusterInst.
//
// Every operation looks up the cluster's Cloudlet (Config.Objects). A
// create or update fails on any lookup error (CREATE_ERROR/UPDATE_ERROR,
// the platform is not called). A delete whose cloudlet is not found
// proceeds with a cloudlet carrying the key alone (the platform deletes by
// key); when the lookup fails otherwise the delete reports DELETE_ERROR
// and does nothing.
func (e *Engine) SubmitClusterInst(ci *edgeproto.ClusterInst) (*Handle, error) {
	return e.submitWith(nil, ci)
}

func (e *Engine) clusterRequest(ci *edgeproto.ClusterInst) (request, error) {
	if ci == nil {
		return request{}, fmt.Errorf("%w: nil ClusterInst", ErrBadObject)
	}
	if !edgeproto.IsRequestedState(ci.GetState()) {
		return request{}, fmt.Errorf("ClusterInst %s in state %s: %w", KeyString(ci), ci.GetState(), ErrNoChange)
	}
	if err := validateRequest(ci, ci.GetState()); err != nil {
		return request{}, err
	}
	ci = ci.Clone()
	key := KeyString(ci)
	return request{clusterSpec.kind, key, func(ctx context.Context) error { return e.runClusterInst(ctx, key, ci, false) }, ci.CloudletKey}, nil
}

// runClusterInst runs what ci's state asks for or, with undo, removes what a
// failed create left (see undoSpec).
func (e *Engine) runClusterInst(ctx context.Context, key string, ci *edgeproto.ClusterInst, undo bool) error {
	r := newReporter(e.clusterInfos, clusterSpec, &edgeproto.ClusterInstInfo{Key: ci.Key.Clone(), RequestId: ci.RequestId}, clusterStatus)
	to := e.timeouts()
	var cloudlet *edgeproto.Cloudlet
	lookupCloudlet := func(forDelete bool) func(ctx context.Context) error {
		var stub func() *edgeproto.Cloudlet
		if forDelete {
			stub = func() *edgeproto.Cloudlet { return &edgeproto.Cloudlet{Key: ci.CloudletKey.Clone()} }
		}
		return func(ctx context.Context) (err error) {
			cloudlet, err = dependency(ctx, e.cfg.Objects.Cloudlets, "cloudlet of cluster", ci.CloudletKey, stub)
			return err
		}
	}
	withResources := func(i *edgeproto.ClusterInstInfo) []string {
		i.Resources = ci.Resources.Clone()
		return []string{edgeproto.ClusterInstInfoFieldResources}
	}
	p := e.cfg.Platform
	switch {
	case undo:
		return runTracked(ctx, e, r, clusterInfo, key, undoSpec(to.DeleteClusterInst),
			undoFuncs(clusterInfo, ci.Errors, lookupCloudlet(true),
				func(ctx context.Context) error { return p.DeleteCluster(ctx, cloudlet, ci, e.res, r) }))
	case ci.State == edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED:
		return runTracked(ctx, e, r, clusterInfo, key, opSpec{
			name: "create", task: "Creating ClusterInst",
			running: edgeproto.TrackedState_TRACKED_STATE_CREATING,
			success: edgeproto.TrackedState_TRACKED_STATE_READY,
			failure: edgeproto.TrackedState_TRACKED_STATE_CREATE_ERROR,
			timeout: to.CreateClusterInst, undoTime: to.DeleteClusterInst,
		}, opFuncs[*edgeproto.ClusterInstInfo]{
			prepare: lookupCloudlet(false),
			do:      func(ctx context.Context) error { return p.CreateCluster(ctx, cloudlet, ci, e.res, r) },
			undo:    func(ctx context.Context) error { return p.DeleteCluster(ctx, cloudlet, ci, e.res, r) },
			succeed: withResources,
		})
	case ci.State == edgeproto.TrackedState_TRACKED_STATE_UPDATE_REQUESTED:
		return runTracked(ctx, e, r, clusterInfo, key, opSpec{
			name: "update", task: "Updating ClusterInst",
			running: edgeproto.TrackedState_TRACKED_STATE_UPDATING,
			success: edgeproto.TrackedState_TRACKED_STATE_READY,
			failure: edgeproto.TrackedState_TRACKED_STATE_UPDATE_ERROR,
			timeout: to.UpdateClusterInst,
		}, opFuncs[*edgeproto.ClusterInstInfo]{
			prepare: lookupCloudlet(false),
			do:      func(ctx context.Context) error { return p.UpdateCluster(ctx, cloudlet, ci, e.res, r) },
			succeed: withResources,
		})
	default: // DELETE_REQUESTED
		return runTracked(ctx, e, r, clusterInfo, key, opSpec{
			name: "delete", task: "Deleting ClusterInst",
			running: edgeproto.TrackedState_TRACKED_STATE_DELETING,
			success: edgeproto.TrackedState_TRACKED_STATE_DELETE_DONE,
			failure: edgeproto.TrackedState_TRACKED_STATE_DELETE_ERROR,
			timeout: to.DeleteClusterInst,
		}, opFuncs[*edgeproto.ClusterInstInfo]{
			prepare: lookupCloudlet(true),
			do:      func(ctx context.Context) error { return p.DeleteCluster(ctx, cloudlet, ci, e.res, r) },
		})
	}
}
