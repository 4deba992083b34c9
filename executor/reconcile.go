package executor

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"github.com/edgekit/edgekit/edgeproto"
	"google.golang.org/protobuf/proto"
)

// ReconcileAction is what Reconcile does for one object.
type ReconcileAction string

// The actions of Reconcile. Which one an object gets is decided from the
// host's state of the object and the platform's inventory entry (absent,
// CREATING or READY); see Engine.Reconcile for the table.
const (
	// ReconcileCreate runs the create operation: the object is wanted and
	// the platform lacks it, or has an unfinished create, or the host's
	// create was interrupted. The platform adopts what exists.
	ReconcileCreate ReconcileAction = "create"
	// ReconcileUpdate runs the update operation again: the host's update
	// was interrupted or is still requested.
	ReconcileUpdate ReconcileAction = "update"
	// ReconcileDelete runs the delete operation: the host's delete was
	// interrupted, requested or failed, or the platform has an object the
	// host no longer wants (unknown to the host, DELETE_DONE or
	// NOT_PRESENT). Deleting what is absent succeeds.
	ReconcileDelete ReconcileAction = "delete"
	// ReconcileUndo removes what a failed create left on the platform: the
	// host has the object in CREATE_ERROR and the platform still has it.
	// The object stays CREATE_ERROR.
	ReconcileUndo ReconcileAction = "undo"
	// ReconcileReport reports an object present on both sides and settled
	// (READY, UPDATE_ERROR) in its state, with the runtime the platform
	// listed (a cluster's resources; an instance's runtime info, URI and
	// power state).
	ReconcileReport ReconcileAction = "report"
	// ReconcileNone does nothing: the object needs nothing (when the
	// operation started, the host's object had changed so that nothing was
	// left to do).
	ReconcileNone ReconcileAction = "none"
	// ReconcileBusy leaves the object to the request for it that was
	// already queued or running in the engine.
	ReconcileBusy ReconcileAction = "busy"
)

// ReconcileItem is what Reconcile did for one object.
type ReconcileItem struct {
	// Kind is "ClusterInst" or "AppInst".
	Kind string
	// Key is the object's key string.
	Key string
	// Action is what was done.
	Action ReconcileAction
	// Err is the outcome: nil, the operation's error (as a Handle's), or
	// the error of reading the host's object.
	Err error
}

// ReconcileResult is what Reconcile did on one cloudlet.
type ReconcileResult struct {
	// Cloudlet is the cloudlet's key string.
	Cloudlet string
	// Items lists every object Reconcile looked at that needed or got an
	// action, ClusterInsts first, then AppInsts, each sorted by key.
	Items []ReconcileItem
}

// Err joins the errors of the items; nil when every action succeeded.
func (r *ReconcileResult) Err() error {
	var errs []error
	for _, it := range r.Items {
		if it.Err != nil {
			errs = append(errs, it.Err)
		}
	}
	return errors.Join(errs...)
}

// Count returns how many items got action a.
func (r *ReconcileResult) Count(a ReconcileAction) int {
	n := 0
	for _, it := range r.Items {
		if it.Action == a {
			n++
		}
	}
	return n
}

// decide is the reconciliation table: what to do for an object the host
// has in state host (hostHas false: the host does not know it) and the
// platform lists in state inv (invHas false: the platform lacks it).
//
//	host state                       platform: absent  CREATING  READY
//	absent, DELETE_DONE, NOT_PRESENT           none    delete    delete
//	CREATE_REQUESTED, CREATING,
//	  CREATING_DEPENDENCIES, CRM_INITOK        create  create    create (adopts)
//	READY, UPDATE_ERROR                        create  create    report
//	UPDATE_REQUESTED, UPDATING                 create  create    update
//	CREATE_ERROR                               none    undo      undo
//	DELETE_REQUESTED, DELETING,
//	  DELETE_ERROR                             delete  delete    delete
//	UNSPECIFIED, DELETE_PREPARE                none    none      none
func decide(host edgeproto.TrackedState, hostHas bool, inv edgeproto.TrackedState, invHas bool) ReconcileAction {
	if !hostHas {
		host = edgeproto.TrackedState_TRACKED_STATE_NOT_PRESENT
	}
	ready := invHas && inv != edgeproto.TrackedState_TRACKED_STATE_CREATING
	switch host {
	case edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED, edgeproto.TrackedState_TRACKED_STATE_CREATING,
		edgeproto.TrackedState_TRACKED_STATE_CREATING_DEPENDENCIES, edgeproto.TrackedState_TRACKED_STATE_CRM_INITOK:
		return ReconcileCreate
	case edgeproto.TrackedState_TRACKED_STATE_READY, edgeproto.TrackedState_TRACKED_STATE_UPDATE_ERROR:
		if ready {
			return ReconcileReport
		}
		return ReconcileCreate
	case edgeproto.TrackedState_TRACKED_STATE_UPDATE_REQUESTED, edgeproto.TrackedState_TRACKED_STATE_UPDATING:
		if ready {
			return ReconcileUpdate
		}
		return ReconcileCreate
	case edgeproto.TrackedState_TRACKED_STATE_CREATE_ERROR:
		if invHas {
			return ReconcileUndo
		}
	case edgeproto.TrackedState_TRACKED_STATE_DELETE_REQUESTED, edgeproto.TrackedState_TRACKED_STATE_DELETING,
		edgeproto.TrackedState_TRACKED_STATE_DELETE_ERROR:
		return ReconcileDelete
	case edgeproto.TrackedState_TRACKED_STATE_DELETE_DONE, edgeproto.TrackedState_TRACKED_STATE_NOT_PRESENT:
		if invHas {
			return ReconcileDelete
		}
	}
	return ReconcileNone
}

// ReconcileOption changes what Reconcile does.
type ReconcileOption func(*reconcileOptions)

type reconcileOptions struct {
	orphansOnly bool
	guard       ReconcileGuard
}

// ReconcileGuard runs around each action of Reconcile, in the action's
// worker, before the host's object is read again: it returns the context
// to run the action under (one carrying the host's lock or fence on the
// object, say) and a function called once the action ended. An error
// wrapping ErrBusy leaves the object alone (ReconcileBusy, no error);
// another error fails the item and nothing is done for the object. Since
// the host's object is read again after the guard returned, a guard that
// keeps the host from changing the object (or from acting on it elsewhere)
// until its release makes the action's decision hold while it runs.
type ReconcileGuard func(ctx context.Context, kind, key string) (context.Context, func(), error)

// WithReconcileGuard runs every action of Reconcile under g.
func WithReconcileGuard(g ReconcileGuard) ReconcileOption {
	return func(o *reconcileOptions) { o.guard = g }
}

// OrphansOnly limits Reconcile to removing what the platform has and the
// host no longer has (absent, DELETE_DONE or NOT_PRESENT): every object
// the host has is left to the host's own requests, whatever its state.
// The decision is made again when each removal starts, from the host's
// object read then: an object the host has by then (created again
// meanwhile) is left alone (ReconcileNone). A host that runs its requests
// itself and only needs what was deleted while no engine watched removed
// uses it.
func OrphansOnly() ReconcileOption {
	return func(o *reconcileOptions) { o.orphansOnly = true }
}

// decide is the package's decide limited by the options: with
// orphansOnly, only the removal of what the host does not have.
func (o *reconcileOptions) decide(host edgeproto.TrackedState, hostHas bool, inv edgeproto.TrackedState, invHas bool) ReconcileAction {
	act := decide(host, hostHas, inv, invHas)
	if o.orphansOnly && act != ReconcileNone {
		gone := !hostHas || host == edgeproto.TrackedState_TRACKED_STATE_DELETE_DONE ||
			host == edgeproto.TrackedState_TRACKED_STATE_NOT_PRESENT
		if act != ReconcileDelete || !gone {
			return ReconcileNone
		}
	}
	return act
}

// reconcilable is a ClusterInst or an AppInst.
type reconcilable interface {
	proto.Message
	GetState() edgeproto.TrackedState
	GetCloudletKey() *edgeproto.CloudletKey
}

// kindOps is what Reconcile needs to know of one kind of object.
type kindOps[O reconcilable] struct {
	kind string
	// get reads the host's object with the key of o.
	get func(ctx context.Context, o O) (O, error)
	// withState returns a clone of o in state s.
	withState func(o O, s edgeproto.TrackedState) O
	// request builds the operation o's state asks for.
	request func(o O) (request, error)
	// undo removes what a failed create of o left.
	undo func(ctx context.Context, key string, o O) error
	// report reports host's state with the runtime of inv.
	report func(ctx context.Context, key string, host, inv O) error
}

// plan is one object to reconcile.
type plan[O reconcilable] struct {
	key       string
	host, inv O // zero when absent
	hostHas   bool
	invHas    bool
	action    ReconcileAction
}

// pending is one queued action of Reconcile.
type pending struct {
	planned ReconcileItem
	h       *Handle         // nil when the object was busy
	action  ReconcileAction // what the action did; written before h resolves
}

// item is what pending did, once its Handle resolved, or why it did not.
func (p *pending) item(ctx context.Context) ReconcileItem {
	it := p.planned
	if p.h == nil {
		return it
	}
	select {
	case <-p.h.Done():
	default:
		it.Err = fmt.Errorf("%s %s: still to do when Reconcile returned: %w", it.Kind, it.Key, context.Cause(ctx))
		return it
	}
	it.Err = p.h.Err()
	switch {
	case errors.Is(it.Err, ErrSuperseded):
		it.Action, it.Err = ReconcileBusy, nil // a newer request of the host's took over
	case p.action != "":
		it.Action = p.action
	}
	return it
}

// Reconcile converges what the platform has on cloudlet with what the host
// wants, after the engine (or its host) was down: it asks the platform for
// its inventory (InventoryPlatform.ListInsts), lists what the host has on
// the cloudlet (Objects.ClusterInstsOn, Objects.AppInstsOn), decides one
// action per object, runs them through the engine's queue (reporting
// through the Senders as every operation does) and waits for them.
//
// The decision, from the host's state and the platform's inventory entry
// (absent, CREATING: a create that did not finish, or READY):
//
//	host state                       platform: absent  CREATING  READY
//	absent, DELETE_DONE, NOT_PRESENT           -       delete    delete
//	CREATE_REQUESTED, CREATING,
//	  CREATING_DEPENDENCIES, CRM_INITOK        create  create    create (adopts)
//	READY, UPDATE_ERROR                        create  create    report
//	UPDATE_REQUESTED, UPDATING                 create  create    update
//	CREATE_ERROR                               -       undo      undo
//	DELETE_REQUESTED, DELETING,
//	  DELETE_ERROR                             delete  delete    delete
//	UNSPECIFIED, DELETE_PREPARE                -       -         -
//
// Create, update and delete are the operations Submit runs (a create
// adopts what exists, a delete of what is absent succeeds), so an
// interrupted operation is re-run to its end and a failed one is undone as
// usual; undo removes the leftovers of a failed create and keeps the
// object CREATE_ERROR; report sends the host's settled state with the
// runtime the platform listed. The actions run in three waves: app
// instances to remove or undo, then clusters, then the other app
// instances, so that instances go before their clusters and clusters exist
// before their instances.
//
// Every action re-reads the host's object (Objects.ClusterInsts,
// Objects.AppInsts) when it starts and decides again, so a change the host
// made meanwhile is honoured; an object with a request already queued or
// running in the engine is left to it (ReconcileBusy). The actions are
// bound to ctx as with SubmitContext; when ctx ends Reconcile returns what
// it did so far and ctx's error.
//
// Options narrow what Reconcile does (OrphansOnly) and wrap each action
// (WithReconcileGuard).
//
// An error listing the inventory or the host's objects, or an inventory
// entry without a key or of another cloudlet, makes Reconcile return that
// error before it does anything: it never deletes on a partial view. It
// needs a platform implementing InventoryPlatform (ErrUnsupported) and the
// Getters and Listers above (ErrNotConfigured). Like Submit it may be
// called before Start, but it waits for the work it queued: call it once
// Start runs. After Start returned it is ErrStopped. The result lists what
// was done for each object; its Err joins the failures.
func (e *Engine) Reconcile(ctx context.Context, cloudlet *edgeproto.Cloudlet, opts ...ReconcileOption) (*ReconcileResult, error) {
	var ro reconcileOptions
	for _, opt := range opts {
		if opt != nil {
			opt(&ro)
		}
	}
	if cloudlet == nil || KeyString(cloudlet.GetKey()) == "" {
		return nil, fmt.Errorf("%w: Reconcile needs a cloudlet with a key", ErrBadObject)
	}
	o := e.cfg.Objects
	for _, need := range []struct {
		name    string
		missing bool
	}{
		{"ClusterInsts", o.ClusterInsts == nil}, {"AppInsts", o.AppInsts == nil},
		{"ClusterInstsOn", o.ClusterInstsOn == nil}, {"AppInstsOn", o.AppInstsOn == nil},
	} {
		if need.missing {
			return nil, fmt.Errorf("%w: Reconcile needs Config.Objects.%s", ErrNotConfigured, need.name)
		}
	}
	lister, ok := e.cfg.Platform.(InventoryPlatform)
	if !ok {
		return nil, fmt.Errorf("listing what exists on platform %q: %w", e.features.PlatformType, ErrUnsupported)
	}
	ck := KeyString(cloudlet.GetKey())
	log := e.log.With(slog.String("cloudlet", ck))
	inv, err := lister.ListInsts(ctx, cloudlet.Clone())
	if err != nil {
		return nil, fmt.Errorf("listing what exists on cloudlet %s: %w", ck, err)
	}
	if inv == nil {
		inv = &Inventory{}
	}
	hostClusters, err := o.ClusterInstsOn.List(ctx, cloudlet.GetKey())
	if err != nil {
		return nil, fmt.Errorf("listing the cloudlet's clusters: %w", err)
	}
	hostInsts, err := o.AppInstsOn.List(ctx, cloudlet.GetKey())
	if err != nil {
		return nil, fmt.Errorf("listing the cloudlet's app instances: %w", err)
	}
	clusters, err := plans(&ro, ck, clusterSpec.kind, inv.Clusters, hostClusters)
	if err != nil {
		return nil, err
	}
	insts, err := plans(&ro, ck, appInstSpec.kind, inv.AppInsts, hostInsts)
	if err != nil {
		return nil, err
	}
	res := &ReconcileResult{Cloudlet: ck}
	log.LogAttrs(ctx, slog.LevelInfo, "reconciling", slog.Int("clusters", len(clusters)), slog.Int("appinsts", len(insts)),
		slog.Bool("orphans_only", ro.orphansOnly))

	// Three waves: instances to remove, clusters, the other instances.
	removal := func(p plan[*edgeproto.AppInst]) bool {
		return p.action == ReconcileDelete || p.action == ReconcileUndo
	}
	clusterOps, instOps := e.clusterOps(), e.appInstOps()
	var clusterItems, instItems []*pending
	waves := []func() ([]*pending, error){
		func() ([]*pending, error) { return runWave(ctx, e, &ro, instOps, insts, removal) },
		func() ([]*pending, error) { return runWave(ctx, e, &ro, clusterOps, clusters, nil) },
		func() ([]*pending, error) {
			return runWave(ctx, e, &ro, instOps, insts, func(p plan[*edgeproto.AppInst]) bool { return !removal(p) })
		},
	}
	var werr error
	for i, wave := range waves {
		ps, err := wave()
		if i == 1 {
			clusterItems = ps
		} else {
			instItems = append(instItems, ps...)
		}
		if werr = errors.Join(err, waitAll(ctx, ps)); werr != nil {
			break
		}
	}
	for _, ps := range [][]*pending{clusterItems, instItems} {
		slices.SortFunc(ps, func(a, b *pending) int { return cmp.Compare(a.planned.Key, b.planned.Key) })
		for _, p := range ps {
			res.Items = append(res.Items, p.item(ctx))
		}
	}
	if werr != nil {
		return res, werr
	}
	log.LogAttrs(ctx, slog.LevelInfo, "reconciled", slog.Int("actions", len(res.Items)), slog.Any("error", res.Err()))
	return res, nil
}

// waitAll waits until every queued action resolved, or returns ctx's error.
func waitAll(ctx context.Context, ps []*pending) error {
	for _, p := range ps {
		if p.h == nil {
			continue
		}
		select {
		case <-p.h.Done():
		case <-ctx.Done():
			return fmt.Errorf("reconcile stopped: %w", context.Cause(ctx))
		}
	}
	return nil
}

// plans pairs the inventory entries with the host's objects by key and
// decides an action for each; it fails on an entry without a key, of
// another cloudlet, or listed twice.
func plans[O reconcilable](ro *reconcileOptions, cloudlet, kind string, inv, host []O) ([]plan[O], error) {
	byKey := map[string]*plan[O]{}
	var keys []string
	add := func(side string, o O, isHost bool) error {
		key := KeyString(o)
		if key == "" {
			return fmt.Errorf("%w: %s lists a %s without a key", ErrBadObject, side, kind)
		}
		if c := KeyString(o.GetCloudletKey()); c != "" && c != cloudlet {
			return fmt.Errorf("%w: %s lists %s %s of cloudlet %s as on cloudlet %s", ErrBadObject, side, kind, key, c, cloudlet)
		}
		p := byKey[key]
		if p == nil {
			p = &plan[O]{key: key}
			byKey[key] = p
			keys = append(keys, key)
		}
		if isHost && p.hostHas || !isHost && p.invHas {
			return fmt.Errorf("%w: %s lists %s %s twice", ErrBadObject, side, kind, key)
		}
		if isHost {
			p.host, p.hostHas = o, true
		} else {
			p.inv, p.invHas = o, true
		}
		return nil
	}
	for _, o := range inv {
		if err := add("the platform's inventory", o, false); err != nil {
			return nil, err
		}
	}
	for _, o := range host {
		if err := add("the host", o, true); err != nil {
			return nil, err
		}
	}
	slices.Sort(keys)
	out := make([]plan[O], 0, len(keys))
	for _, k := range keys {
		p := byKey[k]
		p.action = ro.decide(p.host.GetState(), p.hostHas, p.inv.GetState(), p.invHas)
		if p.action != ReconcileNone {
			out = append(out, *p)
		}
	}
	return out, nil
}

// runWave queues the planned actions that pick selects (nil: all), each
// bound to ctx and run under the options' guard, and returns them.
func runWave[O reconcilable](ctx context.Context, e *Engine, ro *reconcileOptions, ops *kindOps[O], ps []plan[O], pick func(plan[O]) bool) ([]*pending, error) {
	var out []*pending
	for _, p := range ps {
		if pick != nil && !pick(p) {
			continue
		}
		pd := &pending{planned: ReconcileItem{Kind: ops.kind, Key: p.key, Action: p.action}}
		out = append(out, pd)
		h := newHandle(ops.kind, p.key)
		run := func(ctx context.Context) (err error) {
			if ro.guard != nil {
				gctx, done, err := ro.guard(ctx, ops.kind, p.key)
				if errors.Is(err, ErrBusy) {
					pd.action = ReconcileBusy
					return nil
				}
				if err != nil {
					return &OpError{Kind: ops.kind, Key: p.key, Op: "reconcile", Err: err}
				}
				if done != nil {
					defer done()
				}
				ctx = gctx
			}
			pd.action, err = reconcileOne(ctx, ro, ops, p)
			return err
		}
		queued, err := e.q.pushIdle(ops.kind+"/"+p.key, &task{handle: h, run: run, ctx: ctx})
		if err != nil {
			return out, err
		}
		if !queued {
			pd.planned.Action = ReconcileBusy
			continue
		}
		pd.h = h
	}
	return out, nil
}

// reconcileOne re-reads the host's object, decides again (the host may
// have changed it since it was listed) and acts.
func reconcileOne[O reconcilable](ctx context.Context, ro *reconcileOptions, ops *kindOps[O], p plan[O]) (ReconcileAction, error) {
	byKey := p.inv
	if p.hostHas {
		byKey = p.host
	}
	cur, err := ops.get(ctx, byKey)
	hostHas := err == nil
	if err != nil && !errors.Is(err, ErrNotFound) {
		return p.action, &OpError{Kind: ops.kind, Key: p.key, Op: "reconcile", Err: err}
	}
	act := ro.decide(cur.GetState(), hostHas, p.inv.GetState(), p.invHas)
	var state edgeproto.TrackedState
	switch act {
	case ReconcileNone:
		return act, nil
	case ReconcileUndo:
		return act, ops.undo(ctx, p.key, cur)
	case ReconcileReport:
		return act, ops.report(ctx, p.key, cur, p.inv)
	case ReconcileCreate:
		state = edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED
	case ReconcileUpdate:
		state = edgeproto.TrackedState_TRACKED_STATE_UPDATE_REQUESTED
	case ReconcileDelete:
		state = edgeproto.TrackedState_TRACKED_STATE_DELETE_REQUESTED
		if !hostHas {
			cur = p.inv // what the platform listed: the key is enough to delete
		}
	}
	r, err := ops.request(ops.withState(cur, state))
	if err != nil {
		return act, &OpError{Kind: ops.kind, Key: p.key, Op: string(act), Err: err}
	}
	return act, r.run(ctx)
}
