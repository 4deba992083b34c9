package local

import (
	"context"
	"fmt"
	"sync"
)

// lockTable holds one reader-writer lock per object directory. Operations
// lock the directories of what they work on from the cloudlet down: shared
// on the ancestors (so a cluster delete, exclusive on its cluster, waits
// for every operation on its instances and keeps new ones out until it is
// done), exclusive on the object itself. Always locking top-down keeps
// them free of deadlocks. A writer waiting keeps new readers out, so a
// delete is not starved by a stream of operations on its instances.
// Entries are removed when nobody holds or waits for them.
type lockTable struct {
	mu sync.Mutex
	m  map[string]*rwEntry
}

type rwEntry struct {
	readers, waitingWriters, refs int
	writer                        bool
	changed                       chan struct{} // closed and replaced on every change
}

// lockPath takes shared locks on ancestors, in order, and an exclusive
// lock on target unless target is "". The returned function releases them
// all.
func (t *lockTable) lockPath(ctx context.Context, ancestors []string, target string) (func(), error) {
	var releases []func()
	unlock := func() {
		for i := len(releases) - 1; i >= 0; i-- {
			releases[i]()
		}
	}
	for _, a := range ancestors {
		r, err := t.lock(ctx, a, false)
		if err != nil {
			unlock()
			return nil, err
		}
		releases = append(releases, r)
	}
	if target != "" {
		r, err := t.lock(ctx, target, true)
		if err != nil {
			unlock()
			return nil, err
		}
		releases = append(releases, r)
	}
	return unlock, nil
}

// lock takes key's lock, shared or exclusive, or gives up when ctx ends.
func (t *lockTable) lock(ctx context.Context, key string, exclusive bool) (func(), error) {
	t.mu.Lock()
	if t.m == nil {
		t.m = map[string]*rwEntry{}
	}
	e := t.m[key]
	if e == nil {
		e = &rwEntry{changed: make(chan struct{})}
		t.m[key] = e
	}
	e.refs++
	if exclusive {
		e.waitingWriters++
	}
	for {
		if exclusive && !e.writer && e.readers == 0 {
			e.writer = true
			e.waitingWriters--
			break
		}
		if !exclusive && !e.writer && e.waitingWriters == 0 {
			e.readers++
			break
		}
		ch := e.changed
		t.mu.Unlock()
		select {
		case <-ch:
			t.mu.Lock()
		case <-ctx.Done():
			t.mu.Lock()
			if exclusive {
				e.waitingWriters--
			}
			t.done(key, e)
			t.mu.Unlock()
			return nil, fmt.Errorf("waiting for the lock of %s: %w", key, ctx.Err())
		}
	}
	t.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			t.mu.Lock()
			defer t.mu.Unlock()
			if exclusive {
				e.writer = false
			} else {
				e.readers--
			}
			t.done(key, e)
		})
	}, nil
}

// done drops one reference to e, wakes its waiters and forgets e when
// nobody uses it any more. The caller holds t.mu.
func (t *lockTable) done(key string, e *rwEntry) {
	e.refs--
	close(e.changed)
	e.changed = make(chan struct{})
	if e.refs == 0 {
		delete(t.m, key)
	}
}
