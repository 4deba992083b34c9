package controller

import (
	"context"
	"strings"
	"sync"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/hosts/controller/ui"
	"github.com/edgekit/edgekit/internal/store"
)

// Sees implements ui.Viewer: a principal sees on the status page what it
// may see through the API.
func (p Principal) Sees(org string) bool { return p.owns(org) }

// UIAuthenticator checks status page logins against the API's tokens.
func (c *Controller) UIAuthenticator() ui.Authenticator {
	return func(token string) (ui.Viewer, bool) {
		p, ok := c.tokens.Lookup(token)
		if !ok || p.CCRM {
			return nil, false
		}
		return p, true
	}
}

// UISources returns the status page's sources of the controller's
// objects: cloudlets, clusters and application instances, each with its
// state, where it runs, errors and the message that goes with its state
// (see rowMessage); and the active alerts (see alertUISource).
func (c *Controller) UISources() []ui.Source {
	return []ui.Source{
		trackedSource(c.cloudlets, func(cl *edgeproto.Cloudlet) string { return cl.GetPlatformType() }),
		trackedSource(c.clusters, func(ci *edgeproto.ClusterInst) string { return cloudletKeyString(ci.GetCloudletKey()) }),
		trackedSource(c.appInsts, func(ai *edgeproto.AppInst) string {
			return cloudletKeyString(ai.GetCloudletKey()) + " / " + (&edgeproto.ClusterInst{Key: ai.GetClusterKey()}).GetKeyString()
		}),
		c.alertUISource(),
	}
}

// trackedSource follows the objects of tk and their Infos through two
// watch-fed caches and emits one row per object.
func trackedSource[T store.Object[T], I store.Object[I]](tk *tracked[T, I], where func(T) string) ui.Source {
	return ui.SourceFunc(func(ctx context.Context, out ui.Emitter) error {
		var mu sync.Mutex
		book := newRowBook(rowSpec[T, I]{kind: tk.name, owner: tk.owner, state: tk.state, status: tk.status, where: where})
		emit := func(key string) {
			if row, ok := book.row(key); ok {
				out.Put(row)
			} else {
				out.Delete(tk.name, key)
			}
		}
		objCache := store.NewCache(tk.store, store.OnEvent(func(ev store.Event[T]) {
			mu.Lock()
			defer mu.Unlock()
			switch ev.Type {
			case store.EventPut:
				book.putObject(ev.Key, ev.Object, ev.Rev)
			case store.EventDelete:
				book.deleteObject(ev.Key)
			default:
				return
			}
			emit(ev.Key)
		}))
		infoCache := store.NewCache(tk.info, store.OnEvent(func(ev store.Event[I]) {
			mu.Lock()
			defer mu.Unlock()
			switch ev.Type {
			case store.EventPut:
				book.putInfo(ev.Key, ev.Object, ev.Rev)
			case store.EventDelete:
				book.deleteInfo(ev.Key)
			default:
				return
			}
			if book.has(ev.Key) {
				emit(ev.Key)
			}
		}))
		var wg sync.WaitGroup
		errs := make([]error, 2)
		wg.Go(func() { errs[0] = objCache.Start(ctx) })
		wg.Go(func() { errs[1] = infoCache.Start(ctx) })
		wg.Wait()
		if errs[0] != nil {
			return errs[0]
		}
		return errs[1]
	})
}

// rowSpec says how to show objects of type T with their Infos of type I.
type rowSpec[T, I any] struct {
	kind   string
	owner  func(T) string
	state  func(T) edgeproto.TrackedState
	status func(I) *edgeproto.StatusInfo
	where  func(T) string
}

// rowBook holds the objects of one kind and their Infos as two watches
// deliver them, each with the store revision it was written at, and
// builds their rows. The watches are independent: an object and its Info
// written in one transaction may arrive in either order.
type rowBook[T store.Object[T], I store.Object[I]] struct {
	spec     rowSpec[T, I]
	objs     map[string]T
	objRevs  map[string]int64
	infos    map[string]I
	infoRevs map[string]int64
}

func newRowBook[T store.Object[T], I store.Object[I]](spec rowSpec[T, I]) *rowBook[T, I] {
	return &rowBook[T, I]{spec: spec, objs: map[string]T{}, objRevs: map[string]int64{}, infos: map[string]I{}, infoRevs: map[string]int64{}}
}

func (b *rowBook[T, I]) putObject(key string, obj T, rev int64) {
	b.objs[key], b.objRevs[key] = obj, rev
}

func (b *rowBook[T, I]) deleteObject(key string) {
	delete(b.objs, key)
	delete(b.objRevs, key)
}

func (b *rowBook[T, I]) putInfo(key string, info I, rev int64) {
	b.infos[key], b.infoRevs[key] = info, rev
}

func (b *rowBook[T, I]) deleteInfo(key string) {
	delete(b.infos, key)
	delete(b.infoRevs, key)
}

func (b *rowBook[T, I]) has(key string) bool {
	_, ok := b.objs[key]
	return ok
}

// row is the row of the object of key; false when there is no object.
func (b *rowBook[T, I]) row(key string) (ui.Row, bool) {
	obj, ok := b.objs[key]
	if !ok {
		return ui.Row{}, false
	}
	state := b.spec.state(obj)
	var st *edgeproto.StatusInfo
	if info, ok := b.infos[key]; ok {
		st = b.spec.status(info)
		// A request resets the Info's progress in the transaction that
		// moves the object to *_REQUESTED: until the Info of that
		// revision arrives, the one known is the last change's.
		if edgeproto.IsRequestedState(state) && b.infoRevs[key] < b.objRevs[key] {
			st = nil
		}
	}
	return ui.Row{Kind: b.spec.kind, Key: key, Org: b.spec.owner(obj), State: stateName(state), Where: b.spec.where(obj),
		Errors: objErrors(obj), Message: rowMessage(state, st)}, true
}

// rowMessage is the message that goes with an object in state: while a
// change runs, the newest progress message of its Info; once the object
// rests, what its state means, since the progress of the change that
// brought it there ("Creating ClusterInst: Reserving port range" on a
// READY cluster) is history by then.
func rowMessage(state edgeproto.TrackedState, st *edgeproto.StatusInfo) string {
	switch state {
	case edgeproto.TrackedState_TRACKED_STATE_READY:
		return "ready"
	case edgeproto.TrackedState_TRACKED_STATE_CREATE_ERROR:
		return "create failed"
	case edgeproto.TrackedState_TRACKED_STATE_UPDATE_ERROR:
		return "update failed"
	case edgeproto.TrackedState_TRACKED_STATE_DELETE_ERROR:
		return "delete failed"
	}
	if !edgeproto.IsTransientState(state) {
		return ""
	}
	if m := latestMessage(st); m != "" {
		return m
	}
	switch state {
	case edgeproto.TrackedState_TRACKED_STATE_CREATE_REQUESTED:
		return "create requested"
	case edgeproto.TrackedState_TRACKED_STATE_UPDATE_REQUESTED:
		return "update requested"
	case edgeproto.TrackedState_TRACKED_STATE_DELETE_REQUESTED:
		return "delete requested"
	}
	return ""
}

// latestMessage is the newest progress message of a status, with its
// task for context.
func latestMessage(st *edgeproto.StatusInfo) string {
	if st == nil {
		return ""
	}
	msgs := st.GetMsgs()
	if len(msgs) == 0 {
		return ""
	}
	last := msgs[len(msgs)-1]
	if st.GetTaskName() != "" && st.GetTaskName() != last && !strings.HasPrefix(last, st.GetTaskName()) {
		return st.GetTaskName() + ": " + last
	}
	return last
}
