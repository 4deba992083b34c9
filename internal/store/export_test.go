package store

// BreakWatch ends the cache's current watch as a broken connection would.
func (c *Cache[T]) BreakWatch() { c.breakWatch() }
