package allocator

import (
	"context"
	"errors"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/fieldmap"
	"github.com/edgekit/edgekit/internal/store"
)

// objects are the engine's objects of the node, in its store: what the
// allocator wants (ClusterInst, App, AppInst: the host's side) and what
// the engine reported (ClusterInstInfo, AppInstInfo).
type objects struct {
	st           *store.Store
	clusters     *store.Kind[*edgeproto.ClusterInst]
	apps         *store.Kind[*edgeproto.App]
	insts        *store.Kind[*edgeproto.AppInst]
	clusterInfos *store.Kind[*edgeproto.ClusterInstInfo]
	instInfos    *store.Kind[*edgeproto.AppInstInfo]
}

func newObjects(st *store.Store) *objects {
	return &objects{
		st:           st,
		clusters:     store.NewKind[*edgeproto.ClusterInst](st),
		apps:         store.NewKind[*edgeproto.App](st),
		insts:        store.NewKind[*edgeproto.AppInst](st),
		clusterInfos: store.NewKind[*edgeproto.ClusterInstInfo](st),
		instInfos:    store.NewKind[*edgeproto.AppInstInfo](st),
	}
}

// lookups are the engine's Getters and Listers over the store, and the
// node's one cloudlet.
func (o *objects) lookups(cloudlet *edgeproto.Cloudlet) executor.Objects {
	return executor.Objects{
		Cloudlets: executor.GetterFunc[*edgeproto.CloudletKey, *edgeproto.Cloudlet](func(_ context.Context, k *edgeproto.CloudletKey) (*edgeproto.Cloudlet, error) {
			if executor.KeyString(k) != executor.KeyString(cloudlet.GetKey()) {
				return nil, executor.NotFound("Cloudlet", executor.KeyString(k))
			}
			return cloudlet.Clone(), nil
		}),
		ClusterInsts:   getter[*edgeproto.ClusterKey](o.clusters),
		Apps:           getter[*edgeproto.AppKey](o.apps),
		AppInsts:       getter[*edgeproto.AppInstKey](o.insts),
		ClusterInstsOn: lister(o.clusters),
		AppInstsOn:     lister(o.insts),
	}
}

// getter reads one kind from the store: a missing object is the engine's
// not-found, anything else that fails is "could not tell".
func getter[K proto.Message, V store.Object[V]](k *store.Kind[V]) executor.Getter[K, V] {
	return executor.GetterFunc[K, V](func(ctx context.Context, key K) (V, error) {
		ks := executor.KeyString(key)
		v, _, err := k.Get(ctx, ks)
		if errors.Is(err, store.ErrNotFound) {
			var zero V
			return zero, executor.NotFound(k.Name(), ks)
		}
		return v, err
	})
}

// lister lists one kind: every object of the node is on its one cloudlet.
func lister[V store.Object[V]](k *store.Kind[V]) executor.Lister[V] {
	return executor.ListerFunc[V](func(ctx context.Context, _ *edgeproto.CloudletKey) ([]V, error) {
		vs, _, err := k.List(ctx)
		return vs, err
	})
}

// tracked is what applying a report needs to know of one kind of object
// and its Info.
type tracked[I store.Object[I], O store.Object[O]] struct {
	infos *store.Kind[I]
	objs  *store.Kind[O]
	state func(I) edgeproto.TrackedState
	// mirror sets the object's state (and what goes with it) from info.
	mirror func(obj O, info I, state edgeproto.TrackedState)
}

// apply applies a partial report to the stored Info of an object and
// mirrors its state onto the object, in one store transaction, as a
// controller would: the next operation, and Reconcile, read the state the
// engine reported. What did not change is not written. An object reported
// DELETE_DONE is deleted with its Info. When interrupted is set (the node stops), an error state is
// mirrored as the request it failed, so that the next start runs it
// again. It returns the Info as stored.
func (t *tracked[I, O]) apply(ctx context.Context, st *store.Store, info I, fm *fieldmap.FieldMap, interrupted bool) (I, error) {
	var out I
	_, err := st.Txn(ctx, func(tx *store.Tx) error {
		key := info.GetKeyString()
		cur, ok, err := t.infos.TxGet(tx, key)
		if err != nil {
			return err
		}
		changed := 1
		if ok {
			changed = cur.CopyInFields(info, fm)
		} else {
			cur = info.Clone()
		}
		out = cur
		state := t.state(cur)
		if state == edgeproto.TrackedState_TRACKED_STATE_DELETE_DONE {
			t.infos.TxDelete(tx, key)
			t.objs.TxDelete(tx, key)
			return nil
		}
		if changed > 0 {
			if err := t.infos.TxPut(tx, cur); err != nil {
				return err
			}
		}
		obj, ok, err := t.objs.TxGet(tx, key)
		if err != nil || !ok {
			return err
		}
		if interrupted {
			state = retried(state)
		}
		before := obj.Clone()
		t.mirror(obj, cur, state)
		if proto.Equal(before, obj) {
			return nil
		}
		return t.objs.TxPut(tx, obj)
	})
	return out, err
}

// retried is the request an error state failed: what the next start runs
// again when the failure was the node stopping.
func retried(s edgeproto.TrackedState) edgeproto.TrackedState {
	switch s {
	case edgeproto.TrackedState_TRACKED_STATE_CREATE_ERROR:
		return edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED
	case edgeproto.TrackedState_TRACKED_STATE_UPDATE_ERROR:
		return edgeproto.TrackedState_TRACKED_STATE_UPDATE_REQUESTED
	case edgeproto.TrackedState_TRACKED_STATE_DELETE_ERROR:
		return edgeproto.TrackedState_TRACKED_STATE_DELETE_REQUESTED
	}
	return s
}

func (o *objects) clusterTracked() *tracked[*edgeproto.ClusterInstInfo, *edgeproto.ClusterInst] {
	return &tracked[*edgeproto.ClusterInstInfo, *edgeproto.ClusterInst]{
		infos: o.clusterInfos, objs: o.clusters,
		state: (*edgeproto.ClusterInstInfo).GetState,
		mirror: func(c *edgeproto.ClusterInst, i *edgeproto.ClusterInstInfo, s edgeproto.TrackedState) {
			c.State, c.Errors = s, i.GetErrors()
			if i.GetResources() != nil {
				c.Resources = i.GetResources().Clone()
			}
		},
	}
}

func (o *objects) instTracked() *tracked[*edgeproto.AppInstInfo, *edgeproto.AppInst] {
	return &tracked[*edgeproto.AppInstInfo, *edgeproto.AppInst]{
		infos: o.instInfos, objs: o.insts,
		state: (*edgeproto.AppInstInfo).GetState,
		mirror: func(a *edgeproto.AppInst, i *edgeproto.AppInstInfo, s edgeproto.TrackedState) {
			a.State, a.Errors = s, i.GetErrors()
			if p := i.GetPowerState(); p != edgeproto.PowerState_POWER_STATE_UNSPECIFIED {
				a.PowerState = p
			}
			a.Uri = i.GetUri()
		},
	}
}

// ownerOf is the allocation an engine object belongs to: the name of its
// key up to the first ".", and whether the object is the allocation's own
// (a slice's cluster, a service's app instance), not a buyer's instance
// on a slice.
func ownerOf(name string) (id string, own bool) {
	id, _, found := strings.Cut(name, ".")
	return id, !found
}
