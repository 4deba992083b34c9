package store

import "sync"

// DefaultRecentSize is how many objects per kind the store remembers as
// last read or written by this process (see WithRecentSize).
const DefaultRecentSize = 1024

// recent remembers, per key, the object this process last read or wrote
// and its ModRevision, so that a read-modify-write can start from it
// without reading: the compare-and-swap still checks the revision, and a
// stale entry costs what a read would have (the failed compare returns
// the current object). Entries are never handed out for modification: the
// caller clones. When full, an arbitrary entry makes room.
type recent[T Message[T]] struct {
	mu  sync.Mutex
	max int
	m   map[string]recentEntry[T]
}

type recentEntry[T any] struct {
	obj    T
	modRev int64
}

func newRecent[T Message[T]](size int) *recent[T] {
	return &recent[T]{max: size, m: make(map[string]recentEntry[T])}
}

// get returns a copy of the entry of key.
func (r *recent[T]) get(key string) (T, int64, bool) {
	if r.max == 0 {
		var zero T
		return zero, 0, false
	}
	r.mu.Lock()
	e, ok := r.m[key]
	r.mu.Unlock()
	if !ok {
		return e.obj, 0, false
	}
	return e.obj.Clone(), e.modRev, true
}

// put remembers a copy of obj as the object of key at modRev, unless a
// newer one is remembered.
func (r *recent[T]) put(key string, obj T, modRev int64) {
	if r.max == 0 {
		return
	}
	c := obj.Clone()
	r.mu.Lock()
	defer r.mu.Unlock()
	if e, ok := r.m[key]; ok && e.modRev > modRev {
		return
	}
	if _, ok := r.m[key]; !ok && len(r.m) >= r.max {
		for k := range r.m {
			delete(r.m, k)
			break
		}
	}
	r.m[key] = recentEntry[T]{obj: c, modRev: modRev}
}

// drop forgets key.
func (r *recent[T]) drop(key string) {
	if r.max == 0 {
		return
	}
	r.mu.Lock()
	delete(r.m, key)
	r.mu.Unlock()
}
