package controller

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

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
// (see rowMessage), its links, and for its page its redacted fields and
// Info and its recent history (see ui.History); the Apps; and the active
// alerts (see alertUISource).
func (c *Controller) UISources() []ui.Source {
	return []ui.Source{
		trackedSource(c.cloudlets, rowSpec[*edgeproto.Cloudlet, *edgeproto.CloudletInfo]{
			where: func(cl *edgeproto.Cloudlet) string { return cl.GetPlatformType() },
			fill:  fillCloudletRow,
		}),
		trackedSource(c.clusters, rowSpec[*edgeproto.ClusterInst, *edgeproto.ClusterInstInfo]{
			where: func(ci *edgeproto.ClusterInst) string { return cloudletKeyString(ci.GetCloudletKey()) },
			fill: func(ci *edgeproto.ClusterInst, _ *edgeproto.ClusterInstInfo, r *ui.Row) {
				r.Name = ci.GetKey().GetName()
				r.Cloudlet = cloudletKeyString(ci.GetCloudletKey())
				r.Created = ci.GetCreatedAt().AsTime()
				r.Links = []ui.Link{{Rel: "cloudlet", Kind: "Cloudlet", Key: r.Cloudlet}}
			},
		}),
		trackedSource(c.appInsts, rowSpec[*edgeproto.AppInst, *edgeproto.AppInstInfo]{
			where: func(ai *edgeproto.AppInst) string {
				return cloudletKeyString(ai.GetCloudletKey()) + " / " + (&edgeproto.ClusterInst{Key: ai.GetClusterKey()}).GetKeyString()
			},
			fill: func(ai *edgeproto.AppInst, _ *edgeproto.AppInstInfo, r *ui.Row) {
				r.Name = ai.GetKey().GetName()
				r.Cloudlet = cloudletKeyString(ai.GetCloudletKey())
				r.Created = ai.GetCreatedAt().AsTime()
				if p := ai.GetPowerState(); p != edgeproto.PowerState_POWER_STATE_UNSPECIFIED {
					r.Power = strings.TrimPrefix(p.String(), "POWER_STATE_")
				}
				r.Links = []ui.Link{
					{Rel: "cloudlet", Kind: "Cloudlet", Key: r.Cloudlet},
					{Rel: "cluster", Kind: "ClusterInst", Key: (&edgeproto.ClusterInst{Key: ai.GetClusterKey()}).GetKeyString()},
					{Rel: "app", Kind: "App", Key: (&edgeproto.App{Key: ai.GetAppKey()}).GetKeyString()},
				}
			},
		}),
		appSource(c.apps),
		c.alertUISource(),
	}
}

// fillCloudletRow puts a cloudlet's location and its usage (from its
// resource manager's latest snapshot, against the cloudlet's quotas) in
// its row.
func fillCloudletRow(cl *edgeproto.Cloudlet, info *edgeproto.CloudletInfo, r *ui.Row) {
	r.Name = cl.GetKey().GetName()
	r.Cloudlet = cl.GetKeyString()
	r.Created = cl.GetCreatedAt().AsTime()
	if loc := cl.GetLocation(); loc != nil && (loc.GetLatitude() != 0 || loc.GetLongitude() != 0) {
		r.Location = &ui.Location{Latitude: loc.GetLatitude(), Longitude: loc.GetLongitude()}
	}
	quotas := map[string]uint64{}
	for _, q := range cl.GetResourceQuotas() {
		quotas[q.GetName()] = q.GetValue()
	}
	seen := map[string]bool{}
	for _, res := range info.GetResourcesSnapshot().GetInfo() {
		q := res.GetQuota()
		if q == 0 {
			q = quotas[res.GetName()]
		}
		seen[res.GetName()] = true
		r.Usage = append(r.Usage, ui.Usage{Name: res.GetName(), Used: res.GetUsed(), Quota: q, Total: res.GetTotal(), Units: res.GetUnits()})
	}
	for _, q := range cl.GetResourceQuotas() {
		if !seen[q.GetName()] {
			r.Usage = append(r.Usage, ui.Usage{Name: q.GetName(), Quota: q.GetValue(), Units: resourceUnits[q.GetName()]})
		}
	}
}

// trackedSource follows the objects of tk and their Infos through two
// watch-fed caches and emits one row per object, with its detail and
// history.
func trackedSource[T store.Object[T], I store.Object[I]](tk *tracked[T, I], spec rowSpec[T, I]) ui.Source {
	spec.kind, spec.owner, spec.state, spec.status = tk.name, tk.owner, tk.state, tk.status
	spec.request, spec.infoRequest, spec.infoErrors = tk.request, tk.infoRequest, tk.errors
	return ui.SourceFunc(func(ctx context.Context, out ui.Emitter) error {
		var mu sync.Mutex
		book := newRowBook(spec)
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
	kind        string
	owner       func(T) string
	state       func(T) edgeproto.TrackedState
	status      func(I) *edgeproto.StatusInfo
	request     func(T) int64
	infoRequest func(I) int64
	infoErrors  func(I) []string
	where       func(T) string
	// fill adds what the kind shows beyond the common columns (name,
	// cloudlet, links...); info is the zero I when there is none.
	fill func(obj T, info I, r *ui.Row)
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
	// history is each object's recent operations, fed by the object and
	// Info writes the watches deliver; dropped with the object.
	history map[string]*ui.History
}

func newRowBook[T store.Object[T], I store.Object[I]](spec rowSpec[T, I]) *rowBook[T, I] {
	return &rowBook[T, I]{spec: spec, objs: map[string]T{}, objRevs: map[string]int64{}, infos: map[string]I{}, infoRevs: map[string]int64{},
		history: map[string]*ui.History{}}
}

func (b *rowBook[T, I]) putObject(key string, obj T, rev int64) {
	b.objs[key], b.objRevs[key] = obj, rev
	state := b.spec.state(obj)
	b.historyOf(key).State(time.Now(), b.spec.request(obj), stateName(state), edgeproto.IsErrorState(state), objErrors(obj))
}

func (b *rowBook[T, I]) deleteObject(key string) {
	delete(b.objs, key)
	delete(b.objRevs, key)
	delete(b.history, key)
}

func (b *rowBook[T, I]) putInfo(key string, info I, rev int64) {
	b.infos[key], b.infoRevs[key] = info, rev
	if !b.has(key) {
		return
	}
	st := b.spec.status(info)
	total := int(st.GetMsgCount())
	b.historyOf(key).Progress(time.Now(), b.spec.infoRequest(info), st.GetTaskName(), st.GetMsgs(), total, b.spec.infoErrors(info))
}

func (b *rowBook[T, I]) historyOf(key string) *ui.History {
	h, ok := b.history[key]
	if !ok {
		h = ui.NewHistory(0, 0)
		b.history[key] = h
	}
	return h
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
	info, hasInfo := b.infos[key]
	r := ui.Row{Kind: b.spec.kind, Key: key, Org: b.spec.owner(obj), State: stateName(state), Where: b.spec.where(obj),
		Errors: objErrors(obj), Message: rowMessage(state, st),
		Detail: &ui.Detail{Fields: redactedJSON(obj), History: b.historyOf(key).Operations()}}
	if hasInfo {
		r.Detail.Info = redactedJSON(info)
	}
	if b.spec.fill != nil {
		b.spec.fill(obj, info, &r)
	}
	if r.Created.Equal(time.Unix(0, 0).UTC()) {
		r.Created = time.Time{}
	}
	return r, true
}

// redactedJSON is msg as JSON with its debug_redact fields cleared; nil
// when msg cannot be redacted (never shown, rather than shown whole).
func redactedJSON(msg proto.Message) json.RawMessage {
	c := proto.Clone(msg)
	r, ok := c.(interface{ Redact() })
	if !ok {
		return nil
	}
	r.Redact()
	data, err := protojson.MarshalOptions{EmitUnpopulated: false}.Marshal(c)
	if err != nil {
		return nil
	}
	return data
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

// appSource emits a row per App, so that an instance's page links to its
// App's: the App's redacted fields (secret environment values cleared),
// no state (an App has no lifecycle).
func appSource(k *kind[*edgeproto.App]) ui.Source {
	return ui.SourceFunc(func(ctx context.Context, out ui.Emitter) error {
		cache := store.NewCache(k.store, store.OnEvent(func(ev store.Event[*edgeproto.App]) {
			switch ev.Type {
			case store.EventPut:
				app := ev.Object
				r := ui.Row{Kind: k.name, Key: ev.Key, Org: k.owner(app), Name: app.GetKey().GetName(),
					Where: app.GetDeployment(), Detail: &ui.Detail{Fields: redactedJSON(app)}}
				if t := app.GetCreatedAt(); t != nil {
					r.Created = t.AsTime()
				}
				out.Put(r)
			case store.EventDelete:
				out.Delete(k.name, ev.Key)
			}
		}))
		return cache.Start(ctx)
	})
}
