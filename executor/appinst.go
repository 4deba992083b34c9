package executor

import (
	"context"
	"fmt"

	"github.com/edgekit/edgekit/edgeproto"
)

var appInstSpec = &infoSpec{
	kind:       "AppInst",
	key:        edgeproto.AppInstInfoFieldKey,
	request:    edgeproto.AppInstInfoFieldRequestId,
	state:      edgeproto.AppInstInfoFieldState,
	errors:     edgeproto.AppInstInfoFieldErrors,
	status:     edgeproto.AppInstInfoFieldStatus,
	taskNumber: edgeproto.AppInstInfoFieldStatusTaskNumber,
	taskName:   edgeproto.AppInstInfoFieldStatusTaskName,
	stepName:   edgeproto.AppInstInfoFieldStatusStepName,
	msgCount:   edgeproto.AppInstInfoFieldStatusMsgCount,
	msgs:       edgeproto.AppInstInfoFieldStatusMsgs,
}

var appInstInfo = &trackedInfo[*edgeproto.AppInstInfo]{
	spec:      appInstSpec,
	setState:  func(i *edgeproto.AppInstInfo, s edgeproto.TrackedState) { i.State = s },
	setErrors: func(i *edgeproto.AppInstInfo, errs []string) { i.Errors = errs },
	getErrors: (*edgeproto.AppInstInfo).GetErrors,
}

func appInstStatus(i *edgeproto.AppInstInfo) *edgeproto.StatusInfo {
	if i.Status == nil {
		i.Status = &edgeproto.StatusInfo{}
	}
	return i.Status
}

// powerChange is what an update asking for a power state reports: the
// state while the platform works and the state once it is done.
type powerChange struct{ running, done edgeproto.PowerState }

var powerChanges = map[edgeproto.PowerState]powerChange{
	edgeproto.PowerState_POWER_STATE_POWER_ON_REQUESTED:  {edgeproto.PowerState_POWER_STATE_POWERING_ON, edgeproto.PowerState_POWER_STATE_POWER_ON},
	edgeproto.PowerState_POWER_STATE_POWER_OFF_REQUESTED: {edgeproto.PowerState_POWER_STATE_POWERING_OFF, edgeproto.PowerState_POWER_STATE_POWER_OFF},
	edgeproto.PowerState_POWER_STATE_REBOOT_REQUESTED:    {edgeproto.PowerState_POWER_STATE_REBOOTING, edgeproto.PowerState_POWER_STATE_POWER_ON},
}

// SubmitAppInst queues the change inst asks for by its state:
// CREATE_REQUESTED, UPDATE_REQUESTED or DELETE_REQUESTED (any other state
// is ErrNoChange). The engine works on a clone of inst.
//
// Create and update need the App and the ClusterInst (which must be READY,
// else the report is CREATE_ERROR/UPDATE_ERROR wrapping ErrClusterNotReady)
// from Config.Objects. Reports (AppInstInfo): CREATING then READY with
// power state POWER_ON and the runtime info the platform returned, or
// CREATE_ERROR after DeleteAppInst undid the partial create; UPDATING then
// READY or UPDATE_ERROR; DELETING then DELETE_DONE or DELETE_ERROR. An
// update whose power_state is POWER_ON_REQUESTED, POWER_OFF_REQUESTED or
// REBOOT_REQUESTED also reports POWERING_ON/POWERING_OFF/REBOOTING and then
// POWER_ON/POWER_OFF/POWER_ON, or POWER_STATE_ERROR.
//
// A delete does not need the ClusterInst and the App: when either is not
// found it proceeds with their keys alone; when a lookup fails otherwise
// it reports DELETE_ERROR and does nothing.
func (e *Engine) SubmitAppInst(inst *edgeproto.AppInst) (*Handle, error) {
	return e.submitWith(nil, inst)
}

func (e *Engine) appInstRequest(inst *edgeproto.AppInst) (request, error) {
	if inst == nil {
		return request{}, fmt.Errorf("%w: nil AppInst", ErrBadObject)
	}
	if !edgeproto.IsRequestedState(inst.GetState()) {
		return request{}, fmt.Errorf("AppInst %s in state %s: %w", KeyString(inst), inst.GetState(), ErrNoChange)
	}
	if err := validateRequest(inst, inst.GetState()); err != nil {
		return request{}, err
	}
	inst = inst.Clone()
	key := KeyString(inst)
	return request{appInstSpec.kind, key, func(ctx context.Context) error { return e.runAppInst(ctx, key, inst, false) }, inst.CloudletKey}, nil
}

// runAppInst runs what inst's state asks for or, with undo, removes what a
// failed create left (see undoSpec).
func (e *Engine) runAppInst(ctx context.Context, key string, inst *edgeproto.AppInst, undo bool) error {
	r := newReporter(e.appInstInfos, appInstSpec, &edgeproto.AppInstInfo{Key: inst.Key.Clone(), RequestId: inst.RequestId}, appInstStatus)
	to := e.timeouts()
	p := e.cfg.Platform
	var (
		cluster *edgeproto.ClusterInst
		app     *edgeproto.App
		runtime *edgeproto.AppInstRuntime
	)
	lookup := func(forDelete bool) func(ctx context.Context) error {
		var clusterStub func() *edgeproto.ClusterInst
		var appStub func() *edgeproto.App
		if forDelete {
			clusterStub = func() *edgeproto.ClusterInst {
				return &edgeproto.ClusterInst{Key: inst.ClusterKey.Clone(), CloudletKey: inst.CloudletKey.Clone()}
			}
			appStub = func() *edgeproto.App { return &edgeproto.App{Key: inst.AppKey.Clone()} }
		}
		return func(ctx context.Context) (err error) {
			if cluster, err = dependency(ctx, e.cfg.Objects.ClusterInsts, "cluster of app instance", inst.ClusterKey, clusterStub); err != nil {
				return err
			}
			if !forDelete && cluster.State != edgeproto.TrackedState_TRACKED_STATE_READY {
				return fmt.Errorf("cluster %s is %s, must be READY: %w", KeyString(inst.ClusterKey), cluster.State, ErrClusterNotReady)
			}
			if app, err = dependency(ctx, e.cfg.Objects.Apps, "app of app instance", inst.AppKey, appStub); err != nil || forDelete {
				return err
			}
			return ValidatePorts(app.GetPorts())
		}
	}
	withRuntime := func(i *edgeproto.AppInstInfo) []string {
		var flags []string
		if runtime != nil {
			i.RuntimeInfo = runtime.Clone()
			flags = append(flags, edgeproto.AppInstInfoFieldRuntimeInfo)
		}
		if inst.Uri != "" {
			i.Uri = inst.Uri
			flags = append(flags, edgeproto.AppInstInfoFieldUri)
		}
		return flags
	}
	setPower := func(ps edgeproto.PowerState, then func(*edgeproto.AppInstInfo) []string) func(*edgeproto.AppInstInfo) []string {
		return func(i *edgeproto.AppInstInfo) []string {
			i.PowerState = ps
			flags := []string{edgeproto.AppInstInfoFieldPowerState}
			if then != nil {
				flags = append(flags, then(i)...)
			}
			return flags
		}
	}

	switch {
	case undo:
		return runTracked(ctx, e, r, appInstInfo, key, undoSpec(to.DeleteAppInst),
			undoFuncs(appInstInfo, inst.Errors, lookup(true),
				func(ctx context.Context) error { return p.DeleteAppInst(ctx, cluster, app, inst, e.res, r) }))
	case inst.State == edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED:
		return runTracked(ctx, e, r, appInstInfo, key, opSpec{
			name: "create", task: "Creating AppInst",
			running: edgeproto.TrackedState_TRACKED_STATE_CREATING,
			success: edgeproto.TrackedState_TRACKED_STATE_READY,
			failure: edgeproto.TrackedState_TRACKED_STATE_CREATE_ERROR,
			timeout: to.CreateAppInst, undoTime: to.DeleteAppInst,
		}, opFuncs[*edgeproto.AppInstInfo]{
			prepare: lookup(false),
			do: func(ctx context.Context) (err error) {
				runtime, err = p.CreateAppInst(ctx, cluster, app, inst, e.res, r)
				return err
			},
			undo:    func(ctx context.Context) error { return p.DeleteAppInst(ctx, cluster, app, inst, e.res, r) },
			succeed: setPower(edgeproto.PowerState_POWER_STATE_POWER_ON, withRuntime),
		})
	case inst.State == edgeproto.TrackedState_TRACKED_STATE_UPDATE_REQUESTED:
		f := opFuncs[*edgeproto.AppInstInfo]{
			prepare: lookup(false),
			do: func(ctx context.Context) (err error) {
				runtime, err = p.UpdateAppInst(ctx, cluster, app, inst, e.res, r)
				return err
			},
			succeed: withRuntime,
		}
		if pc, ok := powerChanges[inst.PowerState]; ok {
			f.begin = setPower(pc.running, nil)
			f.succeed = setPower(pc.done, withRuntime)
			f.fail = setPower(edgeproto.PowerState_POWER_STATE_ERROR, nil)
		}
		return runTracked(ctx, e, r, appInstInfo, key, opSpec{
			name: "update", task: "Updating AppInst",
			running: edgeproto.TrackedState_TRACKED_STATE_UPDATING,
			success: edgeproto.TrackedState_TRACKED_STATE_READY,
			failure: edgeproto.TrackedState_TRACKED_STATE_UPDATE_ERROR,
			timeout: to.UpdateAppInst,
		}, f)
	default: // DELETE_REQUESTED
		return runTracked(ctx, e, r, appInstInfo, key, opSpec{
			name: "delete", task: "Deleting AppInst",
			running: edgeproto.TrackedState_TRACKED_STATE_DELETING,
			success: edgeproto.TrackedState_TRACKED_STATE_DELETE_DONE,
			failure: edgeproto.TrackedState_TRACKED_STATE_DELETE_ERROR,
			timeout: to.DeleteAppInst,
		}, opFuncs[*edgeproto.AppInstInfo]{
			prepare: lookup(true),
			do:      func(ctx context.Context) error { return p.DeleteAppInst(ctx, cluster, app, inst, e.res, r) },
		})
	}
}
