package controller

import (
	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/fieldmap"
	"github.com/edgekit/edgekit/internal/store"
	"google.golang.org/protobuf/proto"
)

func newCloudlets(s *store.Store, r rules[*edgeproto.Cloudlet]) *tracked[*edgeproto.Cloudlet, *edgeproto.CloudletInfo] {
	return &tracked[*edgeproto.Cloudlet, *edgeproto.CloudletInfo]{
		kind:        newKind(s, cloudletOwner, checkCloudlet),
		rules:       r,
		info:        store.NewKind[*edgeproto.CloudletInfo](s),
		state:       (*edgeproto.Cloudlet).GetState,
		setState:    func(c *edgeproto.Cloudlet, s edgeproto.TrackedState) { c.State = s },
		setErrors:   func(c *edgeproto.Cloudlet, e []string) { c.Errors = e },
		override:    (*edgeproto.Cloudlet).GetCrmOverride,
		setOverride: func(c *edgeproto.Cloudlet, o edgeproto.CRMOverride) { c.CrmOverride = o },
		cloudletOf:  (*edgeproto.Cloudlet).GetKey,
		request:     (*edgeproto.Cloudlet).GetRequestId,
		setRequest:  func(c *edgeproto.Cloudlet, id int64) { c.RequestId = id },
		infoRequest: (*edgeproto.CloudletInfo).GetRequestId,
		requestFlag: edgeproto.CloudletInfoFieldRequestId,
		infoOwner:   func(i *edgeproto.CloudletInfo) string { return i.GetKey().GetOrganization() },
		stateFlag:   edgeproto.CloudletInfoFieldState,
		infoState:   cloudletInfoState,
		status:      (*edgeproto.CloudletInfo).GetStatus,
		errors:      (*edgeproto.CloudletInfo).GetErrors,
		reset: func(i *edgeproto.CloudletInfo) {
			i.Status = nil
			i.Errors = nil
		},
		mirror: func(c *edgeproto.Cloudlet, i *edgeproto.CloudletInfo, fm *fieldmap.FieldMap) bool {
			changed := false
			if fm.Has(edgeproto.CloudletInfoFieldTrustPolicyState) && c.TrustPolicyState != i.TrustPolicyState &&
				i.TrustPolicyState != edgeproto.TrackedState_TRACKED_STATE_UNSPECIFIED {
				c.TrustPolicyState = i.TrustPolicyState
				changed = true
			}
			if fm.Has(edgeproto.CloudletInfoFieldMaintenanceState) && c.MaintenanceState != i.MaintenanceState &&
				i.MaintenanceState != edgeproto.MaintenanceState_MAINTENANCE_STATE_UNSPECIFIED {
				c.MaintenanceState = i.MaintenanceState
				changed = true
			}
			return changed
		},
	}
}

// cloudletInfoState maps the CloudletState a cloudlet's resource manager
// reports onto the cloudlet's TrackedState, given the change in progress:
// INIT is the running state of a create or update, READY its success,
// ERRORS the failure of whatever change runs, NOT_PRESENT the success of a
// delete. Other reports (OFFLINE, a refresh of a READY cloudlet) change the
// CloudletInfo only.
func cloudletInfoState(c *edgeproto.Cloudlet, i *edgeproto.CloudletInfo) edgeproto.TrackedState {
	var running, success, failure edgeproto.TrackedState
	switch c.GetState() {
	case edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED, edgeproto.TrackedState_TRACKED_STATE_CREATING:
		running, success, failure = edgeproto.TrackedState_TRACKED_STATE_CREATING,
			edgeproto.TrackedState_TRACKED_STATE_READY, edgeproto.TrackedState_TRACKED_STATE_CREATE_ERROR
	case edgeproto.TrackedState_TRACKED_STATE_UPDATE_REQUESTED, edgeproto.TrackedState_TRACKED_STATE_UPDATING:
		running, success, failure = edgeproto.TrackedState_TRACKED_STATE_UPDATING,
			edgeproto.TrackedState_TRACKED_STATE_READY, edgeproto.TrackedState_TRACKED_STATE_UPDATE_ERROR
	case edgeproto.TrackedState_TRACKED_STATE_DELETE_REQUESTED, edgeproto.TrackedState_TRACKED_STATE_DELETING:
		running, success, failure = edgeproto.TrackedState_TRACKED_STATE_DELETING,
			edgeproto.TrackedState_TRACKED_STATE_DELETE_DONE, edgeproto.TrackedState_TRACKED_STATE_DELETE_ERROR
	default:
		return edgeproto.TrackedState_TRACKED_STATE_UNSPECIFIED
	}
	deleting := running == edgeproto.TrackedState_TRACKED_STATE_DELETING
	switch i.GetState() {
	case edgeproto.CloudletState_CLOUDLET_STATE_INIT:
		if !deleting {
			return running
		}
	case edgeproto.CloudletState_CLOUDLET_STATE_READY:
		if !deleting {
			return success
		}
	case edgeproto.CloudletState_CLOUDLET_STATE_NOT_PRESENT:
		if deleting {
			return success
		}
	case edgeproto.CloudletState_CLOUDLET_STATE_ERRORS:
		return failure
	}
	return edgeproto.TrackedState_TRACKED_STATE_UNSPECIFIED
}

func newClusters(s *store.Store, r rules[*edgeproto.ClusterInst]) *tracked[*edgeproto.ClusterInst, *edgeproto.ClusterInstInfo] {
	return &tracked[*edgeproto.ClusterInst, *edgeproto.ClusterInstInfo]{
		kind:        newKind(s, clusterOwner, checkCluster),
		rules:       r,
		info:        store.NewKind[*edgeproto.ClusterInstInfo](s),
		state:       (*edgeproto.ClusterInst).GetState,
		setState:    func(c *edgeproto.ClusterInst, s edgeproto.TrackedState) { c.State = s },
		setErrors:   func(c *edgeproto.ClusterInst, e []string) { c.Errors = e },
		override:    (*edgeproto.ClusterInst).GetCrmOverride,
		setOverride: func(c *edgeproto.ClusterInst, o edgeproto.CRMOverride) { c.CrmOverride = o },
		cloudletOf:  (*edgeproto.ClusterInst).GetCloudletKey,
		request:     (*edgeproto.ClusterInst).GetRequestId,
		setRequest:  func(c *edgeproto.ClusterInst, id int64) { c.RequestId = id },
		infoRequest: (*edgeproto.ClusterInstInfo).GetRequestId,
		requestFlag: edgeproto.ClusterInstInfoFieldRequestId,
		infoOwner:   func(i *edgeproto.ClusterInstInfo) string { return i.GetKey().GetOrganization() },
		stateFlag:   edgeproto.ClusterInstInfoFieldState,
		infoState: func(_ *edgeproto.ClusterInst, i *edgeproto.ClusterInstInfo) edgeproto.TrackedState {
			return i.GetState()
		},
		status: (*edgeproto.ClusterInstInfo).GetStatus,
		errors: (*edgeproto.ClusterInstInfo).GetErrors,
		reset: func(i *edgeproto.ClusterInstInfo) {
			i.Status = nil
			i.Errors = nil
		},
		mirror: func(c *edgeproto.ClusterInst, i *edgeproto.ClusterInstInfo, fm *fieldmap.FieldMap) bool {
			if !fm.HasOrHasChild(edgeproto.ClusterInstInfoFieldResources) || proto.Equal(c.Resources, i.Resources) {
				return false
			}
			c.Resources = i.Resources.Clone()
			return true
		},
	}
}

func newAppInsts(s *store.Store, r rules[*edgeproto.AppInst]) *tracked[*edgeproto.AppInst, *edgeproto.AppInstInfo] {
	return &tracked[*edgeproto.AppInst, *edgeproto.AppInstInfo]{
		kind:        newKind(s, appInstOwner, checkAppInst),
		rules:       r,
		info:        store.NewKind[*edgeproto.AppInstInfo](s),
		state:       (*edgeproto.AppInst).GetState,
		setState:    func(a *edgeproto.AppInst, s edgeproto.TrackedState) { a.State = s },
		setErrors:   func(a *edgeproto.AppInst, e []string) { a.Errors = e },
		override:    (*edgeproto.AppInst).GetCrmOverride,
		setOverride: func(a *edgeproto.AppInst, o edgeproto.CRMOverride) { a.CrmOverride = o },
		cloudletOf:  (*edgeproto.AppInst).GetCloudletKey,
		request:     (*edgeproto.AppInst).GetRequestId,
		setRequest:  func(a *edgeproto.AppInst, id int64) { a.RequestId = id },
		infoRequest: (*edgeproto.AppInstInfo).GetRequestId,
		requestFlag: edgeproto.AppInstInfoFieldRequestId,
		infoOwner:   func(i *edgeproto.AppInstInfo) string { return i.GetKey().GetOrganization() },
		stateFlag:   edgeproto.AppInstInfoFieldState,
		infoState:   func(_ *edgeproto.AppInst, i *edgeproto.AppInstInfo) edgeproto.TrackedState { return i.GetState() },
		status:      (*edgeproto.AppInstInfo).GetStatus,
		errors:      (*edgeproto.AppInstInfo).GetErrors,
		reset: func(i *edgeproto.AppInstInfo) {
			i.Status = nil
			i.Errors = nil
		},
		mirror: func(a *edgeproto.AppInst, i *edgeproto.AppInstInfo, fm *fieldmap.FieldMap) bool {
			changed := false
			if fm.HasOrHasChild(edgeproto.AppInstInfoFieldRuntimeInfo) && !proto.Equal(a.RuntimeInfo, i.RuntimeInfo) {
				a.RuntimeInfo = i.RuntimeInfo.Clone()
				changed = true
			}
			if fm.Has(edgeproto.AppInstInfoFieldUri) && a.Uri != i.Uri {
				a.Uri = i.Uri
				changed = true
			}
			if fm.Has(edgeproto.AppInstInfoFieldPowerState) && a.PowerState != i.PowerState &&
				i.PowerState != edgeproto.PowerState_POWER_STATE_UNSPECIFIED {
				a.PowerState = i.PowerState
				changed = true
			}
			return changed
		},
	}
}
