package allocator

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/internal/store"
)

// permanentError is a failure that trying again does not mend: the
// allocation fails, and what it made is torn down.
type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

func permanent(format string, args ...any) error {
	return &permanentError{err: fmt.Errorf(format, args...)}
}

// converge takes allocation id as far as it can go now: provisioned and
// healthy, or torn down. It returns an error when a step failed for a
// reason that may pass (the caller tries again later).
func (a *Allocator) converge(ctx context.Context, id string) error {
	for range 2 { // a failure marks the allocation for teardown: once more
		al, _, err := a.ledger.Allocations().Get(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		if ended(al) {
			return nil
		}
		if al.GetReleaseRequested() {
			return a.teardown(ctx, al)
		}
		c, err := a.ledger.Contract(ctx, al.GetContractId())
		if err != nil {
			return err
		}
		switch al.GetFlavorType() {
		case fluidos.FlavorType_FLAVOR_TYPE_K8SLICE:
			err = a.provisionSlice(ctx, al, c)
		case fluidos.FlavorType_FLAVOR_TYPE_SERVICE:
			err = a.provisionService(ctx, al, c)
		default:
			err = permanent("%s flavors are not provisionable on this node", strings.TrimPrefix(al.GetFlavorType().String(), "FLAVOR_TYPE_"))
		}
		var pe *permanentError
		if !errors.As(err, &pe) {
			return err
		}
		if err := a.fail(ctx, al, pe.err); err != nil {
			return err
		}
	}
	return nil
}

// fail records why an allocation failed and marks it for teardown: it
// ends ERROR once torn down.
func (a *Allocator) fail(ctx context.Context, al *fluidos.Allocation, cause error) error {
	msg := cause.Error()
	a.log.WarnContext(ctx, "allocation failed; tearing down what it made", "allocation", al.GetId(), "err", msg)
	if _, err := a.setStatus(ctx, al.GetId(), func(cur *fluidos.Allocation) bool {
		cur.Status.Errors = []string{msg}
		return true
	}); err != nil {
		return err
	}
	a.cfg.Metrics.failed(al.GetFlavorType())
	_, err := a.ledger.RequestRelease(ctx, al.GetId(), "provisioning failed: "+msg)
	return err
}

// setStatus changes the allocation's status with fn (which may run more
// than once, on the newest allocation, and says whether it changed
// anything) and stamps the change; an allocation that ended is left as
// it is.
func (a *Allocator) setStatus(ctx context.Context, id string, fn func(al *fluidos.Allocation) bool) (*fluidos.Allocation, error) {
	al, _, err := a.ledger.Allocations().Modify(ctx, id, func(cur *fluidos.Allocation) (bool, error) {
		if ended(cur) {
			return false, nil
		}
		if cur.Status == nil {
			cur.Status = &fluidos.AllocationStatus{}
		}
		if !fn(cur) {
			return false, nil
		}
		cur.Status.LastUpdateTime = timestamppb.Now()
		return true, nil
	})
	return al, err
}

// phase moves a provisioning allocation to state with msg (one being
// released keeps its state).
func (a *Allocator) phase(ctx context.Context, id string, state fluidos.AllocationState, msg string) (*fluidos.Allocation, error) {
	return a.setStatus(ctx, id, func(cur *fluidos.Allocation) bool {
		if cur.GetReleaseRequested() || (cur.Status.State == state && cur.Status.Message == msg) {
			return false
		}
		cur.Status.State, cur.Status.Message = state, msg
		return true
	})
}

// progress mirrors an engine report on an allocation's own object (its
// cluster, its service's instance) into the allocation's task and step
// while the operation runs; both are cleared when it settles.
func (a *Allocator) progress(ctx context.Context, name string, state edgeproto.TrackedState, st *edgeproto.StatusInfo) {
	id, own := ownerOf(name)
	if !own {
		return
	}
	task, step := "", ""
	if edgeproto.IsTransientState(state) {
		task, step = st.GetTaskName(), st.GetStepName()
	}
	if _, err := a.setStatus(ctx, id, func(cur *fluidos.Allocation) bool {
		if cur.Status.Task == task && cur.Status.Step == step {
			return false
		}
		cur.Status.Task, cur.Status.Step = task, step
		return true
	}); err != nil && !errors.Is(err, store.ErrNotFound) {
		a.log.DebugContext(ctx, "recording progress", "allocation", id, "err", err)
	}
}

// kind is how the allocator drives one kind of engine object.
type kind[O store.Object[O]] struct {
	name     string
	objs     *store.Kind[O]
	state    func(O) edgeproto.TrackedState
	errs     func(O) []string
	setState func(O, edgeproto.TrackedState)
}

// withState is a clone of o in state s.
func (k kind[O]) withState(o O, s edgeproto.TrackedState) O {
	o = o.Clone()
	k.setState(o, s)
	return o
}

func (a *Allocator) clusterKind() kind[*edgeproto.ClusterInst] {
	return kind[*edgeproto.ClusterInst]{name: "cluster", objs: a.objs.clusters,
		state: (*edgeproto.ClusterInst).GetState, errs: (*edgeproto.ClusterInst).GetErrors,
		setState: func(c *edgeproto.ClusterInst, s edgeproto.TrackedState) { c.State = s }}
}

func (a *Allocator) instKind() kind[*edgeproto.AppInst] {
	return kind[*edgeproto.AppInst]{name: "app instance", objs: a.objs.insts,
		state: (*edgeproto.AppInst).GetState, errs: (*edgeproto.AppInst).GetErrors,
		setState: func(i *edgeproto.AppInst, s edgeproto.TrackedState) { i.State = s }}
}

// maxSteps bounds the operations ensureReady and ensureGone run for one
// object in one call; more is a failure that may pass.
const maxSteps = 4

// ensureReady makes the object want names exist and be READY: it stores
// it (CREATE_REQUESTED) when absent and runs the operations its state
// asks for. A failed create is a permanent failure, naming the engine's
// errors.
func ensureReady[O store.Object[O]](ctx context.Context, a *Allocator, k kind[O], want O) (O, error) {
	var zero O
	key := want.GetKeyString()
	for range maxSteps {
		cur, _, err := k.objs.Get(ctx, key)
		if errors.Is(err, store.ErrNotFound) {
			if _, err := k.objs.Create(ctx, k.withState(want, edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED)); err != nil && !errors.Is(err, store.ErrAlreadyExists) {
				return zero, err
			}
			continue
		}
		if err != nil {
			return zero, err
		}
		switch s := k.state(cur); s {
		case edgeproto.TrackedState_TRACKED_STATE_READY, edgeproto.TrackedState_TRACKED_STATE_UPDATE_ERROR:
			return cur, nil
		case edgeproto.TrackedState_TRACKED_STATE_CREATE_ERROR:
			return zero, permanent("creating the %s failed: %s", k.name, strings.Join(k.errs(cur), "; "))
		case edgeproto.TrackedState_TRACKED_STATE_DELETE_REQUESTED, edgeproto.TrackedState_TRACKED_STATE_DELETING,
			edgeproto.TrackedState_TRACKED_STATE_DELETE_ERROR:
			return zero, permanent("the %s is being deleted", k.name)
		case edgeproto.TrackedState_TRACKED_STATE_UPDATE_REQUESTED, edgeproto.TrackedState_TRACKED_STATE_UPDATING:
			err = a.run(ctx, key, k.withState(cur, edgeproto.TrackedState_TRACKED_STATE_UPDATE_REQUESTED))
		default: // requested, interrupted, or never submitted
			err = a.run(ctx, key, k.withState(cur, edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED))
		}
		if err != nil {
			return zero, err
		}
	}
	return zero, fmt.Errorf("the %s %s did not settle after %d operations", k.name, key, maxSteps)
}

// ensureGone deletes the object of key through the engine, until the
// store has it no more. A failed delete is a failure that may pass.
func ensureGone[O store.Object[O]](ctx context.Context, a *Allocator, k kind[O], key string) error {
	for range maxSteps {
		cur, _, err := k.objs.Get(ctx, key)
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		if s := k.state(cur); s == edgeproto.TrackedState_TRACKED_STATE_DELETE_ERROR && len(k.errs(cur)) > 0 {
			a.log.InfoContext(ctx, "deleting again after a failed delete", "kind", k.name, "key", key, "err", strings.Join(k.errs(cur), "; "))
		}
		del := k.withState(cur, edgeproto.TrackedState_TRACKED_STATE_DELETE_REQUESTED)
		if k.state(cur) != edgeproto.TrackedState_TRACKED_STATE_DELETE_REQUESTED && k.state(cur) != edgeproto.TrackedState_TRACKED_STATE_DELETING {
			if _, _, err := k.objs.Modify(ctx, key, func(o O) (bool, error) {
				k.setState(o, edgeproto.TrackedState_TRACKED_STATE_DELETE_REQUESTED)
				return true, nil
			}); err != nil && !errors.Is(err, store.ErrNotFound) {
				return err
			}
		}
		if err := a.run(ctx, key, del); err != nil {
			return err
		}
	}
	return fmt.Errorf("the %s %s is still there after %d deletes", k.name, key, maxSteps)
}

// run submits the operation obj's state asks for, unless one for the same
// object is in flight already, and waits for its outcome, which the
// Senders wrote into the store. It fails only when the outcome may not be
// in the store (a report not delivered, the engine stopping) or ctx
// ended.
func (a *Allocator) run(ctx context.Context, key string, obj proto.Message) error {
	ik := string(obj.ProtoReflect().Descriptor().Name()) + "/" + key
	a.mu.Lock()
	h := a.inflight[ik]
	if h == nil {
		var err error
		if h, err = a.eng.Submit(obj); err != nil {
			a.mu.Unlock()
			if errors.Is(err, executor.ErrBadObject) {
				return permanent("%v", err)
			}
			return err
		}
		a.inflight[ik] = h
		go func() {
			<-h.Done()
			a.mu.Lock()
			if a.inflight[ik] == h {
				delete(a.inflight, ik)
			}
			a.mu.Unlock()
		}()
	}
	a.mu.Unlock()
	err := h.Wait(ctx)
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(err, executor.ErrReportFailed), errors.Is(err, executor.ErrStopped), errors.Is(err, executor.ErrSuperseded):
		return err
	}
	return nil
}

// teardown deletes what an allocation made, through the engine (the
// instances, the apps, the cluster; for a service, also the Secrets of its
// credentials in its buyer's slices), then closes its books: RELEASED, or
// ERROR when it failed.
func (a *Allocator) teardown(ctx context.Context, al *fluidos.Allocation) error {
	id := al.GetId()
	start := time.Now()
	// Slice requests that checked the allocation before its release
	// finish first; later ones see it released.
	mu := a.sliceLock(id)
	mu.Lock()
	mu.Unlock() // a barrier, not a critical section
	if _, err := a.setStatus(ctx, id, func(cur *fluidos.Allocation) bool {
		msg := "tearing down: " + cur.GetReleaseReason()
		if cur.Status.Message == msg {
			return false
		}
		cur.Status.Message = msg
		return true
	}); err != nil {
		return err
	}
	for pass := 0; ; pass++ {
		insts, _, err := a.objs.insts.List(ctx)
		if err != nil {
			return err
		}
		var mine []*edgeproto.AppInst
		for _, in := range insts {
			if owner, _ := ownerOf(in.GetKey().GetName()); owner == id || sharedOf(in.GetKey().GetName(), id) {
				mine = append(mine, in)
			}
		}
		if len(mine) == 0 && pass > 0 {
			break
		}
		for _, in := range mine {
			if err := ensureGone(ctx, a, a.instKind(), in.GetKeyString()); err != nil {
				return err
			}
		}
		if err := a.deleteApps(ctx, id); err != nil {
			return err
		}
		if err := a.revokeSlice(ctx, al); err != nil {
			return err
		}
		if err := ensureGone(ctx, a, a.clusterKind(), clusterKey(al).GetKeyString()); err != nil {
			return err
		}
	}
	final, msg := fluidos.AllocationState_ALLOCATION_STATE_RELEASED, "released: "+al.GetReleaseReason()
	if errs := al.GetStatus().GetErrors(); len(errs) > 0 {
		final, msg = fluidos.AllocationState_ALLOCATION_STATE_ERROR, "failed, and torn down: "+errs[0]
	}
	if err := a.ledger.Finish(ctx, id, final, msg); err != nil {
		return err
	}
	a.mu.Lock()
	delete(a.slices, id)
	delete(a.failures, id)
	a.mu.Unlock()
	a.cfg.Metrics.tornDown(al.GetFlavorType(), time.Since(start))
	a.log.InfoContext(ctx, "allocation torn down", "allocation", id, "state", final.String())
	return nil
}

// deleteApps deletes the apps of an allocation from the store (apps are
// the host's: the engine keeps nothing of them).
func (a *Allocator) deleteApps(ctx context.Context, id string) error {
	apps, _, err := a.objs.apps.List(ctx)
	if err != nil {
		return err
	}
	for _, app := range apps {
		if owner, _ := ownerOf(app.GetKey().GetName()); owner == id || sharedOf(app.GetKey().GetName(), id) {
			if _, err := a.objs.apps.Delete(ctx, app.GetKeyString(), nil); err != nil && !errors.Is(err, store.ErrNotFound) {
				return err
			}
		}
	}
	return nil
}

// clusterKey is the key of an allocation's cluster: the allocation's id,
// in the buyer's organization.
func clusterKey(al *fluidos.Allocation) *edgeproto.ClusterInst {
	return &edgeproto.ClusterInst{Key: &edgeproto.ClusterKey{Organization: al.GetBuyer().GetNodeId(), Name: al.GetId()}}
}

// activate records an allocation provisioned: ACTIVE (or back to ACTIVE
// from DEGRADED) with its credentials, objects and message.
func (a *Allocator) activate(ctx context.Context, al *fluidos.Allocation, creds *fluidos.PeeringTargetCredentials, res *fluidos.AllocationResources, msg string) error {
	first := al.GetStatus().GetState() != fluidos.AllocationState_ALLOCATION_STATE_ACTIVE &&
		al.GetStatus().GetState() != fluidos.AllocationState_ALLOCATION_STATE_DEGRADED
	got, err := a.setStatus(ctx, al.GetId(), func(cur *fluidos.Allocation) bool {
		if cur.GetReleaseRequested() {
			return false
		}
		now := time.Now()
		fresh := cur.Status.LastHealthyTime != nil && now.Sub(cur.Status.LastHealthyTime.AsTime()) < a.cfg.HealthInterval
		if cur.Status.State == fluidos.AllocationState_ALLOCATION_STATE_ACTIVE && cur.Status.Message == msg &&
			len(cur.Status.Errors) == 0 && equalCreds(cur.GetCredentials(), creds) && fresh {
			return false
		}
		cur.Status.State, cur.Status.Message, cur.Status.Errors = fluidos.AllocationState_ALLOCATION_STATE_ACTIVE, msg, nil
		cur.Status.LastHealthyTime = timestamppb.New(now)
		cur.Credentials, cur.Resources = creds, res
		return true
	})
	if err != nil {
		return err
	}
	if first && got.GetStatus().GetState() == fluidos.AllocationState_ALLOCATION_STATE_ACTIVE {
		a.cfg.Metrics.active(al.GetFlavorType(), time.Since(al.GetCreatedAt().AsTime()))
		a.log.InfoContext(ctx, "allocation active", "allocation", al.GetId(), "type", al.GetFlavorType().String())
	}
	return nil
}

func equalCreds(x, y *fluidos.PeeringTargetCredentials) bool {
	return x.GetEndpoint() == y.GetEndpoint() && x.GetToken() == y.GetToken() && x.GetKubeconfig() == y.GetKubeconfig() && x.GetUsername() == y.GetUsername() &&
		x.GetPassword() == y.GetPassword() && x.GetClusterId() == y.GetClusterId() && x.GetClusterName() == y.GetClusterName() &&
		x.GetEndpoints() == y.GetEndpoints() && x.GetDatabase() == y.GetDatabase()
}
