package store

import "google.golang.org/protobuf/proto"

// BreakWatch ends the cache's current watch as a broken connection would.
func (c *Cache[T]) BreakWatch() { c.breakWatch() }

// WrittenLen is how many writes of transactions the cache holds apart
// from what its watch applied.
func (c *Cache[T]) WrittenLen() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.written)
}

// Wrote records a write of a transaction committed at rev.
func (c *Cache[T]) Wrote(path string, del bool, obj T, rev int64) {
	var m proto.Message
	if !del {
		m = obj
	}
	c.wrote(path, del, m, "", rev)
}
