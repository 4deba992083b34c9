package executor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
)

var cloudletSpec = &infoSpec{
	kind:       "Cloudlet",
	key:        edgeproto.CloudletInfoFieldKey,
	request:    edgeproto.CloudletInfoFieldRequestId,
	state:      edgeproto.CloudletInfoFieldState,
	errors:     edgeproto.CloudletInfoFieldErrors,
	status:     edgeproto.CloudletInfoFieldStatus,
	taskNumber: edgeproto.CloudletInfoFieldStatusTaskNumber,
	taskName:   edgeproto.CloudletInfoFieldStatusTaskName,
	stepName:   edgeproto.CloudletInfoFieldStatusStepName,
	msgCount:   edgeproto.CloudletInfoFieldStatusMsgCount,
	msgs:       edgeproto.CloudletInfoFieldStatusMsgs,
}

func cloudletStatus(i *edgeproto.CloudletInfo) *edgeproto.StatusInfo {
	if i.Status == nil {
		i.Status = &edgeproto.StatusInfo{}
	}
	return i.Status
}

// gatheredFlags are the CloudletInfo fields GatherCloudletInfo fills and the
// engine reports.
var gatheredFlags = []string{
	edgeproto.CloudletInfoFieldFlavors,
	edgeproto.CloudletInfoFieldResourcesSnapshot,
	edgeproto.CloudletInfoFieldNodeInfos,
	edgeproto.CloudletInfoFieldProperties,
}

// cloudletWork is what one cloudlet submission asks for.
type cloudletWork struct {
	lifecycle   string // "create", "update", "delete", "refresh" or ""
	trustPolicy bool
	maintenance edgeproto.MaintenanceState // to report; UNSPECIFIED for none
}

func cloudletWants(c *edgeproto.Cloudlet) cloudletWork {
	var w cloudletWork
	switch c.GetState() {
	case edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED:
		w.lifecycle = "create"
	case edgeproto.TrackedState_TRACKED_STATE_UPDATE_REQUESTED:
		w.lifecycle = "update"
	case edgeproto.TrackedState_TRACKED_STATE_DELETE_REQUESTED:
		w.lifecycle = "delete"
	case edgeproto.TrackedState_TRACKED_STATE_READY, edgeproto.TrackedState_TRACKED_STATE_CRM_INITOK:
		w.lifecycle = "refresh"
	}
	if w.lifecycle == "delete" {
		return w
	}
	w.trustPolicy = c.GetTrustPolicyState() == edgeproto.TrackedState_TRACKED_STATE_UPDATE_REQUESTED
	switch c.GetMaintenanceState() {
	case edgeproto.MaintenanceState_MAINTENANCE_STATE_CRM_REQUESTED:
		w.maintenance = edgeproto.MaintenanceState_MAINTENANCE_STATE_CRM_UNDER_MAINTENANCE
	case edgeproto.MaintenanceState_MAINTENANCE_STATE_NORMAL_OPERATION:
		w.maintenance = edgeproto.MaintenanceState_MAINTENANCE_STATE_NORMAL_OPERATION
	}
	return w
}

// SubmitCloudlet queues what c asks for; the engine works on a clone.
//
//   - state CREATE_REQUESTED: CloudletInfo state INIT, InitCloudlet,
//     GatherCloudletInfo, then READY with flavors, resources snapshot, node
//     infos and properties; on failure CleanupCloudlet undoes the init and
//     the state is ERRORS with errors.
//   - UPDATE_REQUESTED: InitCloudlet again (it is idempotent and applies
//     the new configuration), gather, READY or ERRORS.
//   - READY or CRM_INITOK: gather again and report READY (a resynchronising
//     host submits its cloudlet this way when it starts).
//   - DELETE_REQUESTED: CleanupCloudlet, then NOT_PRESENT or ERRORS.
//   - trust_policy_state UPDATE_REQUESTED (unless deleting): reports
//     trust_policy_state UPDATING, applies the cloudlet's TrustPolicy (looked
//     up by the cloudlet's organization and trust_policy; an empty name
//     removes the policy) and reports READY or UPDATE_ERROR.
//   - maintenance_state CRM_REQUESTED: reports CRM_UNDER_MAINTENANCE;
//     NORMAL_OPERATION: reports NORMAL_OPERATION (idempotent).
//
// Anything else is ErrNoChange.
func (e *Engine) SubmitCloudlet(c *edgeproto.Cloudlet) (*Handle, error) {
	return e.submitWith(nil, c)
}

func (e *Engine) cloudletRequest(c *edgeproto.Cloudlet) (request, error) {
	if c == nil {
		return request{}, fmt.Errorf("%w: nil Cloudlet", ErrBadObject)
	}
	w := cloudletWants(c)
	if w == (cloudletWork{}) {
		return request{}, fmt.Errorf("Cloudlet %s in state %s: %w", KeyString(c), c.GetState(), ErrNoChange)
	}
	if err := validateRequest(c, c.GetState()); err != nil {
		return request{}, err
	}
	c = c.Clone()
	key := KeyString(c)
	return request{cloudletSpec.kind, key, func(ctx context.Context) error { return e.runCloudlet(ctx, key, c, w) }, nil}, nil
}

func (e *Engine) runCloudlet(ctx context.Context, key string, c *edgeproto.Cloudlet, w cloudletWork) error {
	log := e.log.With(slog.String("kind", cloudletSpec.kind), slog.String("key", key))
	r := newReporter(e.cloudletInfos, cloudletSpec, &edgeproto.CloudletInfo{Key: c.Key.Clone(), RequestId: c.RequestId}, cloudletStatus)
	start := time.Now()
	var (
		final   []func(*edgeproto.CloudletInfo) []string
		opErrs  []error
		msgs    []string
		failure bool
	)
	fail := func(op string, err error) {
		failure = true
		opErrs = append(opErrs, &OpError{Kind: cloudletSpec.kind, Key: key, Op: op, Err: err})
		msgs = append(msgs, err.Error())
	}
	if w.lifecycle != "" {
		state, gathered, err := e.cloudletLifecycle(ctx, r, c, w.lifecycle)
		if err != nil {
			fail(w.lifecycle, err)
		}
		final = append(final, func(i *edgeproto.CloudletInfo) []string {
			i.State = state
			if gathered == nil {
				return []string{cloudletSpec.state}
			}
			i.Flavors, i.ResourcesSnapshot, i.NodeInfos, i.Properties =
				gathered.Flavors, gathered.ResourcesSnapshot, gathered.NodeInfos, gathered.Properties
			return append([]string{cloudletSpec.state}, gatheredFlags...)
		})
	}
	if w.trustPolicy && !failure {
		state, err := e.cloudletTrustPolicy(ctx, r, c, w.lifecycle == "")
		if err != nil {
			fail("update trust policy", err)
		}
		final = append(final, func(i *edgeproto.CloudletInfo) []string {
			i.TrustPolicyState = state
			return []string{edgeproto.CloudletInfoFieldTrustPolicyState}
		})
	}
	if w.maintenance != edgeproto.MaintenanceState_MAINTENANCE_STATE_UNSPECIFIED {
		final = append(final, func(i *edgeproto.CloudletInfo) []string {
			i.MaintenanceState = w.maintenance
			return []string{edgeproto.CloudletInfoFieldMaintenanceState}
		})
	}
	rctx, cancel := reportContext(ctx)
	defer cancel()
	sendErr := r.final(rctx, func(i *edgeproto.CloudletInfo) []string {
		i.Errors = msgs
		flags := []string{cloudletSpec.errors}
		for _, f := range final {
			flags = append(flags, f(i)...)
		}
		return flags
	})
	if sendErr != nil {
		opErrs = append(opErrs, &OpError{Kind: cloudletSpec.kind, Key: key, Op: "report", Err: reportFailed(sendErr)})
	}
	err := errors.Join(opErrs...)
	if err != nil {
		log.LogAttrs(rctx, slog.LevelWarn, "cloudlet work failed", slog.Duration("took", time.Since(start)), slog.Any("error", err))
	} else {
		log.LogAttrs(rctx, slog.LevelInfo, "cloudlet work done", slog.Duration("took", time.Since(start)))
	}
	return err
}

// cloudletLifecycle runs the lifecycle part of a cloudlet submission and
// returns the state to report, what was gathered (nil when nothing was) and
// the error.
func (e *Engine) cloudletLifecycle(ctx context.Context, r *reporter[*edgeproto.CloudletInfo], c *edgeproto.Cloudlet, op string) (edgeproto.CloudletState, *edgeproto.CloudletInfo, error) {
	p := e.cfg.Platform
	to := e.timeouts()
	timeout := to.UpdateCloudlet
	task := map[string]string{
		"create": "Initializing cloudlet", "update": "Updating cloudlet",
		"refresh": "Gathering cloudlet info", "delete": "Deleting cloudlet",
	}[op]
	r.setContext(ctx)
	_ = r.begin(ctx, task, func(i *edgeproto.CloudletInfo) []string {
		i.Errors = nil
		if op != "create" {
			return []string{cloudletSpec.errors}
		}
		i.State = edgeproto.CloudletState_CLOUDLET_STATE_INIT
		return []string{cloudletSpec.errors, cloudletSpec.state}
	})
	switch op {
	case "create":
		timeout = to.CreateCloudlet
	case "delete":
		timeout = to.DeleteCloudlet
	}
	opCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	r.setContext(opCtx)

	if op == "delete" {
		if err := p.CleanupCloudlet(opCtx, c, r); err != nil {
			return edgeproto.CloudletState_CLOUDLET_STATE_ERRORS, nil, classify(ctx, opCtx, timeout, err)
		}
		return edgeproto.CloudletState_CLOUDLET_STATE_NOT_PRESENT, nil, nil
	}
	err := func() error {
		if op != "refresh" {
			if err := p.InitCloudlet(opCtx, c, e.res, r); err != nil {
				return err
			}
			_ = r.task(opCtx, "Gathering cloudlet info")
		}
		return nil
	}()
	gathered := &edgeproto.CloudletInfo{Key: c.Key.Clone()}
	if err == nil {
		err = p.GatherCloudletInfo(opCtx, c, gathered)
	}
	if err == nil {
		return edgeproto.CloudletState_CLOUDLET_STATE_READY, gathered, nil
	}
	err = classify(ctx, opCtx, timeout, err)
	if op == "create" {
		uctx, ucancel := context.WithTimeout(context.WithoutCancel(ctx), to.DeleteCloudlet)
		defer ucancel()
		r.setContext(uctx)
		_ = r.task(uctx, "Undoing create")
		if uerr := p.CleanupCloudlet(uctx, c, r); uerr != nil {
			err = errors.Join(err, fmt.Errorf("undo failed: %w", uerr))
		}
	}
	return edgeproto.CloudletState_CLOUDLET_STATE_ERRORS, nil, err
}

// cloudletTrustPolicy applies the cloudlet's trust policy and returns the
// trust_policy_state to report.
func (e *Engine) cloudletTrustPolicy(ctx context.Context, r *reporter[*edgeproto.CloudletInfo], c *edgeproto.Cloudlet, first bool) (edgeproto.TrackedState, error) {
	update := func(i *edgeproto.CloudletInfo) []string {
		i.TrustPolicyState = edgeproto.TrackedState_TRACKED_STATE_UPDATING
		return []string{edgeproto.CloudletInfoFieldTrustPolicyState}
	}
	if first {
		r.setContext(ctx)
		_ = r.begin(ctx, "Updating trust policy", update)
	} else {
		_ = r.task(ctx, "Updating trust policy")
		_ = r.update(ctx, update)
	}
	failed := edgeproto.TrackedState_TRACKED_STATE_UPDATE_ERROR
	if !e.features.SupportsTrustPolicy {
		return failed, fmt.Errorf("trust policy on platform %q: %w", e.features.PlatformType, ErrUnsupported)
	}
	timeout := e.timeouts().TrustPolicy
	opCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var policy *edgeproto.TrustPolicy
	if c.TrustPolicy != "" {
		pk := &edgeproto.TrustPolicyKey{Organization: c.GetKey().GetOrganization(), Name: c.TrustPolicy}
		var err error
		if policy, err = lookup(opCtx, e.cfg.Objects.TrustPolicies, "trust policy of cloudlet", pk); err != nil {
			return failed, classify(ctx, opCtx, timeout, err)
		}
	}
	if err := e.cfg.Platform.UpdateTrustPolicy(opCtx, c, policy); err != nil {
		return failed, classify(ctx, opCtx, timeout, err)
	}
	return edgeproto.TrackedState_TRACKED_STATE_READY, nil
}
