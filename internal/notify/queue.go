package notify

import (
	"container/list"
	"errors"
	"sync"
)

// ErrQueueFull says that a Queue holds its maximum number of items: the
// receiver reads too slowly and the stream must end (the CRM connects again
// and resynchronises).
var ErrQueueFull = errors.New("notify: send queue full")

// Queue is the send queue of one stream: FIFO, bounded, and coalescing by
// key, so that a slow receiver costs at most one queued item per object
// however often the object changes.
//
// Put of a key already queued replaces the queued value. An unpinned item
// moves to the back, so the queue stays in the order of the values' own
// revisions (each key's latest change, in the place of that change). A
// pinned item (one of the initial synchronisation, queued before its end
// marker) is replaced in place, so it stays before the marker. Items with
// the empty key (markers, acknowledgements) never coalesce.
//
// A Queue is safe for concurrent use.
type Queue[V any] struct {
	mu    sync.Mutex
	items list.List // of *item[V]
	byKey map[string]*list.Element
	max   int
	ready chan struct{}
}

type item[V any] struct {
	key    string
	v      V
	pinned bool
}

// NewQueue returns a queue holding at most limit items (at least 1).
func NewQueue[V any](limit int) *Queue[V] {
	return &Queue[V]{byKey: map[string]*list.Element{}, max: max(limit, 1), ready: make(chan struct{}, 1)}
}

// Put queues v under key (see Queue). It returns ErrQueueFull, and queues
// nothing, when v would be an item past the maximum.
func (q *Queue[V]) Put(key string, v V, pinned bool) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if key != "" {
		if e, ok := q.byKey[key]; ok {
			it := e.Value.(*item[V])
			it.v = v
			if !it.pinned {
				q.items.MoveToBack(e)
			}
			q.signal()
			return nil
		}
	}
	if q.items.Len() >= q.max {
		return ErrQueueFull
	}
	e := q.items.PushBack(&item[V]{key: key, v: v, pinned: pinned})
	if key != "" {
		q.byKey[key] = e
	}
	q.signal()
	return nil
}

func (q *Queue[V]) signal() {
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// TryPop removes and returns the front item; false when the queue is empty.
func (q *Queue[V]) TryPop() (V, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	e := q.items.Front()
	if e == nil {
		var zero V
		return zero, false
	}
	q.items.Remove(e)
	it := e.Value.(*item[V])
	if it.key != "" {
		delete(q.byKey, it.key)
	}
	return it.v, true
}

// Ready receives a value after a Put; a receiver drains the queue with
// TryPop, then waits on Ready again.
func (q *Queue[V]) Ready() <-chan struct{} { return q.ready }

// Len is the number of queued items.
func (q *Queue[V]) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.items.Len()
}
