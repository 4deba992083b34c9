package store

// Decode exposes decode to the tests of package store_test.
func (k *Kind[T]) Decode(key string, data []byte) (T, error) { return k.decode("test", key, data) }
