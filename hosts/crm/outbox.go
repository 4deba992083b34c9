package crm

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/fieldmap"
	"github.com/edgekit/edgekit/internal/notify"
	notifyv1 "github.com/edgekit/edgekit/proto/edgekit/notify/v1"
)

// infoKind is one kind of Info the CRM reports, kept in a cache.
type infoKind struct {
	name string // "AppInstInfo"
	// phase is the flag of the Info's state: a report changing it starts a
	// new phase of the object, which the outbox never merges with what
	// was reported in the phase before (see outbox). So does a report
	// answering another request than the cached Info (request).
	phase string
	// requestFlag is the flag of the Info's request_id ("" when it has
	// none); request returns the request_id of the cached Info of key (0:
	// none).
	requestFlag string
	request     func(key string) int64
	// partial returns the cached Info of key with only the fields of fm.
	partial func(key string, fm *fieldmap.FieldMap) (notify.Info, bool)
	// gone reports whether the cached Info says its object is gone
	// (DELETE_DONE, NOT_PRESENT), or there is none.
	gone   func(key string) bool
	forget func(key string)
}

func newInfoKind[T interface {
	executor.Object[T]
	notify.Info
}](c *executor.Cache[T], phase string, gone func(T) bool) *infoKind {
	var zero T
	requestFlag, err := zero.FieldSchema().FlagOf("request_id")
	if err != nil {
		requestFlag = ""
	}
	return &infoKind{
		name:        notify.KindOf(zero),
		phase:       phase,
		requestFlag: requestFlag,
		partial: func(key string, fm *fieldmap.FieldMap) (notify.Info, bool) {
			cur, ok := c.Get(key)
			if !ok {
				return nil, false
			}
			out := cur.ProtoReflect().New().Interface().(T)
			out.CopyInFields(cur, fm)
			return out, true
		},
		gone: func(key string) bool {
			cur, ok := c.Get(key)
			return !ok || gone(cur)
		},
		request: func(key string) int64 {
			cur, ok := c.Get(key)
			if !ok {
				return 0
			}
			return requestOf(cur)
		},
		forget: c.Delete,
	}
}

// requestOf is the request_id of an Info, 0 when it has none.
func requestOf(info any) int64 {
	if r, ok := info.(interface{ GetRequestId() int64 }); ok {
		return r.GetRequestId()
	}
	return 0
}

// obEntry is what the outbox holds for one Info.
type obEntry struct {
	kind *infoKind
	key  string
	// queued are reports of earlier phases not sent yet, oldest first:
	// each is the Info as it was when its phase ended, with the flags
	// changed in that phase.
	queued []snapshot
	// pending are the flags changed since the last report sent or queued;
	// nil when none.
	pending *fieldmap.FieldMap
	// seq of the report in flight (0: none), its Info and its flags.
	seq      uint64
	sentInfo notify.Info
	sent     *fieldmap.FieldMap
	// ready: the entry is in the outbox's ready list.
	ready bool
}

// snapshot is a report kept as it was: an Info and the flags it carries.
type snapshot struct {
	info   notify.Info
	fields *fieldmap.FieldMap
}

// maxQueued bounds the reports of earlier phases an entry keeps; past it,
// later changes are merged into one report, as within a phase.
const maxQueued = 16

func (e *obEntry) id() string { return e.kind.name + "/" + e.key }

// waiting: the entry has something to send.
func (e *obEntry) waiting() bool { return e.pending != nil || len(e.queued) > 0 }

// busy: the entry has something to send or in flight.
func (e *obEntry) busy() bool { return e.waiting() || e.seq != 0 }

// requeueSent puts the report in flight back at the front of the queue,
// as it was sent, so that it goes again before anything reported later.
func (e *obEntry) requeueSent() {
	e.queued = append([]snapshot{{info: e.sentInfo, fields: e.sent}}, e.queued...)
	e.seq, e.sentInfo, e.sent = 0, nil, nil
}

// outbox is the CRM's side of report delivery. The engine's reports are
// applied to the Info caches and their flags recorded here; the link sends
// the cached Info of each changed object with the union of the flags
// changed since its last report, one report in flight per object, and
// forgets the flags once the controller acknowledged the report (applied,
// or judged and rejected). A report that was in flight when the stream
// broke, or that the controller could not judge, is sent again, as it was
// and before anything reported after it. So nothing the engine reported is
// lost while the process lives, however long the controller is
// unreachable, and the controller may see a report twice, which applying
// with CopyInFields makes harmless.
//
// Reports are merged only within a phase of an object: a report that
// changes the Info's state while changes of the phase before are still
// unsent first sets those changes aside, as they are, to be sent before it
// (up to maxQueued reports per object). So the controller sees every
// progress message with the state it was reported in, never with a later
// state.
type outbox struct {
	mu       sync.Mutex
	entries  map[string]*obEntry // by id
	ready    []*obEntry
	inflight map[uint64]*obEntry
	seq      uint64
	busy     int           // entries with something to send or in flight
	wake     chan struct{} // receives after an entry became ready
	idle     chan struct{} // closed while busy == 0
	retry    time.Duration
	// exists reports whether the object an Info reports on is still known:
	// the Info of an object gone is forgotten once nothing is left to send.
	exists func(kind, key string) bool
}

func newOutbox(retry time.Duration, exists func(kind, key string) bool) *outbox {
	o := &outbox{entries: map[string]*obEntry{}, inflight: map[uint64]*obEntry{}, wake: make(chan struct{}, 1),
		idle: make(chan struct{}), retry: retry, exists: exists}
	close(o.idle)
	return o
}

// sender returns the engine's Sender of one Info kind: it applies each
// report to the cache and queues its flags.
func sender[T interface {
	executor.Object[T]
	notify.Info
}](o *outbox, c *executor.Cache[T], k *infoKind) executor.Sender[T] {
	return executor.SenderFunc[T](func(_ context.Context, info T, fm *fieldmap.FieldMap) error {
		flags := fm
		if flags == nil {
			flags = topFlags(info.FieldSchema())
		}
		var request int64
		if k.requestFlag != "" && flags.Has(k.requestFlag) {
			request = requestOf(info)
		}
		o.report(k, executor.KeyString(info), flags, request, func() { c.Apply(info, fm) })
		return nil
	})
}

// topFlags is a map of every top-level field of a schema.
func topFlags(s *fieldmap.Schema) *fieldmap.FieldMap {
	fm := s.NewFieldMap()
	for _, f := range s.Fields() {
		if !strings.Contains(f.Flag, ".") {
			fm.Set(f.Flag)
		}
	}
	return fm
}

// change runs fn on e and keeps the count of busy entries and the idle
// channel up to date.
func (o *outbox) change(e *obEntry, fn func()) {
	was := e.busy()
	fn()
	switch now := e.busy(); {
	case now && !was:
		if o.busy == 0 {
			o.idle = make(chan struct{})
		}
		o.busy++
	case was && !now:
		o.busy--
		if o.busy == 0 {
			close(o.idle)
		}
	}
}

// report records a report changing the fields of fm of an Info, which
// apply (when not nil) applies to the cache. When the report starts a new
// phase (it changes the state, or answers another request than the
// cached Info: request, when not 0) and changes of the phase before are
// pending, the cached Info is set aside with their flags before apply
// runs, so that what was reported for one request never goes out with
// the request_id of another.
func (o *outbox) report(k *infoKind, key string, fm *fieldmap.FieldMap, request int64, apply func()) {
	o.mu.Lock()
	defer o.mu.Unlock()
	e := o.entries[k.name+"/"+key]
	if e == nil {
		e = &obEntry{kind: k, key: key}
		o.entries[e.id()] = e
	}
	o.change(e, func() {
		newPhase := k.phase != "" && fm.Has(k.phase) || request != 0 && k.request != nil && request != k.request(key)
		if e.pending != nil && newPhase && len(e.queued) < maxQueued {
			if info, ok := k.partial(key, e.pending); ok {
				e.queued = append(e.queued, snapshot{info: info, fields: e.pending})
				e.pending = nil
			}
		}
		if apply != nil {
			apply()
		}
		e.pending = union(e.pending, fm)
	})
	o.readyLocked(e)
}

// union merges the flags of b into a (a new map when a is nil). List
// actions are dropped: the report carries the cached value of the whole
// field, which already reflects them.
func union(a, b *fieldmap.FieldMap) *fieldmap.FieldMap {
	if a == nil {
		if s := b.Schema(); s != nil {
			a = s.NewFieldMap()
		} else {
			a = fieldmap.Of()
		}
	}
	a.Set(b.Fields()...)
	return a
}

func (o *outbox) readyLocked(e *obEntry) {
	if e.ready || e.seq != 0 || !e.waiting() {
		return
	}
	e.ready = true
	o.ready = append(o.ready, e)
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

// next returns the next report to send, marking it in flight; false when
// none is ready.
func (o *outbox) next() (*notifyv1.Report, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for len(o.ready) > 0 {
		e := o.ready[0]
		o.ready[0] = nil
		o.ready = o.ready[1:]
		e.ready = false
		if !e.waiting() || e.seq != 0 {
			continue
		}
		var (
			info   notify.Info
			fields *fieldmap.FieldMap
			ok     bool
		)
		queued := len(e.queued) > 0
		if queued {
			info, fields, ok = e.queued[0].info, e.queued[0].fields, true
		} else {
			info, ok = e.kind.partial(e.key, e.pending)
			fields = e.pending
		}
		taken := func() {
			if queued {
				e.queued[0] = snapshot{}
				e.queued = e.queued[1:]
			} else {
				e.pending = nil
			}
		}
		var r *notifyv1.Report
		var err error
		if ok {
			r, err = notify.ReportOf(o.seq+1, info, fields)
		}
		if !ok || err != nil { // forgotten meanwhile, or a kind the protocol lacks
			o.change(e, taken)
			o.readyLocked(e)
			o.dropLocked(e)
			continue
		}
		o.seq++
		o.change(e, func() {
			taken()
			e.seq, e.sentInfo, e.sent = o.seq, info, fields
		})
		o.inflight[e.seq] = e
		return r, true
	}
	return nil, false
}

// ack records the controller's verdict on report seq.
func (o *outbox) ack(seq uint64, v notifyv1.Verdict) {
	o.mu.Lock()
	defer o.mu.Unlock()
	e := o.inflight[seq]
	if e == nil {
		return // a report of an earlier stream, sent again since
	}
	delete(o.inflight, seq)
	if v == notifyv1.Verdict_VERDICT_FAILED {
		o.change(e, e.requeueSent)
		time.AfterFunc(o.retry, func() { o.requeue(e) })
		return
	}
	o.change(e, func() { e.seq, e.sentInfo, e.sent = 0, nil, nil })
	o.readyLocked(e)
	o.settleLocked(e)
}

func (o *outbox) requeue(e *obEntry) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.entries[e.id()] == e {
		o.readyLocked(e)
	}
}

// settleLocked forgets an entry with nothing left to send whose object is
// gone, with its cached Info.
func (o *outbox) settleLocked(e *obEntry) {
	if e.busy() {
		return
	}
	if e.kind.gone(e.key) || !o.exists(e.kind.name, e.key) {
		o.dropLocked(e)
		e.kind.forget(e.key)
	}
}

func (o *outbox) dropLocked(e *obEntry) {
	if o.entries[e.id()] == e && !e.busy() {
		delete(o.entries, e.id())
	}
}

// objectGone is told that the object of an Info left the CRM's caches: its
// Info is forgotten once nothing is left to send.
func (o *outbox) objectGone(k *infoKind, key string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if e := o.entries[k.name+"/"+key]; e != nil {
		o.settleLocked(e)
		return
	}
	k.forget(key)
}

// disconnected puts the reports in flight back: they are sent again on the
// next stream.
func (o *outbox) disconnected() {
	o.mu.Lock()
	defer o.mu.Unlock()
	for seq, e := range o.inflight {
		delete(o.inflight, seq)
		o.change(e, e.requeueSent)
		o.readyLocked(e)
	}
}

// idleCh is closed while nothing is pending or in flight.
func (o *outbox) idleCh() <-chan struct{} {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.idle
}

// pending is how many Infos have something to send or in flight.
func (o *outbox) pending() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.busy
}

// trackedGone says whether a tracked Info state reports its object gone.
func trackedGone(s edgeproto.TrackedState) bool {
	return s == edgeproto.TrackedState_TRACKED_STATE_DELETE_DONE || s == edgeproto.TrackedState_TRACKED_STATE_NOT_PRESENT
}
