package store

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/protobuf/proto"
)

// Tx is one run of a transaction's function (see Store.Txn). Its reads see
// the store as of one revision, plus the transaction's own buffered
// writes; its writes are applied together at commit, or not at all.
//
// What a commit checks, exactly:
//
//   - every key read with Get (or a Kind's TxGet) still has the
//     ModRevision it had when read, or is still absent if it was absent: a
//     concurrent create, update or delete of it is detected;
//   - every prefix read with List (or a Kind's TxList) has no key whose
//     ModRevision is above the transaction's read revision: a concurrent
//     create or update of any key under it is detected, also of a key that
//     did not exist when listed. A concurrent delete of a listed key is
//     NOT detected by the prefix guard (a deleted key leaves nothing to
//     compare); read such a key with Get as well when its deletion matters.
//     The guard makes etcd read the whole prefix at commit;
//   - every compare given to Require holds.
//
// A Tx is used only by the goroutine running the function, and only
// during that run.
type Tx struct {
	ctx      context.Context
	s        *Store
	attempt  int                 // 1 for the function's first run
	rev      int64               // revision of every read; 0 before the first
	vals     map[string]txRead   // values read, by key
	guards   map[string]int64    // keys read with Get: their ModRevision (0: absent)
	prefixes []string            // prefixes read with List
	writes   map[string]*txWrite // buffered writes by key
	order    []string            // keys of writes, in first-write order
	requires []clientv3.Cmp
	// compacted is set when a read failed because the read revision was
	// compacted: the run is retried at a newer revision.
	compacted bool
	// cached is set when a read was served by a Cache (Cache.TxGet): an
	// error of the run is not trusted (the run is retried reading etcd),
	// and a run that writes nothing still has its reads checked.
	cached bool
	// cacheRev is the newest revision of a Cache that served a read.
	cacheRev int64
}

type txRead struct {
	val    []byte
	modRev int64 // 0: absent
	// obj, when set, is the decoded object of a read served by a Cache
	// (see Cache.TxGet), and val is nil until a raw Get needs it.
	obj proto.Message
}

type txWrite struct {
	del  bool
	val  string
	opts []clientv3.OpOption
	// obj, when set, is the object val encodes, for the running caches of
	// its kind (see cache_write.go); a copy nothing else holds.
	obj proto.Message
}

// KV is a key and value read through a Tx.
type KV struct {
	Key   string
	Value []byte
}

// Txn runs fn in a transaction and returns the revision of its commit.
//
// fn reads and writes through tx. When fn returns an error, nothing is
// written and Txn returns that error unchanged. Otherwise the buffered
// writes are committed in one etcd transaction that checks what fn read
// (see Tx) and the compares of Require. When a compare of Require fails,
// Txn fails with ErrPrecondition and writes nothing. When something fn
// read changed meanwhile, fn runs again from scratch on a fresh Tx, up to
// the store's bounded number of attempts, then Txn fails with ErrConflict;
// fn must therefore have no effect besides its use of tx. A fn that writes
// nothing and requires nothing commits nothing: Txn returns the revision
// its reads saw (0 when it read nothing).
//
// Reads served by a Cache (Cache.TxGet, first run only) are checked like
// the others at commit. A run that read from a cache and returned an
// error runs again reading etcd, and Txn returns that run's outcome; one
// that read from a cache and writes nothing has its reads checked in a
// read-only etcd transaction, whose revision Txn returns.
func (s *Store) Txn(ctx context.Context, fn func(tx *Tx) error) (rev int64, err error) {
	start := time.Now()
	attempts := 0
	defer func() { s.observe("txn", "", start, attempts, err) }()
	for {
		attempts++
		tx := &Tx{ctx: ctx, s: s, attempt: attempts, vals: map[string]txRead{}, guards: map[string]int64{}, writes: map[string]*txWrite{}}
		err := fn(tx)
		if err != nil && !((tx.compacted || tx.cached) && attempts < s.maxAttempts) {
			return 0, err
		}
		if err == nil {
			if len(tx.writes) == 0 && len(tx.requires) == 0 && !tx.cached {
				return tx.rev, nil
			}
			rev, ok, err := tx.commit()
			if err != nil || ok {
				return rev, err
			}
		}
		if attempts >= s.maxAttempts {
			return 0, &Error{Op: "txn", Err: ErrConflict}
		}
		s.logger.Debug("store: re-running a transaction after a concurrent write", "attempt", attempts)
	}
}

// commitErr wraps an error of etcd of a transaction's commit.
func commitErr(err error) error {
	if e := noSpace("txn", "", "", err); e != nil {
		return e
	}
	return fmt.Errorf("store: txn: %w", err)
}

// commit applies the buffered writes if nothing read changed. ok false
// means something did: run again.
func (tx *Tx) commit() (rev int64, ok bool, err error) {
	cmps := make([]clientv3.Cmp, 0, len(tx.guards)+len(tx.prefixes))
	for _, key := range slices.Sorted(maps.Keys(tx.guards)) {
		cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(key), "=", tx.guards[key]))
	}
	for _, p := range tx.prefixes {
		cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(p), "<", tx.rev+1).WithPrefix())
	}
	ops := make([]clientv3.Op, 0, len(tx.order))
	for _, key := range tx.order {
		w := tx.writes[key]
		if w.del {
			ops = append(ops, clientv3.OpDelete(key))
		} else {
			ops = append(ops, clientv3.OpPut(key, w.val, w.opts...))
		}
	}
	if len(tx.requires) == 0 {
		resp, err := tx.s.client.Txn(tx.ctx).If(cmps...).Then(ops...).Commit()
		if err != nil {
			return 0, false, commitErr(err)
		}
		if resp.Succeeded && len(ops) > 0 {
			tx.writeThrough(resp.Header.Revision)
		}
		return resp.Header.Revision, resp.Succeeded, nil
	}
	// The compares of Require guard a nested transaction holding the read
	// compares, so that one request tells a failed requirement (abort) from
	// a changed read (run again).
	resp, err := tx.s.client.Txn(tx.ctx).
		If(tx.requires...).
		Then(clientv3.OpTxn(cmps, ops, nil)).
		Commit()
	if err != nil {
		return 0, false, commitErr(err)
	}
	if !resp.Succeeded {
		return 0, false, &Error{Op: "txn", Err: ErrPrecondition}
	}
	nested := resp.Responses[0].GetResponseTxn()
	ok = nested != nil && nested.Succeeded
	if ok && len(ops) > 0 {
		tx.writeThrough(resp.Header.Revision)
	}
	return resp.Header.Revision, ok, nil
}

// Attempt is the number of the function's current run: 1 for the first.
func (tx *Tx) Attempt() int { return tx.attempt }

// Context returns the context of the transaction.
func (tx *Tx) Context() context.Context { return tx.ctx }

// Rev returns the revision the transaction's reads see, 0 before the first
// read: the revision of its etcd reads or, when a Cache served a read (see
// Cache.TxGet) and had applied a newer revision, that cache's revision.
// Either way, every object the transaction read, as long as the commit
// finds it unchanged, was last written at or before Rev.
func (tx *Tx) Rev() int64 { return max(tx.rev, tx.cacheRev) }

// Require adds compares that must hold at commit, checked in the same etcd
// transaction as the writes: when one fails, Txn writes nothing and fails
// with ErrPrecondition. A fencing token (a claim key's revision) is checked
// this way.
func (tx *Tx) Require(cmps ...clientv3.Cmp) { tx.requires = append(tx.requires, cmps...) }

// Put buffers a write of value under key. opts are those of etcd's put
// (clientv3.WithLease for a key bound to a lease).
func (tx *Tx) Put(key, value string, opts ...clientv3.OpOption) {
	tx.write(key, &txWrite{val: value, opts: opts})
}

// Delete buffers the delete of key.
func (tx *Tx) Delete(key string) { tx.write(key, &txWrite{del: true}) }

func (tx *Tx) write(key string, w *txWrite) {
	if _, ok := tx.writes[key]; !ok {
		tx.order = append(tx.order, key)
	}
	tx.writes[key] = w
}

// Get returns the value of key and whether it exists, as of the
// transaction's revision after its own buffered writes, and guards the key
// (see Tx).
func (tx *Tx) Get(key string) ([]byte, bool, error) {
	if _, ok := tx.guards[key]; !ok {
		r, err := tx.read(key)
		if err != nil {
			return nil, false, err
		}
		tx.guards[key] = r.modRev
	}
	if w, ok := tx.writes[key]; ok {
		if w.del {
			return nil, false, nil
		}
		return []byte(w.val), true, nil
	}
	r := tx.vals[key]
	if r.obj != nil && r.val == nil {
		b, err := marshalOpts.Marshal(r.obj)
		if err != nil {
			return nil, false, fmt.Errorf("store: txn get %q: %w", key, err)
		}
		r.val = b
		tx.vals[key] = r
	}
	return r.val, r.modRev != 0, nil
}

// read returns the value of key at the transaction's revision, from what
// was read already when it can.
func (tx *Tx) read(key string) (txRead, error) {
	if r, ok := tx.vals[key]; ok {
		return r, nil
	}
	kv, rev, err := tx.s.getKV(tx.ctx, key, tx.revOpts()...)
	if err != nil {
		return txRead{}, tx.readErr("get", key, err)
	}
	if tx.rev == 0 {
		tx.rev = rev
	}
	r := txRead{}
	if kv != nil {
		r = txRead{val: kv.Value, modRev: kv.ModRevision}
	}
	tx.vals[key] = r
	return r, nil
}

// Prefetch reads, in one etcd request, those of keys the transaction has
// not read yet, at its revision (the newest when it has read nothing yet),
// so that a later Get of any of them needs no request of its own. It
// guards nothing: a key is guarded when Get returns it, whether it was
// prefetched or not. A transaction that knows the keys it will read
// prefetches them together rather than paying a round trip per Get.
func (tx *Tx) Prefetch(keys ...string) error {
	ops := make([]clientv3.Op, 0, len(keys))
	want := make([]string, 0, len(keys))
	for _, key := range keys {
		if _, ok := tx.vals[key]; ok || slices.Contains(want, key) {
			continue
		}
		want = append(want, key)
		ops = append(ops, clientv3.OpGet(key, tx.revOpts()...))
	}
	switch len(want) {
	case 0:
		return nil
	case 1:
		_, err := tx.read(want[0])
		return err
	}
	resp, err := tx.s.client.Txn(tx.ctx).Then(ops...).Commit()
	if err != nil {
		return tx.readErr("get", want[0], err)
	}
	if tx.rev == 0 {
		tx.rev = resp.Header.Revision
	}
	for i, key := range want {
		rr := resp.Responses[i].GetResponseRange()
		if rr == nil {
			return fmt.Errorf("store: txn get %q: etcd answered no range", key)
		}
		r := txRead{}
		if len(rr.Kvs) > 0 {
			r = txRead{val: rr.Kvs[0].Value, modRev: rr.Kvs[0].ModRevision}
		}
		tx.vals[key] = r
	}
	return nil
}

func (tx *Tx) revOpts() []clientv3.OpOption {
	if tx.rev == 0 {
		return nil
	}
	return []clientv3.OpOption{clientv3.WithRev(tx.rev)}
}

func (tx *Tx) readErr(op, key string, err error) error {
	if isCompacted(err) {
		tx.compacted = true
		return &Error{Op: "txn " + op, Key: key, Err: ErrCompacted, Cause: err, Rev: tx.rev}
	}
	return fmt.Errorf("store: txn %s %q: %w", op, key, err)
}

// List returns every key under prefix with its value, sorted by key, as of
// the transaction's revision after its own buffered writes, and guards the
// prefix (see Tx).
func (tx *Tx) List(prefix string) ([]KV, error) {
	var kvs []KV
	rev, err := tx.s.rangePrefix(tx.ctx, prefix, tx.rev, func(kv *mvccpb.KeyValue) error {
		key := string(kv.Key)
		if _, ok := tx.vals[key]; !ok {
			tx.vals[key] = txRead{val: kv.Value, modRev: kv.ModRevision}
		}
		kvs = append(kvs, KV{Key: key, Value: kv.Value})
		return nil
	})
	if err != nil {
		return nil, tx.readErr("list", prefix, err)
	}
	if tx.rev == 0 {
		tx.rev = rev
	}
	if !slices.Contains(tx.prefixes, prefix) {
		tx.prefixes = append(tx.prefixes, prefix)
	}
	// Overlay the buffered writes under prefix.
	for key, w := range tx.writes {
		if !strings.HasPrefix(key, prefix) {
			continue
		}
		i, found := slices.BinarySearchFunc(kvs, key, func(kv KV, k string) int { return strings.Compare(kv.Key, k) })
		switch {
		case w.del && found:
			kvs = slices.Delete(kvs, i, i+1)
		case !w.del && found:
			kvs[i].Value = []byte(w.val)
		case !w.del:
			kvs = slices.Insert(kvs, i, KV{Key: key, Value: []byte(w.val)})
		}
	}
	return kvs, nil
}
