package executor

import (
	"context"
	"fmt"
	"sync"
)

// Handle follows one submitted request. It is resolved once: when the
// operation finished (Err is its outcome, nil on success; ErrReportFailed
// when its outcome could not be reported), when a newer request for the
// same object superseded it before it started (ErrSuperseded), when the
// engine stopped before it started (ErrStopped), or when the context it
// was submitted with (SubmitContext) ended before it started
// (ErrCanceled).
type Handle struct {
	kind, key string
	done      chan struct{}
	err       error
}

func newHandle(kind, key string) *Handle {
	return &Handle{kind: kind, key: key, done: make(chan struct{})}
}

// Kind is the kind of object the request is for ("ClusterInst").
func (h *Handle) Kind() string { return h.kind }

// Key is the key string of the object the request is for.
func (h *Handle) Key() string { return h.key }

// Done is closed when the request is resolved.
func (h *Handle) Done() <-chan struct{} { return h.done }

// Err returns the outcome once Done is closed, and nil before.
func (h *Handle) Err() error {
	select {
	case <-h.done:
		return h.err
	default:
		return nil
	}
}

// Wait blocks until the request is resolved and returns its outcome, or
// returns ctx.Err() if ctx ends first.
func (h *Handle) Wait(ctx context.Context) error {
	select {
	case <-h.done:
		return h.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (h *Handle) resolve(err error) {
	h.err = err
	close(h.done)
}

// task is one queued request.
type task struct {
	handle *Handle
	run    func(ctx context.Context) error
	ctx    context.Context // the request's own context; nil for none
}

// start runs the task under the engine's context, merged with the task's
// own: the values of the task's, cancelled when either ends.
func (t *task) start(engine context.Context) error {
	if t.ctx == nil {
		return t.run(engine)
	}
	if err := t.ctx.Err(); err != nil {
		return fmt.Errorf("%w before it started: %w", ErrCanceled, context.Cause(t.ctx))
	}
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(t.ctx))
	defer cancel(nil)
	for _, parent := range []context.Context{engine, t.ctx} {
		stop := context.AfterFunc(parent, func() { cancel(context.Cause(parent)) })
		defer stop()
	}
	return t.run(ctx)
}

// slot is the queue state of one object key.
type slot struct {
	pending *task // latest request not yet started
	running bool
	queued  bool // the key is in queue.ready
}

// queue runs at most one task per key at a time, tasks of different keys
// in parallel on a fixed number of workers, and keeps only the newest
// pending task per key.
type queue struct {
	mu      sync.Mutex
	cond    *sync.Cond
	slots   map[string]*slot
	ready   []string // keys with a pending task and none running, FIFO
	stopped bool
	active  int           // pending + running tasks
	idle    chan struct{} // closed while active == 0
}

func newQueue() *queue {
	q := &queue{slots: map[string]*slot{}, idle: make(chan struct{})}
	close(q.idle)
	q.cond = sync.NewCond(&q.mu)
	return q
}

// push queues t under key, superseding a pending task of the same key.
func (q *queue) push(key string, t *task) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.stopped {
		return ErrStopped
	}
	q.pushLocked(key, t)
	return nil
}

// pushIdle queues t under key unless a task of key is pending or running,
// and reports whether it did.
func (q *queue) pushIdle(key string, t *task) (bool, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.stopped {
		return false, ErrStopped
	}
	if _, busy := q.slots[key]; busy {
		return false, nil
	}
	q.pushLocked(key, t)
	return true, nil
}

func (q *queue) pushLocked(key string, t *task) {
	s := q.slots[key]
	if s == nil {
		s = &slot{}
		q.slots[key] = s
	}
	if old := s.pending; old != nil {
		old.handle.resolve(ErrSuperseded)
	} else {
		q.addActive(1)
	}
	s.pending = t
	if !s.running && !s.queued {
		s.queued = true
		q.ready = append(q.ready, key)
		q.cond.Signal()
	}
}

// pop blocks until a task can start and returns it, or returns false when
// the queue stopped.
func (q *queue) pop() (string, *task, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.ready) == 0 && !q.stopped {
		q.cond.Wait()
	}
	if q.stopped {
		return "", nil, false
	}
	key := q.ready[0]
	q.ready[0] = ""
	q.ready = q.ready[1:]
	s := q.slots[key]
	t := s.pending
	s.pending, s.queued, s.running = nil, false, true
	return key, t, true
}

// finish marks the running task of key done and requeues the key when a
// newer task is pending.
func (q *queue) finish(key string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	s := q.slots[key]
	s.running = false
	q.addActive(-1)
	switch {
	case s.pending != nil && !q.stopped:
		s.queued = true
		q.ready = append(q.ready, key)
		q.cond.Signal()
	case s.pending == nil:
		delete(q.slots, key)
	}
}

// stop wakes every worker and resolves the pending tasks with ErrStopped.
func (q *queue) stop() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.stopped = true
	for key, s := range q.slots {
		if s.pending != nil {
			s.pending.handle.resolve(ErrStopped)
			s.pending = nil
			q.addActive(-1)
		}
		if !s.running {
			delete(q.slots, key)
		}
	}
	q.ready = nil
	q.cond.Broadcast()
}

// idleCh returns a channel closed while nothing is pending or running.
func (q *queue) idleCh() <-chan struct{} {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.idle
}

func (q *queue) addActive(n int) {
	was := q.active
	q.active += n
	switch {
	case was == 0 && q.active > 0:
		q.idle = make(chan struct{})
	case was > 0 && q.active == 0:
		close(q.idle)
	}
}
