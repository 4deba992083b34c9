package executor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/edgekit/edgekit/edgeproto"
)

var tpeSpec = &infoSpec{kind: "TrustPolicyException", key: edgeproto.TrustPolicyExceptionFieldKey}

// tpeSteps maps the state an instance of an exception asks for to the
// states reported while and after the engine works on it.
var tpeSteps = map[edgeproto.TrackedState]struct {
	op                        string
	running, success, failure edgeproto.TrackedState
}{
	edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED: {"create", edgeproto.TrackedState_TRACKED_STATE_CREATING,
		edgeproto.TrackedState_TRACKED_STATE_READY, edgeproto.TrackedState_TRACKED_STATE_CREATE_ERROR},
	edgeproto.TrackedState_TRACKED_STATE_UPDATE_REQUESTED: {"update", edgeproto.TrackedState_TRACKED_STATE_UPDATING,
		edgeproto.TrackedState_TRACKED_STATE_READY, edgeproto.TrackedState_TRACKED_STATE_UPDATE_ERROR},
	edgeproto.TrackedState_TRACKED_STATE_DELETE_REQUESTED: {"delete", edgeproto.TrackedState_TRACKED_STATE_DELETING,
		edgeproto.TrackedState_TRACKED_STATE_DELETE_DONE, edgeproto.TrackedState_TRACKED_STATE_DELETE_ERROR},
}

// SubmitTrustPolicyException queues the work exc asks for: every entry of
// exc.instances in state CREATE_REQUESTED or UPDATE_REQUESTED is applied
// to the cluster of its AppInst (looked up in Config.Objects) with
// UpdateTrustPolicyException, every entry in DELETE_REQUESTED is removed
// with DeleteTrustPolicyException. Exceptions that are not ACTIVE are not
// applied (the entry reports CREATE_ERROR/UPDATE_ERROR). Removing an
// exception from an AppInst that no longer exists removes it from the
// cluster the entry names (cluster_key), and succeeds when it names none.
// On a platform without trust policy support an exception is never
// applied: the platform's UpdateTrustPolicyException is asked, so that its
// refusal (an error wrapping ErrUnsupported) is what the entry shows, and
// the entry fails with ErrUnsupported whatever it answers; removing an
// exception there succeeds at once.
//
// Each entry reports CREATING/UPDATING/DELETING, then READY/DELETE_DONE or
// the matching error state with its errors. Reports are TrustPolicyException
// partial updates carrying the key and the whole instances list (a list is
// one unit), which is why all entries of one exception are worked on in one
// operation. Without any requested entry the submission is ErrNoChange.
func (e *Engine) SubmitTrustPolicyException(exc *edgeproto.TrustPolicyException) (*Handle, error) {
	return e.submitWith(nil, exc)
}

func (e *Engine) tpeRequest(exc *edgeproto.TrustPolicyException) (request, error) {
	if exc == nil {
		return request{}, fmt.Errorf("%w: nil TrustPolicyException", ErrBadObject)
	}
	requested, applies := false, false
	for _, in := range exc.GetInstances() {
		if _, ok := tpeSteps[in.GetState()]; ok {
			requested = true
			applies = applies || in.GetState() != edgeproto.TrackedState_TRACKED_STATE_DELETE_REQUESTED
		}
	}
	if !requested {
		return request{}, fmt.Errorf("TrustPolicyException %s has no requested instance: %w", KeyString(exc), ErrNoChange)
	}
	if applies {
		if err := ValidateKeys(exc); err != nil {
			return request{}, err
		}
	}
	exc = exc.Clone()
	key := KeyString(exc)
	return request{tpeSpec.kind, key, func(ctx context.Context) error { return e.runTPE(ctx, key, exc) }, nil}, nil
}

func (e *Engine) runTPE(ctx context.Context, key string, exc *edgeproto.TrustPolicyException) error {
	log := e.log.With(slog.String("kind", tpeSpec.kind), slog.String("key", key))
	info := &edgeproto.TrustPolicyException{Key: exc.Key.Clone(), Instances: exc.Instances}
	r := newReporter(e.tpes, tpeSpec, info, nil)
	setInstance := func(i int, state edgeproto.TrackedState, errs []string) func(*edgeproto.TrustPolicyException) []string {
		return func(x *edgeproto.TrustPolicyException) []string {
			x.Instances[i].State = state
			x.Instances[i].Errors = errs
			return []string{edgeproto.TrustPolicyExceptionFieldInstances}
		}
	}
	var opErrs []error
	for i, in := range exc.Instances {
		step, ok := tpeSteps[in.GetState()]
		if !ok {
			continue
		}
		_ = r.update(ctx, setInstance(i, step.running, nil))
		op := step.op + " on " + KeyString(in.AppInstKey)
		err := e.applyTPE(ctx, exc, in, step.op)
		outcome := setInstance(i, step.success, nil)
		if err != nil {
			opErrs = append(opErrs, &OpError{Kind: tpeSpec.kind, Key: key, Op: op, Err: err})
			outcome = setInstance(i, step.failure, []string{err.Error()})
		}
		rctx, cancel := reportContext(ctx)
		if sendErr := r.update(rctx, outcome); sendErr != nil {
			// The instance's outcome is its final report.
			opErrs = append(opErrs, &OpError{Kind: tpeSpec.kind, Key: key, Op: op, Err: reportFailed(sendErr)})
		}
		cancel()
	}
	r.close()
	err := errors.Join(opErrs...)
	if err != nil {
		log.LogAttrs(ctx, slog.LevelWarn, "trust policy exception failed", slog.Any("error", err))
	}
	return err
}

func (e *Engine) applyTPE(ctx context.Context, exc *edgeproto.TrustPolicyException, in *edgeproto.TrustPolicyExceptionInstance, op string) error {
	supported := e.features.SupportsTrustPolicy
	if !supported && op == "delete" {
		return nil // the platform applies no exception: none to remove
	}
	active := exc.State == edgeproto.TrustPolicyExceptionState_TRUST_POLICY_EXCEPTION_STATE_ACTIVE
	if op != "delete" && !active {
		return fmt.Errorf("exception is %s, not ACTIVE: not applied", exc.State)
	}
	timeout := e.timeouts().TrustPolicy
	opCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ai, err := lookup(opCtx, e.cfg.Objects.AppInsts, "app instance of exception", in.AppInstKey)
	var clusterKey *edgeproto.ClusterKey
	switch {
	case op == "delete" && errors.Is(err, ErrNotFound):
		// The instance is gone: the exception is removed from the
		// cluster the entry names, if any.
		if in.GetClusterKey() == nil {
			return nil
		}
		clusterKey = in.GetClusterKey()
	case err != nil:
		return classify(ctx, opCtx, timeout, err)
	default:
		clusterKey = ai.ClusterKey
	}
	var stub func() *edgeproto.Cloudlet
	if op == "delete" {
		stub = func() *edgeproto.Cloudlet { return &edgeproto.Cloudlet{Key: in.CloudletKey.Clone()} }
	}
	cloudlet, err := dependency(opCtx, e.cfg.Objects.Cloudlets, "cloudlet of exception", in.CloudletKey, stub)
	if err != nil {
		return classify(ctx, opCtx, timeout, err)
	}
	if op == "delete" {
		err = e.cfg.Platform.DeleteTrustPolicyException(opCtx, cloudlet, exc.Key.Clone(), clusterKey.Clone(), in.AppInstKey.Clone())
	} else {
		err = e.cfg.Platform.UpdateTrustPolicyException(opCtx, cloudlet, exc.Clone(), clusterKey.Clone(), in.AppInstKey.Clone())
		if !supported && (err == nil || !errors.Is(err, ErrUnsupported)) {
			// The platform's own refusal says why (it cannot enforce
			// network rules...); without one, the engine's.
			err = fmt.Errorf("trust policy exception on platform %q: %w", e.features.PlatformType, ErrUnsupported)
		}
	}
	if err != nil {
		return classify(ctx, opCtx, timeout, err)
	}
	return nil
}
