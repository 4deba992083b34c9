package store

import (
	"github.com/edgekit/edgekit/fieldmap"
)

// TxGet returns the object of key as the transaction sees it and whether it
// exists, guarding the key (see Tx).
func (k *Kind[T]) TxGet(tx *Tx, key string) (T, bool, error) {
	var zero T
	if obj, found, ok := tx.cachedObject(k.Path(key)); ok {
		if !found {
			return zero, false, nil
		}
		if o, isT := obj.(T); isT {
			return o.Clone(), true, nil
		}
	}
	val, ok, err := tx.Get(k.Path(key))
	if err != nil || !ok {
		return zero, false, err
	}
	obj, err := k.decode("txn get", key, val)
	if err != nil {
		return zero, false, err
	}
	return obj, true, nil
}

// TxList returns every object of the kind as the transaction sees it,
// sorted by key, guarding the kind's prefix (see Tx for what that guard
// does not detect).
func (k *Kind[T]) TxList(tx *Tx) ([]T, error) {
	kvs, err := tx.List(k.prefix)
	if err != nil {
		return nil, err
	}
	objs := make([]T, 0, len(kvs))
	for _, kv := range kvs {
		obj, err := k.decode("txn list", kv.Key[len(k.prefix):], kv.Value)
		if err != nil {
			return nil, err
		}
		objs = append(objs, obj)
	}
	return objs, nil
}

// TxPut buffers a write of obj. The error is about obj's encoding.
func (k *Kind[T]) TxPut(tx *Tx, obj T) error {
	_, err := k.TxPutSized(tx, obj)
	return err
}

// TxPutSized buffers a write of obj like TxPut and returns the size in
// bytes of its protojson encoding (before any sealing), so that a caller
// that limits the size of what it stores checks it without encoding obj
// a second time: returning an error from the transaction's function then
// drops the write.
func (k *Kind[T]) TxPutSized(tx *Tx, obj T) (int, error) {
	val, size, err := k.encodeSized("txn put", obj)
	if err != nil {
		return 0, err
	}
	path := k.Path(KeyOf(obj))
	w := &txWrite{val: val}
	if tx.s.hasSink(k.prefix) {
		w.obj = obj.Clone() // for the caches, once committed
	}
	tx.write(path, w)
	return size, nil
}

// TxDelete buffers the delete of the object of key.
func (k *Kind[T]) TxDelete(tx *Tx, key string) { tx.Delete(k.Path(key)) }

// TxCreate buffers a write of obj when no object has its key (as the
// transaction sees it, guarding the key), else returns an ErrAlreadyExists
// error.
func (k *Kind[T]) TxCreate(tx *Tx, obj T) error {
	key := KeyOf(obj)
	if _, ok, err := tx.Get(k.Path(key)); err != nil {
		return err
	} else if ok {
		return k.err("txn create", key, ErrAlreadyExists)
	}
	return k.TxPut(tx, obj)
}

// TxUpdate applies the fields of src that fm flags to the object of key as
// the transaction sees it, after check (when not nil) accepts it, buffers
// the write when something changed, and returns the object. A missing
// object is an ErrNotFound error; an error of check is returned unchanged.
func (k *Kind[T]) TxUpdate(tx *Tx, key string, src T, fm *fieldmap.FieldMap, check func(cur T) error) (T, error) {
	var zero T
	cur, ok, err := k.TxGet(tx, key)
	if err != nil {
		return zero, err
	}
	if !ok {
		return zero, k.err("txn update", key, ErrNotFound)
	}
	if check != nil {
		if err := check(cur); err != nil {
			return zero, err
		}
	}
	if cur.CopyInFields(src, fm) > 0 {
		if err := k.TxPut(tx, cur); err != nil {
			return zero, err
		}
	}
	return cur, nil
}
