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
// The first read is serializable (served by the member the client talks
// to, without a round of consensus): the compare-and-swap catches a stale
// one. When fn changes nothing, a stale read cannot be caught that way, so
// the object's revision is confirmed with a linearizable compare first.
// After a failed compare, the transaction's else branch has read the
// newest object, so a conflict costs no extra request.
func (k *Kind[T]) readModifyWrite(ctx context.Context, op, key string, fn func(cur T) (bool, error)) (obj T, rev int64, err error) {
	start := time.Now()
	attempts := 0
	defer func() { k.s.observe(op, k.name, start, attempts, err) }()
	var zero T
	p := k.Path(key)
	kv, _, err := k.s.getKV(ctx, p, clientv3.WithSerializable())
	if err != nil {
		return zero, 0, k.wrapEtcd(op, key, err)
	}
	linearized := false
	for {
		attempts++
		if kv == nil {
			return zero, 0, k.err(op, key, ErrNotFound)
		}
		cur, err := k.decode(op, key, kv.Value)
		if err != nil {
			return zero, 0, err
		}
		changed, err := fn(cur)
		if err != nil {
			return zero, 0, err
		}
		if !changed && linearized {
			return cur, kv.ModRevision, nil
		}
		txn := k.s.client.Txn(ctx).If(clientv3.Compare(clientv3.ModRevision(p), "=", kv.ModRevision))
		if changed {
			val, err := k.encode(op, cur)
			if err != nil {
				return zero, 0, err
			}
			txn = txn.Then(clientv3.OpPut(p, val))
		}
		resp, err := txn.Else(clientv3.OpGet(p)).Commit()
		if err != nil {
			return zero, 0, k.wrapEtcd(op, key, err)
		}
		if resp.Succeeded {
			if !changed {
				return cur, kv.ModRevision, nil
			}
			return cur, resp.Header.Revision, nil
		}
		if attempts >= k.s.maxAttempts {
			return zero, 0, k.err(op, key, ErrConflict)
		}
		kv = elseKV(resp)
		linearized = true
		k.s.logger.Debug("store: retrying after a concurrent write", "op", op, "kind", k.name, "key", key, "attempt", attempts)
	}
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
	kv, _, err := k.s.getKV(ctx, p, clientv3.WithSerializable())
	if err != nil {
		return 0, k.wrapEtcd("delete", key, err)
	}
	for {
		attempts++
		if kv == nil {
			return 0, k.err("delete", key, ErrNotFound)
		}
		cur, err := k.decode("delete", key, kv.Value)
		if err != nil {
			return 0, err
		}
		if err := check(cur); err != nil {
			return 0, err
		}
		resp, err := k.s.client.Txn(ctx).
			If(clientv3.Compare(clientv3.ModRevision(p), "=", kv.ModRevision)).
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
		kv = elseKV(resp)
	}
}
