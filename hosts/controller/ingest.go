package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/fieldmap"
	"github.com/edgekit/edgekit/internal/store"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/protobuf/proto"
)

// Reporter says who sends an Info report, which decides what it may report
// on. The zero Reporter is trusted for every cloudlet (an in-process host).
type Reporter struct {
	// Cloudlet, when set, is the cloudlet whose resource manager (a CRM)
	// sends the report: it may report only on that cloudlet's objects.
	Cloudlet *edgeproto.CloudletKey
	// CCRM is set when the report comes from an off-site resource manager:
	// it may report only on cloudlets without crm_on_edge, and only under
	// the claim of the object it reports on (Fence, whose key must be the
	// object's ClaimKey).
	CCRM bool
	// Fence, when set, makes the report apply only while the claim it was
	// made under is current.
	Fence *Fence
	// ReleaseClaim asks that the claim of Fence be deleted in the
	// report's own transaction when the report settles its object (see
	// settles) or changes no state of an object at rest (a cloudlet's
	// resources snapshot), sparing the claimant a request of its own to
	// release it; never while the object's change is in flight. Honoured
	// only for a Fence on the object's claim key.
	ReleaseClaim bool
}

// Fence ties a report to a claim: the report is applied only if the claim
// key still exists with the create revision the claimant got, checked in
// the same store transaction that writes the report.
type Fence struct {
	// Key is the claim key in the store.
	Key string
	// Revision is the create revision of the claim key: the fencing token.
	Revision int64
}

// ClaimPrefix is where the CCRM replicas keep their claims, under the
// region's store prefix: the claim of the object of kind Kind and key
// string key is ClaimKey(prefix, Kind, key).
const ClaimPrefix = "ccrm/claims/"

// ClaimKey is the etcd key of the claim of an object, given the store's
// prefix ("/edgekit/<region>/"), the object's kind ("ClusterInst") and its
// key string.
func ClaimKey(storePrefix, kind, key string) string {
	return storePrefix + ClaimPrefix + kind + "/" + key
}

// Sentinel errors of Info ingestion; the transition error of a stale report
// also matches edgeproto.ErrInfoStateRejected.
var (
	// ErrReportRefused says that the reporter may not report on the object.
	ErrReportRefused = errors.New("report refused")
	// ErrStaleReport says that the report is about an object that no longer
	// exists, or comes under a claim that is no longer current.
	ErrStaleReport = errors.New("stale report")
	// ErrStaleRequest says that the report answers an earlier request than
	// the object's current one (its request_id is below the object's): a
	// report of a finished change arriving late, after the next change was
	// requested. It matches ErrStaleReport too.
	ErrStaleRequest = fmt.Errorf("%w: it answers an earlier request", ErrStaleReport)
)

// ApplyInfo applies a partial Info report from a resource manager: info is
// a *CloudletInfo, *ClusterInstInfo or *AppInstInfo carrying the fields fm
// names (it must name the key), or a *TrustPolicyException carrying the
// states of its instances entries (see applyTPEReport). The report is applied with CopyInFields in
// one store transaction that also checks the reporter's rights, the fence,
// the request the report answers (a report whose request_id is below the
// object's is refused with ErrStaleRequest: it belongs to a change that
// was superseded), and the transition from the object's state to the
// reported one (a stale or out-of-order state is refused and logged, never
// applied), mirrors the state, errors and shown fields onto the object,
// and removes the object and its Info on DELETE_DONE. Every report is
// counted by result (applied, stale_request, stale, rejected_transition,
// refused, error).
func (c *Controller) ApplyInfo(ctx context.Context, rep Reporter, info proto.Message, fm *fieldmap.FieldMap) error {
	_, err := c.applyReport(ctx, rep, info, fm)
	return err
}

// applyReport is ApplyInfo that also says whether the report's
// transaction deleted the claim of rep.Fence (Reporter.ReleaseClaim).
func (c *Controller) applyReport(ctx context.Context, rep Reporter, info proto.Message, fm *fieldmap.FieldMap) (released bool, err error) {
	switch i := info.(type) {
	case *edgeproto.CloudletInfo:
		released, err = applyInfo(ctx, c, c.cloudlets, rep, i, fm)
	case *edgeproto.ClusterInstInfo:
		released, err = applyInfo(ctx, c, c.clusters, rep, i, fm)
	case *edgeproto.AppInstInfo:
		released, err = applyInfo(ctx, c, c.appInsts, rep, i, fm)
	case *edgeproto.TrustPolicyException:
		err = c.applyTPEReport(ctx, rep, i, fm)
	default:
		return false, fmt.Errorf("%w: no Info kind %T", ErrReportRefused, info)
	}
	c.metrics.reports.WithLabelValues(string(info.ProtoReflect().Descriptor().Name()), reportResult(err)).Inc()
	if err != nil {
		c.log.LogAttrs(ctx, slog.LevelWarn, "info report not applied",
			slog.String("kind", string(info.ProtoReflect().Descriptor().Name())),
			slog.String("key", keyOf(info)), slog.String("fields", fm.String()), slog.Any("error", err))
	}
	return released, err
}

// settles reports whether a report that moves an object to state s ends
// the change its resource manager worked on: READY or an error state (the
// object stays), DELETE_DONE or NOT_PRESENT (it goes).
func settles(s edgeproto.TrackedState) bool {
	switch s {
	case edgeproto.TrackedState_TRACKED_STATE_READY,
		edgeproto.TrackedState_TRACKED_STATE_DELETE_DONE,
		edgeproto.TrackedState_TRACKED_STATE_NOT_PRESENT:
		return true
	}
	return edgeproto.IsErrorState(s)
}

func keyOf(m proto.Message) string {
	if k, ok := m.(interface{ GetKeyString() string }); ok {
		return k.GetKeyString()
	}
	return ""
}

func reportResult(err error) string {
	switch {
	case err == nil:
		return "applied"
	case errors.Is(err, edgeproto.ErrInfoStateRejected):
		return "rejected_transition"
	case errors.Is(err, ErrStaleRequest):
		return "stale_request"
	case errors.Is(err, ErrStaleReport):
		return "stale"
	case errors.Is(err, ErrReportRefused):
		return "refused"
	}
	return "error"
}

func applyInfo[T store.Object[T], I store.Object[I]](ctx context.Context, c *Controller, tk *tracked[T, I], rep Reporter, info I, fm *fieldmap.FieldMap) (released bool, err error) {
	if fm == nil || !fm.IsSet(keyFlag) {
		return false, fmt.Errorf("%w: %s report without its key flag", ErrReportRefused, tk.info.Name())
	}
	if err := info.FieldSchema().Check(fm); err != nil {
		return false, fmt.Errorf("%w: %v", ErrReportRefused, err)
	}
	key := info.GetKeyString()
	if key == "" {
		return false, fmt.Errorf("%w: %s report without a key", ErrReportRefused, tk.info.Name())
	}
	claimKey := ClaimKey(c.store.Prefix(), tk.name, key)
	if rep.CCRM {
		switch {
		case rep.Fence == nil:
			return false, fmt.Errorf("%w: a CCRM reports on %s %s only under its claim (no fence)", ErrReportRefused, tk.name, key)
		case rep.Fence.Key != claimKey:
			return false, fmt.Errorf("%w: fence key %q is not the claim key %q of %s %s", ErrReportRefused, rep.Fence.Key, claimKey, tk.name, key)
		}
	}
	// The claim goes with a report that settles the object, when asked:
	// deleted in the report's transaction, which compares its token, so
	// only the claim the report was made under.
	release := rep.ReleaseClaim && rep.Fence != nil && rep.Fence.Key == claimKey
	// The transaction's first run reads the object, its cloudlet (for a
	// CCRM) and its Info from the controller's caches, at no round trip;
	// the commit checks that they were current, as it checks any read, and
	// a run that read a stale copy, or that refused the report, runs again
	// reading etcd (see store.Cache.TxGet). Such a run reads the three
	// keys in one request, the cloudlet named by the cache's copy of the
	// object (an object's cloudlet never changes; the run still reads and
	// guards the cloudlet of the object it reads itself).
	prefetch := []string{tk.store.Path(key), tk.info.Path(key)}
	if rep.CCRM && tk.cache != nil {
		if cached, ok := tk.cache.Get(key); ok {
			if ck := tk.cloudletOf(cached); ck != nil {
				prefetch = append(prefetch, c.cloudlets.store.Path(cloudletKeyString(ck)))
			}
		}
	}
	_, err = c.store.Txn(ctx, func(tx *store.Tx) error {
		released = false
		if tx.Attempt() > 1 || tk.cache == nil {
			if err := tx.Prefetch(prefetch...); err != nil {
				return err
			}
		}
		obj, found, err := txGet(tx, tk.store, tk.cache, key)
		if err != nil {
			return err
		}
		if !found {
			return fmt.Errorf("%w: %s %s does not exist", ErrStaleReport, tk.name, key)
		}
		if err := c.checkReporter(tx, rep, tk.cloudletOf(obj)); err != nil {
			return err
		}
		if f := rep.Fence; f != nil {
			tx.Require(clientv3.Compare(clientv3.CreateRevision(f.Key), "=", f.Revision))
		}
		if err := checkRequest(tk, obj, info, fm); err != nil {
			return err
		}
		cur, found, err := txGet(tx, tk.info, tk.infoCache, key)
		if err != nil {
			return err
		}
		if !found {
			cur = tk.info.New()
		}
		objState := tk.state(obj)
		newState := edgeproto.TrackedState_TRACKED_STATE_UNSPECIFIED
		if fm.Has(tk.stateFlag) {
			newState = tk.infoState(obj, info)
			if newState != edgeproto.TrackedState_TRACKED_STATE_UNSPECIFIED {
				if err := edgeproto.CheckInfoState(objState, newState); err != nil {
					return fmt.Errorf("%s %s: %w", tk.name, key, err)
				}
			}
		}
		if newState == edgeproto.TrackedState_TRACKED_STATE_UNSPECIFIED && startsWork(objState, info, fm) &&
			edgeproto.AcceptsInfoState(objState, runningState(objState)) {
			// The resource manager began the change requested without
			// a state of its own for it (a cloudlet's update or delete):
			// the object is in the change's running state.
			newState = runningState(objState)
		}
		cur.CopyInFields(info, fm)
		stamp(cur, "updated_at")
		if newState == edgeproto.TrackedState_TRACKED_STATE_DELETE_DONE ||
			(newState == edgeproto.TrackedState_TRACKED_STATE_NOT_PRESENT && edgeproto.IsDeleteState(objState)) {
			tk.removeAll(c, tx, obj)
			if release {
				tx.Delete(rep.Fence.Key)
				released = true
			}
			return nil
		}
		next := obj.Clone()
		if newState != edgeproto.TrackedState_TRACKED_STATE_UNSPECIFIED && newState != objState {
			tk.setState(next, newState)
			switch {
			case edgeproto.IsErrorState(newState):
				tk.setErrors(next, tk.errors(cur))
			case newState == edgeproto.TrackedState_TRACKED_STATE_READY:
				tk.setErrors(next, nil)
			}
		}
		tk.mirror(next, cur, fm)
		if tk.infoApplied != nil {
			if err := tk.infoApplied(tx, next, cur, fm); err != nil {
				return err
			}
		}
		if !proto.Equal(next, obj) {
			stamp(next, "updated_at")
			if err := tk.store.TxPut(tx, next); err != nil {
				return err
			}
		}
		// A report that settles the object, or one that changes no state
		// of an object at rest (a resources snapshot), is the last of
		// its claim; a claim of a change still in flight stays.
		if release && (settles(newState) || newState == edgeproto.TrackedState_TRACKED_STATE_UNSPECIFIED) &&
			!edgeproto.IsTransientState(tk.state(next)) {
			tx.Delete(rep.Fence.Key)
			released = true
		}
		return tk.info.TxPut(tx, cur)
	})
	if err != nil {
		released = false
		if errors.Is(err, store.ErrPrecondition) && rep.Fence != nil {
			return false, fmt.Errorf("%w: claim %s is no longer at revision %d", ErrStaleReport, rep.Fence.Key, rep.Fence.Revision)
		}
	}
	return released, err
}

// checkRequest refuses a report that answers an earlier request than the
// object's current one: its request_id, when fm names it and it is not 0,
// is below the object's. A report without a request_id (a resource
// manager that predates it, or a report about no request: a cloudlet's
// connection state) and an object without one (stored before request ids
// existed) are not checked, and are judged by the transition table alone
// as before.
func checkRequest[T store.Object[T], I store.Object[I]](tk *tracked[T, I], obj T, info I, fm *fieldmap.FieldMap) error {
	if !fm.Has(tk.requestFlag) {
		return nil
	}
	got, want := tk.infoRequest(info), tk.request(obj)
	if got == 0 || want == 0 || got >= want {
		return nil
	}
	return fmt.Errorf("%w: %s %s report answers request %d, the object is at request %d (%s)",
		ErrStaleRequest, tk.name, obj.GetKeyString(), got, want, stateName(tk.state(obj)))
}

// startsWork reports whether a report on an object in state objState says
// that its resource manager began the change the object asks for: the
// object is in a *_REQUESTED state and the report carries progress with a
// task.
func startsWork(objState edgeproto.TrackedState, info interface {
	proto.Message
	FieldSchema() *fieldmap.Schema
}, fm *fieldmap.FieldMap) bool {
	if !edgeproto.IsRequestedState(objState) {
		return false
	}
	flag, err := info.FieldSchema().FlagOf("status")
	if err != nil || !fm.HasOrHasChild(flag) {
		return false
	}
	st, ok := info.ProtoReflect().Interface().(interface{ GetStatus() *edgeproto.StatusInfo })
	return ok && st.GetStatus().GetTaskNumber() > 0
}

// runningState is the *ING state of a *_REQUESTED state.
func runningState(s edgeproto.TrackedState) edgeproto.TrackedState {
	switch s {
	case edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED:
		return edgeproto.TrackedState_TRACKED_STATE_CREATING
	case edgeproto.TrackedState_TRACKED_STATE_UPDATE_REQUESTED:
		return edgeproto.TrackedState_TRACKED_STATE_UPDATING
	case edgeproto.TrackedState_TRACKED_STATE_DELETE_REQUESTED:
		return edgeproto.TrackedState_TRACKED_STATE_DELETING
	}
	return edgeproto.TrackedState_TRACKED_STATE_UNSPECIFIED
}

// txGet reads the object of key in tx through cache when there is one
// (see store.Cache.TxGet), else from etcd.
func txGet[T store.Object[T]](tx *store.Tx, k *store.Kind[T], cache *store.Cache[T], key string) (T, bool, error) {
	if cache != nil {
		return cache.TxGet(tx, key)
	}
	return k.TxGet(tx, key)
}

// checkReporter checks that rep may report on an object of cloudlet.
func (c *Controller) checkReporter(tx *store.Tx, rep Reporter, cloudlet *edgeproto.CloudletKey) error {
	switch {
	case rep.Cloudlet != nil:
		if !proto.Equal(rep.Cloudlet, cloudlet) {
			return fmt.Errorf("%w: the resource manager of cloudlet %s may not report on cloudlet %s",
				ErrReportRefused, cloudletKeyString(rep.Cloudlet), cloudletKeyString(cloudlet))
		}
	case rep.CCRM:
		cl, found, err := txGet(tx, c.cloudlets.store, c.cloudlets.cache, cloudletKeyString(cloudlet))
		if err != nil {
			return err
		}
		if found && cl.GetCrmOnEdge() {
			return fmt.Errorf("%w: cloudlet %s has its resource manager on the edge site", ErrReportRefused, cloudletKeyString(cloudlet))
		}
	}
	return nil
}

func cloudletKeyString(k *edgeproto.CloudletKey) string {
	return (&edgeproto.Cloudlet{Key: k}).GetKeyString()
}
