package notify

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// event is one change of the region, decoded once by the hub and handed
// to every session it concerns.
type event struct {
	kind string        // the store's kind, settingsName or accessKeyKind
	key  string        // the object's key string
	d    *kindDef      // nil for the settings and the access keys
	obj  proto.Message // the object (or the settings); nil for a delete
	rev  int64
	del  bool
}

// hub is one watch of the region shared by the sessions joined to it: it
// decodes each change once and hands it to the sessions whose routing keys
// the change's kind names (route), in revision order. It never blocks on a
// session: a session queues what it is handed (see session.deliver).
type hub struct {
	srv    *Server
	ctx    context.Context
	cancel context.CancelCauseFunc
	ready  chan struct{} // closed once the watch is open, or startErr set
	done   chan struct{} // closed when run returns
	// startErr is why the hub could not start; read after ready is closed.
	startErr error
	// refs counts the sessions that joined and have not left; guarded by
	// srv.mu.
	refs int

	mu     sync.Mutex
	routes map[string]map[*session]struct{} // routing key -> sessions
	ended  error                            // why the hub ended, once it did
	pl     *placements                      // where the placed objects are, at rev
	rev    int64                            // the revision pl and the sessions' deliveries have reached
	// No object of a placed kind was deleted in (clean, rev]: a resumed
	// sync from a revision at or past clean needs not look for deletes in
	// the store. lastDel is the revision of the last such delete the hub
	// dispatched.
	clean, lastDel int64
	advanced       chan struct{} // closed (and replaced) when rev advances
}

// errHubIdle ends a hub whose last session left.
var errHubIdle = errors.New("notify: no session left")

func newHub(srv *Server) *hub {
	ctx, cancel := context.WithCancelCause(context.Background())
	return &hub{srv: srv, ctx: ctx, cancel: cancel, ready: make(chan struct{}), done: make(chan struct{}),
		pl: newPlacements(), advanced: make(chan struct{}), routes: map[string]map[*session]struct{}{}}
}

// join adds sess to the hub once the hub is watching: from then on sess is
// handed every change it concerns of a revision past the hub's start.
func (h *hub) join(sess *session) error {
	select {
	case <-h.ready:
	case <-sess.ctx.Done():
		return context.Cause(sess.ctx)
	}
	if h.startErr != nil {
		return h.startErr
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ended != nil {
		return h.ended
	}
	for _, rk := range sess.routes {
		set := h.routes[rk]
		if set == nil {
			set = map[*session]struct{}{}
			h.routes[rk] = set
		}
		set[sess] = struct{}{}
	}
	return nil
}

// remove takes sess out of the hub's routes.
func (h *hub) remove(sess *session) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, rk := range sess.routes {
		if set := h.routes[rk]; set != nil {
			delete(set, sess)
			if len(set) == 0 {
				delete(h.routes, rk)
			}
		}
	}
}

// run loads where the placed objects are, opens the watch after that
// revision and dispatches its events until the hub is cancelled or the
// watch breaks; a broken watch ends every joined session (Unavailable:
// their CRMs connect again and resynchronise).
func (h *hub) run() {
	defer close(h.done)
	defer func() {
		h.srv.mu.Lock()
		h.srv.watches--
		h.srv.mu.Unlock()
	}()
	rev, err := h.load()
	if err != nil {
		h.startErr = status.Errorf(codes.Unavailable, "reading the region: %v", err)
		h.detach()
		close(h.ready)
		return
	}
	k := h.srv.kinds
	wch := h.srv.cfg.Store.Client().Watch(clientv3.WithRequireLeader(h.ctx), k.prefix, clientv3.WithPrefix(), clientv3.WithRev(rev+1))
	close(h.ready)
	for resp := range wch {
		if err := resp.Err(); err != nil {
			h.fail(status.Errorf(codes.Unavailable, "watching the store: %v; connect again to resynchronise", err))
			return
		}
		h.dispatch(resp.Events)
	}
	if h.ctx.Err() == nil {
		h.fail(status.Error(codes.Unavailable, "the store's watch ended; connect again to resynchronise"))
	}
}

// load reads, at one revision which it returns, where every object of the
// placed kinds is.
func (h *hub) load() (int64, error) {
	k := h.srv.kinds
	cli := h.srv.cfg.Store.Client()
	// Reading the settings fixes the revision even when no kind is placed.
	resp, err := cli.Get(h.ctx, k.settingsPath)
	if err != nil {
		return 0, err
	}
	rev := resp.Header.Revision
	pl := newPlacements()
	for _, d := range k.order {
		if !d.route.placed {
			continue
		}
		resp, err := cli.Get(h.ctx, k.prefix+d.name+"/", clientv3.WithPrefix(), clientv3.WithRev(rev))
		if err != nil {
			return 0, err
		}
		for _, kv := range resp.Kvs {
			_, key, ok := k.split(string(kv.Key))
			if !ok {
				continue
			}
			obj, err := d.decode(key, kv.Value)
			if err != nil {
				// Nobody receives it; its next change places it.
				pl.set(qkey(d.name, key), placed{create: kv.CreateRevision, mod: kv.ModRevision})
				continue
			}
			d.route.keys(pl, d.name, key, obj, false, kv.CreateRevision, kv.ModRevision)
		}
	}
	pl.sort()
	h.mu.Lock()
	h.pl, h.rev, h.clean = pl, rev, rev
	h.mu.Unlock()
	return rev, nil
}

// dispatch decodes the events of one watch response (whole revisions) and
// hands each to the sessions it concerns.
func (h *hub) dispatch(evs []*clientv3.Event) {
	if len(evs) == 0 {
		return
	}
	type decoded struct {
		e      *event
		create int64
		rks    []string // for the kinds without a route
	}
	k := h.srv.kinds
	out := make([]decoded, 0, len(evs))
	for _, ev := range evs {
		kind, key, ok := k.split(string(ev.Kv.Key))
		if !ok {
			continue
		}
		e := &event{kind: kind, key: key, rev: ev.Kv.ModRevision, del: ev.Type == clientv3.EventTypeDelete}
		switch kind {
		case accessKeyKind:
			out = append(out, decoded{e: e, rks: []string{cloudletRoute(key)}})
		case settingsName:
			var val []byte
			if !e.del {
				val = ev.Kv.Value
			}
			st, err := decodeSettings(val)
			if err != nil {
				h.srv.log.LogAttrs(h.ctx, slog.LevelWarn, "undecodable settings skipped", slog.Any("error", err))
				continue
			}
			e.obj = st
			out = append(out, decoded{e: e, rks: []string{allRoute}})
		default:
			d := k.byName[kind]
			if d == nil {
				continue
			}
			e.d = d
			if e.del {
				e.obj, _ = d.stub(key) // nil for a key string of no object
			} else {
				obj, err := d.decode(key, ev.Kv.Value)
				if err != nil {
					h.srv.log.LogAttrs(h.ctx, slog.LevelWarn, "undecodable object skipped", slog.String("kind", kind),
						slog.String("key", key), slog.Any("error", err))
					continue
				}
				e.obj = obj
			}
			out = append(out, decoded{e: e, create: ev.Kv.CreateRevision})
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, o := range out {
		e, rks := o.e, o.rks
		if e.d != nil {
			rks = e.d.route.keys(h.pl, e.kind, e.key, e.obj, e.del, o.create, e.rev)
			if e.del && e.d.route.placed {
				h.lastDel, h.clean = e.rev, max(h.clean, e.rev)
			}
		}
		for i, rk := range rks {
			if i > 0 && rks[0] == rk {
				continue // an object changed in place: one routing key twice
			}
			for sess := range h.routes[rk] {
				sess.deliver(e)
			}
		}
	}
	if last := evs[len(evs)-1].Kv.ModRevision; last > h.rev {
		h.rev = last
		close(h.advanced)
		h.advanced = make(chan struct{})
	}
}

// errHubBehind ends a stream whose sync would read a revision the hub has
// not reached in time.
var errHubBehind = errors.New("the controller's watch of the region is behind the store")

// waitRev waits until the hub has dispatched revision rev, at most
// timeout.
func (h *hub) waitRev(ctx context.Context, rev int64, timeout time.Duration) error {
	t := time.NewTimer(timeout)
	defer t.Stop()
	for {
		h.mu.Lock()
		reached, ch := h.rev >= rev, h.advanced
		h.mu.Unlock()
		if reached {
			return nil
		}
		select {
		case <-ch:
		case <-t.C:
			return fmt.Errorf("%w: revision %d not reached in %v", errHubBehind, rev, timeout)
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-h.done:
			return errHubIdle
		}
	}
}

// onCloudlet returns the revision the hub has reached and the queue keys
// of the placed objects on cloudlet ck at that revision. A session that
// joined the hub before the call is handed every change past that
// revision.
func (h *hub) onCloudlet(ck string) (int64, []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	keys := make([]string, 0, len(h.pl.on[ck]))
	for qk := range h.pl.on[ck] {
		keys = append(keys, qk)
	}
	return h.rev, keys
}

// resumeView is what a resumed sync of the session of cloudlet ck from
// revision from needs of the hub, at the revision rev the hub has reached:
// the placed objects on the cloudlet, those that changed since from
// elsewhere (they may have left the cloudlet), and how many objects of the
// placed kinds existed at from and still do (created at or before it).
type resumeView struct {
	rev     int64
	clean   int64 // no object of a placed kind was deleted in (clean, rev]
	on      []string
	changed []string
	kept    int64
	// gone are, of keys (the keys of the placed kinds at from, when
	// given), those deleted since or created again.
	gone []string
}

func (h *hub) resumeView(ck string, from int64, keysAtFrom []string) resumeView {
	h.mu.Lock()
	defer h.mu.Unlock()
	v := resumeView{rev: h.rev, clean: h.clean}
	for qk := range h.pl.on[ck] {
		v.on = append(v.on, qk)
	}
	// What was created or changed since from, not every object.
	v.kept = int64(len(h.pl.byKey))
	h.pl.since(h.pl.creates, from, func(p placed, rev int64) bool { return p.create == rev }, func(string, placed) { v.kept-- })
	h.pl.since(h.pl.mods, from, func(p placed, rev int64) bool { return p.mod == rev }, func(qk string, p placed) {
		if !p.on(ck) {
			v.changed = append(v.changed, qk)
		}
	})
	for _, qk := range keysAtFrom {
		if p, ok := h.pl.byKey[qk]; !ok || p.create > from {
			v.gone = append(v.gone, qk)
		}
	}
	return v
}

// markClean records that no object of a placed kind was deleted in (from,
// rev] (a resumed sync counted the keys at from): unless the hub has
// dispatched a delete past rev since, later resumed syncs from from or
// later need not count them again.
func (h *hub) markClean(from, rev int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.lastDel <= rev {
		h.clean = min(h.clean, from)
	}
}

// fail ends the hub and every session joined to it with err.
func (h *hub) fail(err error) {
	h.detach()
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ended = err
	for sess := range h.routes[allRoute] {
		sess.cancel(err)
	}
}

// detach makes the server start a new hub for the sessions that come next.
func (h *hub) detach() {
	h.srv.mu.Lock()
	defer h.srv.mu.Unlock()
	if h.srv.hub == h {
		h.srv.hub = nil
	}
}

// join joins sess to the server's hub, starting one when there is none
// (or, with Config.WatchPerSession, one for sess alone).
func (s *Server) join(sess *session) (*hub, error) {
	s.mu.Lock()
	h := s.hub
	if h == nil || s.cfg.WatchPerSession {
		h = newHub(s)
		s.watches++
		if !s.cfg.WatchPerSession {
			s.hub = h
		}
		go h.run()
	}
	h.refs++
	s.mu.Unlock()
	if err := h.join(sess); err != nil {
		s.leave(h, sess)
		return nil, err
	}
	return h, nil
}

// leave takes sess out of h, and stops h when sess was its last session.
func (s *Server) leave(h *hub, sess *session) {
	h.remove(sess)
	s.mu.Lock()
	h.refs--
	last := h.refs == 0
	if last && s.hub == h {
		s.hub = nil
	}
	s.mu.Unlock()
	if last {
		h.cancel(errHubIdle)
		<-h.done
	}
}
