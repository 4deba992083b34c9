package store

import (
	"strings"

	"google.golang.org/protobuf/proto"
)

// A transaction's writes reach the caches of the same store as soon as it
// commits (write-through), before the caches' watches deliver them: the
// next transaction of this process that reads one of those keys through
// Cache.TxGet finds the copy it wrote itself, not the one before, and does
// not fail its commit for a stale read. A cache keeps such writes apart
// from what its watch applied (Cache.written), by key, with the revision
// of their commit; a key never moves backwards (the newest revision wins,
// whichever arrives first), and an entry is dropped once the watch has
// applied its revision, so the watch's later delivery of the same change
// is what the cache holds then. Snapshots, lists and the events handed to
// handlers come from the watch alone: they stay at one revision and in
// revision order.

// writeSink is a running cache as the store's transactions see it.
type writeSink interface {
	prefix() string
	// wrote records that key (a full etcd key under prefix) was written
	// at rev: put with obj (nil: decode val) or deleted.
	wrote(key string, del bool, obj proto.Message, val string, rev int64)
}

// addSink registers a running cache for write-through.
func (s *Store) addSink(w writeSink) {
	s.sinkMu.Lock()
	defer s.sinkMu.Unlock()
	s.sinks = append(s.sinks, w)
}

// removeSink unregisters a cache that stopped.
func (s *Store) removeSink(w writeSink) {
	s.sinkMu.Lock()
	defer s.sinkMu.Unlock()
	for i, x := range s.sinks {
		if x == w {
			s.sinks = append(s.sinks[:i:i], s.sinks[i+1:]...)
			return
		}
	}
}

// hasSink reports whether a running cache covers prefix.
func (s *Store) hasSink(prefix string) bool {
	s.sinkMu.RLock()
	defer s.sinkMu.RUnlock()
	for _, w := range s.sinks {
		if w.prefix() == prefix {
			return true
		}
	}
	return false
}

// writeThrough hands the writes of a transaction committed at rev to the
// running caches that cover their keys.
func (tx *Tx) writeThrough(rev int64) {
	tx.s.sinkMu.RLock()
	sinks := tx.s.sinks
	tx.s.sinkMu.RUnlock()
	if len(sinks) == 0 {
		return
	}
	for _, key := range tx.order {
		w := tx.writes[key]
		for _, sink := range sinks {
			if strings.HasPrefix(key, sink.prefix()) {
				sink.wrote(key, w.del, w.obj, w.val, rev)
			}
		}
	}
}

// cacheWrite is a write of this process's transactions that the cache's
// watch has not delivered yet.
type cacheWrite[T any] struct {
	obj    T // nil for a delete
	modRev int64
	del    bool
}

// writtenKey is an entry of Cache.writtenOrder.
type writtenKey struct {
	key string
	rev int64
}

func (c *Cache[T]) prefix() string { return c.k.prefix }

// wrote records a write committed at rev (see writeSink).
func (c *Cache[T]) wrote(path string, del bool, obj proto.Message, val string, rev int64) {
	key := path[len(c.k.prefix):]
	var o T
	if !del {
		var ok bool
		if o, ok = obj.(T); !ok {
			var err error
			if o, err = c.k.decode("cache write", key, []byte(val)); err != nil {
				// Not an object of the kind: leave it to the watch, which
				// reports it.
				c.mu.Lock()
				delete(c.written, key)
				c.mu.Unlock()
				return
			}
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if rev <= c.rev {
		return // the watch applied it, or something newer, already
	}
	if w, ok := c.written[key]; ok && w.modRev >= rev {
		return
	}
	if c.written == nil {
		c.written = map[string]cacheWrite[T]{}
	}
	c.written[key] = cacheWrite[T]{obj: o, modRev: rev, del: del}
	c.writtenOrder = append(c.writtenOrder, writtenKey{key: key, rev: rev})
}

// pruneWritten drops the writes the watch has applied (their revision is
// at or below c.rev). c.mu is held. Writes are recorded in about the order
// of their revisions; one recorded out of order stays until the watch
// passes the ones before it, and reads ignore it meanwhile (see lookup).
func (c *Cache[T]) pruneWritten() {
	n := 0
	for _, wk := range c.writtenOrder {
		if wk.rev > c.rev {
			break
		}
		if w, ok := c.written[wk.key]; ok && w.modRev <= c.rev {
			delete(c.written, wk.key)
		}
		n++
	}
	if n > 0 {
		c.writtenOrder = c.writtenOrder[n:]
		if len(c.writtenOrder) == 0 {
			c.writtenOrder = nil
		}
	}
}

// lookup returns the newest copy the cache knows of key, from its watch
// or from this process's own writes, its revision (0 when absent), and
// the revision as of which that is the key's state (the cache's, or that
// of the write when newer). c.mu is held (read).
func (c *Cache[T]) lookup(key string) (obj T, modRev int64, found bool, at int64) {
	at = c.rev
	if e, ok := c.items[key]; ok {
		obj, modRev, found = e.obj, e.modRev, true
	}
	if w, ok := c.written[key]; ok && w.modRev > c.rev && w.modRev > modRev {
		if w.del {
			var zero T
			return zero, 0, false, w.modRev
		}
		return w.obj, w.modRev, true, w.modRev
	}
	return obj, modRev, found, at
}
