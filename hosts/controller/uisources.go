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
// (see rowMessage).
func (c *Controller) UISources() []ui.Source {
	return []ui.Source{
		trackedSource(c.cloudlets, func(cl *edgeproto.Cloudlet) string { return cl.GetPlatformType() }),
		trackedSource(c.clusters, func(ci *edgeproto.ClusterInst) string { return cloudletKeyString(ci.GetCloudletKey()) }),
		trackedSource(c.appInsts, func(ai *edgeproto.AppInst) string {
			return cloudletKeyString(ai.GetCloudletKey()) + " / " + (&edgeproto.ClusterInst{Key: ai.GetClusterKey()}).GetKeyString()
		}),
	}
}

// trackedSource follows the objects of tk and their Infos through two
// watch-fed caches and emits one row per object.
func trackedSource[T store.Object[T], I store.Object[I]](tk *tracked[T, I], where func(T) string) ui.Source {
	return ui.SourceFunc(func(ctx context.Context, out ui.Emitter) error {
		var (
			mu    sync.Mutex
			objs  = map[string]T{}
			infos = map[string]I{}
		)
		emit := func(key string) {
			obj, ok := objs[key]
			if !ok {
				out.Delete(tk.name, key)
				return
			}
			row := ui.Row{Kind: tk.name, Key: key, Org: tk.owner(obj), State: stateName(tk.state(obj)),
				Where: where(obj), Errors: objErrors(obj)}
			var st *edgeproto.StatusInfo
			if info, ok := infos[key]; ok {
				st = tk.status(info)
			}
			row.Message = rowMessage(tk.state(obj), st)
			out.Put(row)
		}
		objCache := store.NewCache(tk.store, store.OnEvent(func(ev store.Event[T]) {
			mu.Lock()
			defer mu.Unlock()
			switch ev.Type {
			case store.EventPut:
				objs[ev.Key] = ev.Object
			case store.EventDelete:
				delete(objs, ev.Key)
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
				infos[ev.Key] = ev.Object
			case store.EventDelete:
				delete(infos, ev.Key)
			default:
				return
			}
			if _, ok := objs[ev.Key]; ok {
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
