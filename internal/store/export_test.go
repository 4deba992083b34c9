package store

// Decode exposes decode to the tests of package store_test.
func (k *Kind[T]) Decode(key string, data []byte) (T, error) { return k.decode("test", key, data) }

// BreakWatch ends the cache's current watch as a broken connection would.
func (c *Cache[T]) BreakWatch() { c.breakWatch() }
