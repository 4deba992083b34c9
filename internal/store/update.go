package store

import (
	"context"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/edgekit/edgekit/fieldmap"
)

// Update applies the fields of src that fm flags to the stored object of
// key, with cur.CopyInFields(src, fm), and returns the object as written
// and the revision of the write.
//
// check, when not nil, sees the stored object first and may refuse the
// update with an error, which Update returns unchanged. When CopyInFields
// changes nothing, nothing is written and the revision returned is the
// object's ModRevision. The write is a compare-and-swap on the object's
// ModRevision: when another writer got there first, Update reads the new
// object and runs check and CopyInFields again, so that concurrent updates
// of different fields all land; after the store's bounded number of
// attempts it fails with ErrConflict. A missing object is ErrNotFound. src
// is not modified.
func (k *Kind[T]) Update(ctx context.Context, key string, src T, fm *fieldmap.FieldMap, check func(cur T) error) (T, int64, error) {
	return k.readModifyWrite(ctx, "update", key, func(cur T) (bool, error) {
		if check != nil {
			if err := check(cur); err != nil {
				return false, err
			}
		}
		return cur.CopyInFields(src, fm) > 0, nil
	})
}

// Modify runs fn on the stored object of key and writes the object back
// when fn reports a change, as a compare-and-swap like Update: fn runs again
// on the newer object when another writer got there first, so it must have
// no effect besides changing cur. An error of fn is returned unchanged and
// nothing is written. It returns the object and the revision of the write
// (the object's ModRevision when fn changed nothing).
func (k *Kind[T]) Modify(ctx context.Context, key string, fn func(cur T) (changed bool, err error)) (T, int64, error) {
	return k.readModifyWrite(ctx, "modify", key, fn)
}

// readModifyWrite is the compare-and-swap loop of Update and Modify.
//
// It starts from the object this process last read or wrote (see
// WithRecentSize), else from a serializable read (served by the member the
// client talks to, without a round of consensus): the compare-and-swap
// catches a stale start. When fn changes nothing or refuses, or the object
// seems missing, there is no write to catch a stale start, so the revision
// is confirmed with a linearizable compare first, and fn runs again on the
// current object when it changed: a refusal is always about the current
// object. After a failed compare, the
// transaction's else branch has read the newest object, so a conflict
// costs no extra request.
func (k *Kind[T]) readModifyWrite(ctx context.Context, op, key string, fn func(cur T) (bool, error)) (obj T, rev int64, err error) {
	start := time.Now()
	attempts := 0
	defer func() { k.s.observe(op, k.name, start, attempts, err) }()
	var zero T
	p := k.Path(key)
	cur, modRev, linearized, err := k.start(ctx, op, key)
	if err != nil {
		return zero, 0, err
	}
	for {
		attempts++
		if modRev == 0 {
			return zero, 0, k.err(op, key, ErrNotFound)
		}
		changed, ferr := fn(cur)
		if ferr != nil || !changed {
			// Nothing to write: the answer stands if cur is current.
			if !linearized {
				var current bool
				if current, err = k.confirm(ctx, op, key, &cur, &modRev); err != nil {
					return zero, 0, err
				}
				linearized = true
				if !current {
					continue
				}
			}
			if ferr != nil {
				return zero, 0, ferr
			}
			return cur, modRev, nil
		}
		val, err := k.encode(op, cur)
		if err != nil {
			return zero, 0, err
		}
		resp, err := k.s.client.Txn(ctx).
			If(clientv3.Compare(clientv3.ModRevision(p), "=", modRev)).
			Then(clientv3.OpPut(p, val)).
			Else(clientv3.OpGet(p)).
			Commit()
		if err != nil {
			return zero, 0, k.wrapEtcd(op, key, err)
		}
		if resp.Succeeded {
			modRev = resp.Header.Revision
			k.recent.put(key, cur, modRev)
			return cur, modRev, nil
		}
		if attempts >= k.s.maxAttempts {
			return zero, 0, k.err(op, key, ErrConflict)
		}
		if cur, modRev, err = k.decodeKV(op, key, elseKV(resp)); err != nil {
			return zero, 0, err
		}
		linearized = true
		k.s.logger.Debug("store: retrying after a concurrent write", "op", op, "kind", k.name, "key", key, "attempt", attempts)
	}
}

// confirm checks with a linearizable compare that *modRev is still the
// object's revision; when it is not, it loads the current object into
// *cur and *modRev.
func (k *Kind[T]) confirm(ctx context.Context, op, key string, cur *T, modRev *int64) (bool, error) {
	p := k.Path(key)
	resp, err := k.s.client.Txn(ctx).
		If(clientv3.Compare(clientv3.ModRevision(p), "=", *modRev)).
		Else(clientv3.OpGet(p)).
		Commit()
	if err != nil {
		return false, k.wrapEtcd(op, key, err)
	}
	if resp.Succeeded {
		return true, nil
	}
	*cur, *modRev, err = k.decodeKV(op, key, elseKV(resp))
	return false, err
}

// start returns the object a compare-and-swap loop starts from, and its
// ModRevision (0: missing). linearized tells that the object was read
// through consensus just now; a missing object always is.
func (k *Kind[T]) start(ctx context.Context, op, key string) (cur T, modRev int64, linearized bool, err error) {
	if cur, modRev, ok := k.recent.get(key); ok {
		return cur, modRev, false, nil
	}
	kv, _, err := k.s.getKV(ctx, k.Path(key), clientv3.WithSerializable())
	if err == nil && kv == nil {
		// Missing here may be missing only on a member that lags.
		linearized = true
		kv, _, err = k.s.getKV(ctx, k.Path(key))
	}
	if err != nil {
		return cur, 0, false, k.wrapEtcd(op, key, err)
	}
	cur, modRev, err = k.decodeKV(op, key, kv)
	return cur, modRev, linearized, err
}

// decodeKV decodes a key read from etcd: nil gives the zero T and
// revision 0. A read object is remembered; a missing one forgotten.
func (k *Kind[T]) decodeKV(op, key string, kv *mvccpb.KeyValue) (T, int64, error) {
	var zero T
	if kv == nil {
		k.recent.drop(key)
		return zero, 0, nil
	}
	obj, err := k.decode(op, key, kv.Value)
	if err != nil {
		k.recent.drop(key)
		return zero, 0, err
	}
	k.recent.put(key, obj, kv.ModRevision)
	return obj, kv.ModRevision, nil
}

// elseKV returns the key read by the single get of a failed transaction's
// else branch, or nil when it does not exist.
func elseKV(resp *clientv3.TxnResponse) *mvccpb.KeyValue {
	if len(resp.Responses) == 0 {
		return nil
	}
	r := resp.Responses[0].GetResponseRange()
	if r == nil || len(r.Kvs) == 0 {
		return nil
	}
	return r.Kvs[0]
}

// Delete removes the object of key and returns the revision of the delete;
// a missing object is ErrNotFound.
//
// check, when not nil, sees the stored object first and may refuse with an
// error, which Delete returns unchanged; the delete is then a
// compare-and-swap on the object's ModRevision, re-running check when the
// object changed meanwhile. Without check the value is not decoded, so a
// value that does not decode can still be deleted.
func (k *Kind[T]) Delete(ctx context.Context, key string, check func(cur T) error) (rev int64, err error) {
	start := time.Now()
	attempts := 0
	defer func() { k.s.observe("delete", k.name, start, attempts, err) }()
	p := k.Path(key)
	defer k.recent.drop(key)
	if check == nil {
		attempts = 1
		resp, err := k.s.client.Delete(ctx, p)
		if err != nil {
			return 0, k.wrapEtcd("delete", key, err)
		}
		if resp.Deleted == 0 {
			return 0, k.err("delete", key, ErrNotFound)
		}
		return resp.Header.Revision, nil
	}
	cur, modRev, linearized, err := k.start(ctx, "delete", key)
	if err != nil {
		return 0, err
	}
	for {
		attempts++
		if modRev == 0 {
			return 0, k.err("delete", key, ErrNotFound)
		}
		if cerr := check(cur); cerr != nil {
			// A refusal stands if cur is current.
			if !linearized {
				current, err := k.confirm(ctx, "delete", key, &cur, &modRev)
				if err != nil {
					return 0, err
				}
				linearized = true
				if !current {
					continue
				}
			}
			return 0, cerr
		}
		resp, err := k.s.client.Txn(ctx).
			If(clientv3.Compare(clientv3.ModRevision(p), "=", modRev)).
			Then(clientv3.OpDelete(p)).
			Else(clientv3.OpGet(p)).
			Commit()
		if err != nil {
			return 0, k.wrapEtcd("delete", key, err)
		}
		if resp.Succeeded {
			return resp.Header.Revision, nil
		}
		if attempts >= k.s.maxAttempts {
			return 0, k.err("delete", key, ErrConflict)
		}
		if cur, modRev, err = k.decodeKV("delete", key, elseKV(resp)); err != nil {
			return 0, err
		}
		linearized = true
	}
}
