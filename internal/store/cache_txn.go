package store

// TxGet returns the object of key for a transaction, read from the cache
// when it can be: on the transaction function's first run, from a cache
// that runs and is synchronised, for a key the transaction has not read
// yet. The cache's copy is the newest it knows: what its watch applied,
// or what a transaction of this process committed since (see
// cache_write.go). Such a read costs no request; it is guarded like any read of the
// transaction, by the object's ModRevision as the cache knows it (0 when
// the cache has no such object), so when the cache was behind etcd the
// commit fails and the function runs again, reading etcd. The cache's
// revision counts in the transaction's Rev. A function that
// returns an error, or writes nothing, after reading from a cache is
// checked the same way (see Store.Txn): what it decided on was current.
// Otherwise TxGet is the kind's TxGet.
func (c *Cache[T]) TxGet(tx *Tx, key string) (T, bool, error) {
	path := c.k.Path(key)
	if tx.attempt == 1 && c.running.Load() && c.isSynced() && !tx.touched(path) {
		c.mu.RLock()
		obj, modRev, ok, at := c.lookup(key)
		c.mu.RUnlock()
		tx.cacheRev = max(tx.cacheRev, at)
		r := txRead{}
		if ok {
			r = txRead{modRev: modRev, obj: obj}
		}
		tx.vals[path] = r
		tx.guards[path] = r.modRev
		tx.cached = true
	}
	return c.k.TxGet(tx, key)
}

func (c *Cache[T]) isSynced() bool {
	select {
	case <-c.synced:
		return true
	default:
		return false
	}
}

// touched reports whether the transaction read, prefetched or wrote key.
func (tx *Tx) touched(key string) bool {
	_, read := tx.vals[key]
	_, guarded := tx.guards[key]
	_, written := tx.writes[key]
	return read || guarded || written
}

// cachedObject returns the object a Cache read for key, when the
// transaction has not written key since: found is false for an absent
// object, ok false when the read was not a cache's.
func (tx *Tx) cachedObject(key string) (obj any, found, ok bool) {
	r, read := tx.vals[key]
	if !read || r.obj == nil && r.modRev != 0 {
		return nil, false, false
	}
	if _, written := tx.writes[key]; written {
		return nil, false, false
	}
	if _, guarded := tx.guards[key]; !guarded {
		return nil, false, false
	}
	return r.obj, r.modRev != 0, true
}
