package local

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// locksDir is the directory of the state directory that holds one lock
// file per object (see lockTable.dir).
const locksDir = "locks"

// lockTable holds one reader-writer lock per object directory. Operations
// lock the directories of what they work on from the cloudlet down: shared
// on the ancestors (so a cluster delete, exclusive on its cluster, waits
// for every operation on its instances and keeps new ones out until it is
// done), exclusive on the object itself. Always locking top-down keeps
// them free of deadlocks. A writer waiting keeps new readers out, so a
// delete is not starved by a stream of operations on its instances.
// Entries are removed when nobody holds or waits for them.
//
// When dir is set, each lock is also taken, in the same mode, on the
// object's lock file in dir (flock, shared or exclusive), so that the
// platforms of other processes (and other Platforms of this one) over the
// same state directory are kept out in the same way. The lock files are
// kept (one small empty file per object name ever locked): removing one
// while another platform waits on it would let two holders in.
type lockTable struct {
	mu  sync.Mutex
	m   map[string]*rwEntry
	dir string
	// busy, when set (by tests), is called with the key each time a file
	// lock is found held by another process, before waiting for it.
	busy func(key string)
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
	var f *os.File
	if t.dir != "" {
		var err error
		if f, err = flockFile(ctx, t.dir, key, exclusive, t.busy); err != nil {
			t.mu.Lock()
			if exclusive {
				e.writer = false
			} else {
				e.readers--
			}
			t.done(key, e)
			t.mu.Unlock()
			return nil, err
		}
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			if f != nil {
				_ = f.Close() // releases the flock
			}
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

// Bounds of the pause between two attempts at a file lock another
// process holds.
const (
	flockPollMin = time.Millisecond
	flockPollMax = 50 * time.Millisecond
)

// flockFile takes the file lock of key in dir, shared or exclusive, or
// gives up when ctx ends. busy, when not nil, is called once if the lock
// is held elsewhere, before the first wait. The lock belongs to the returned open file: it
// is released when the file is closed or this process ends, so a killed
// engine never leaves it behind. The file is close-on-exec, so the
// processes the platform starts do not inherit it.
func flockFile(ctx context.Context, dir, key string, exclusive bool, busy func(key string)) (*os.File, error) {
	sum := sha256.Sum256([]byte(key))
	path := filepath.Join(dir, hex.EncodeToString(sum[:16])+".lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("%w: opening the lock file of %s: %w", ErrState, key, err)
	}
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	pause := flockPollMin
	for {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			_ = f.Close()
			return nil, fmt.Errorf("%w: locking %s: %w", ErrState, key, err)
		}
		if busy != nil && pause == flockPollMin {
			busy(key)
		}
		timer := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			timer.Stop()
			_ = f.Close()
			return nil, fmt.Errorf("waiting for the lock of %s: %w", key, ctx.Err())
		case <-timer.C:
		}
		pause = min(2*pause, flockPollMax)
	}
}
