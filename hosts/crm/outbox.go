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
}](c *executor.Cache[T], gone func(T) bool) *infoKind {
	var zero T
	return &infoKind{
		name: notify.KindOf(zero),
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
		forget: c.Delete,
	}
}

// obEntry is what the outbox holds for one Info.
type obEntry struct {
	kind *infoKind
	key  string
	// pending are the flags changed since the last report sent; nil when
	// none.
	pending *fieldmap.FieldMap
	// seq of the report in flight (0: none) and its flags.
	seq  uint64
	sent *fieldmap.FieldMap
	// ready: the entry is in the outbox's ready list.
	ready bool
}

func (e *obEntry) id() string { return e.kind.name + "/" + e.key }

// busy: the entry has something to send or in flight.
func (e *obEntry) busy() bool { return e.pending != nil || e.seq != 0 }

// outbox is the CRM's side of report delivery. The engine's reports are
// applied to the Info caches and their flags recorded here; the link sends
// the cached Info of each changed object with the union of the flags
// changed since its last report, one report in flight per object, and
// forgets the flags once the controller acknowledged the report (applied,
// or judged and rejected). A report that was in flight when the stream
// broke, or that the controller could not judge, is sent again. So nothing
// the engine reported is lost while the process lives, however long the
// controller is unreachable, and the controller may see a report twice,
// which applying with CopyInFields makes harmless.
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
		c.Apply(info, fm)
		if fm == nil {
			fm = topFlags(info.FieldSchema())
		}
		o.mark(k, executor.KeyString(info), fm)
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

// mark records that the fields of fm of an Info changed.
func (o *outbox) mark(k *infoKind, key string, fm *fieldmap.FieldMap) {
	o.mu.Lock()
	defer o.mu.Unlock()
	e := o.entries[k.name+"/"+key]
	if e == nil {
		e = &obEntry{kind: k, key: key}
		o.entries[e.id()] = e
	}
	o.change(e, func() { e.pending = union(e.pending, fm) })
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
	if e.ready || e.seq != 0 || e.pending == nil {
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
		if e.pending == nil || e.seq != 0 {
			continue
		}
		info, ok := e.kind.partial(e.key, e.pending)
		var r *notifyv1.Report
		var err error
		if ok {
			r, err = notify.ReportOf(o.seq+1, info, e.pending)
		}
		if !ok || err != nil { // forgotten meanwhile, or a kind the protocol lacks
			o.change(e, func() { e.pending = nil })
			o.dropLocked(e)
			continue
		}
		o.seq++
		o.change(e, func() { e.seq, e.sent, e.pending = o.seq, e.pending, nil })
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
		o.change(e, func() { e.seq, e.pending, e.sent = 0, union(e.pending, e.sent), nil })
		time.AfterFunc(o.retry, func() { o.requeue(e) })
		return
	}
	o.change(e, func() { e.seq, e.sent = 0, nil })
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
		o.change(e, func() { e.seq, e.pending, e.sent = 0, union(e.pending, e.sent), nil })
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
