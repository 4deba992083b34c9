package store

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/edgekit/edgekit/atrest"
	"github.com/edgekit/edgekit/fieldmap"
)

// Message is what a Kind keeps: a generated message (T is a pointer to the
// generated struct, such as *edgeproto.ClusterInst). A message with a key
// is an Object, whose GetKeyString names it in the store. A message
// without one (such as Settings) is a singleton: its one object has the
// empty key string.
type Message[T any] interface {
	proto.Message
	CopyInFields(src T, fm *fieldmap.FieldMap) int
	FieldSchema() *fieldmap.Schema
	Clone() T
}

// Object is a Message with a key.
type Object[T any] interface {
	Message[T]
	GetKeyString() string
}

// KeyOf returns the key string of obj: its GetKeyString, or "" for a
// message without a key.
func KeyOf(obj any) string {
	if k, ok := obj.(interface{ GetKeyString() string }); ok {
		return k.GetKeyString()
	}
	return ""
}

// Kind reads and writes the objects of one type T. It is safe for
// concurrent use.
type Kind[T Message[T]] struct {
	s      *Store
	name   string
	prefix string
	mt     protoreflect.MessageType
	recent *recent[T]
	// sealed: the values are encrypted (the store has a key and T a
	// debug_redact field).
	sealed bool
}

// KindOption configures a Kind.
type KindOption func(*kindConfig)

type kindConfig struct{ name string }

// KindName sets the kind's name, the key element after the region, in place
// of the message's proto name: for two message types of the same name in
// different proto packages.
func KindName(name string) KindOption { return func(c *kindConfig) { c.name = name } }

// NewKind returns the kind of T in s. It panics when the kind's name is
// not a valid key element or another message type has it in s already: a
// programming error that no input can cause.
func NewKind[T Message[T]](s *Store, opts ...KindOption) *Kind[T] {
	var zero T
	mt := zero.ProtoReflect().Type()
	desc := mt.Descriptor()
	cfg := kindConfig{name: string(desc.Name())}
	for _, o := range opts {
		o(&cfg)
	}
	if err := checkName("kind name", cfg.name); err != nil {
		panic(err)
	}
	sensitive := hasRedacted(desc)
	if err := s.register(cfg.name, string(desc.FullName()), sensitive); err != nil {
		panic(err)
	}
	return &Kind[T]{s: s, name: cfg.name, prefix: s.prefix + cfg.name + "/", mt: mt, recent: newRecent[T](s.recentSize),
		sealed: sensitive && s.env != nil}
}

// Sealed reports whether the kind's values are encrypted in etcd.
func (k *Kind[T]) Sealed() bool { return k.sealed }

// Name returns the kind's name ("ClusterInst").
func (k *Kind[T]) Name() string { return k.name }

// Store returns the store k belongs to.
func (k *Kind[T]) Store() *Store { return k.s }

// Prefix returns the prefix of every key of the kind:
// "/edgekit/<region>/<Kind>/".
func (k *Kind[T]) Prefix() string { return k.prefix }

// Path returns the etcd key of the object whose key string is key.
func (k *Kind[T]) Path(key string) string { return k.prefix + key }

// KeyFromPath returns the key string of an etcd key of this kind, and
// false when the etcd key is not one.
func (k *Kind[T]) KeyFromPath(path string) (string, bool) {
	return strings.CutPrefix(path, k.prefix)
}

// New returns a new empty T.
func (k *Kind[T]) New() T { return k.mt.New().Interface().(T) }

func (k *Kind[T]) err(op, key string, sentinel error) *Error {
	return &Error{Op: op, Kind: k.name, Key: key, Err: sentinel}
}

var (
	marshalOpts   = protojson.MarshalOptions{}
	unmarshalOpts = protojson.UnmarshalOptions{DiscardUnknown: true}
)

// encode renders obj as the value stored in etcd: protojson, sealed for
// a sealed kind.
func (k *Kind[T]) encode(op string, obj T) (string, error) {
	val, _, err := k.encodeSized(op, obj)
	return val, err
}

// encodeSized is encode, also returning the size of the protojson
// encoding before sealing.
func (k *Kind[T]) encodeSized(op string, obj T) (string, int, error) {
	key := KeyOf(obj)
	b, err := marshalOpts.Marshal(obj)
	if err != nil {
		return "", 0, &Error{Op: op, Kind: k.name, Key: key, Err: ErrBadValue, Cause: err}
	}
	size := len(b)
	if k.sealed {
		if b, err = k.s.env.Seal(b, []byte(k.Path(key))); err != nil {
			return "", 0, &Error{Op: op, Kind: k.name, Key: key, Err: ErrSeal, Cause: err}
		}
	}
	return string(b), size, nil
}

// decode reads the value stored under key. A value that is not protojson
// of T, or whose object has another key, is an ErrBadValue naming key. A
// sealed value is opened first (whatever the kind: it may have been
// written by a build that seals more kinds); one that does not open is an
// ErrBadValue naming key whose cause matches atrest.ErrUndecryptable.
func (k *Kind[T]) decode(op, key string, data []byte) (T, error) {
	if atrest.IsSealed(data) {
		var err error
		if data, err = k.s.open(k.Path(key), data); err != nil {
			var zero T
			return zero, &Error{Op: op, Kind: k.name, Key: key, Err: ErrBadValue, Cause: err}
		}
	}
	obj := k.New()
	if err := unmarshalOpts.Unmarshal(data, obj); err != nil {
		var zero T
		return zero, &Error{Op: op, Kind: k.name, Key: key, Err: ErrBadValue, Cause: err}
	}
	if got := KeyOf(obj); got != key {
		var zero T
		return zero, &Error{Op: op, Kind: k.name, Key: key, Err: ErrBadValue,
			Cause: fmt.Errorf("the value holds the object of key %q", got)}
	}
	return obj, nil
}

// Decode decodes a value of the object of key read from etcd outside the
// store (for example within a caller's own etcd transaction). A value
// that is not protojson of T, or whose object has another key, is an
// ErrBadValue naming key.
func (k *Kind[T]) Decode(key string, data []byte) (T, error) { return k.decode("decode", key, data) }

// Get returns the object of key and its ModRevision (the revision of its
// last write), or an ErrNotFound error. The read is linearizable.
func (k *Kind[T]) Get(ctx context.Context, key string) (obj T, modRev int64, err error) {
	start := time.Now()
	defer func() { k.s.observe("get", k.name, start, 0, err) }()
	kv, _, err := k.s.getKV(ctx, k.Path(key))
	if err != nil {
		return obj, 0, fmt.Errorf("store: get %s %q: %w", k.name, key, err)
	}
	if kv == nil {
		return obj, 0, k.err("get", key, ErrNotFound)
	}
	obj, err = k.decode("get", key, kv.Value)
	if err != nil {
		return obj, 0, err
	}
	k.recent.put(key, obj, kv.ModRevision)
	return obj, kv.ModRevision, nil
}

// List returns every object of the kind sorted by key, all as of one
// revision, which it returns too. It reads in pages (WithPageSize), so any
// number of objects can be listed; when the revision is compacted while
// pages are read, it starts again, a bounded number of times.
func (k *Kind[T]) List(ctx context.Context) (objs []T, rev int64, err error) {
	start := time.Now()
	defer func() { k.s.observe("list", k.name, start, 0, err) }()
	for attempt := 1; ; attempt++ {
		var kvs []*mvccpb.KeyValue
		rev, err = k.s.rangePrefix(ctx, k.prefix, 0, func(kv *mvccpb.KeyValue) error {
			kvs = append(kvs, kv)
			return nil
		})
		if err == nil {
			objs, errs := k.decodeAll("list", kvs)
			for _, err := range errs {
				if err != nil {
					return nil, 0, err
				}
			}
			return objs, rev, nil
		}
		if !isCompacted(err) || attempt >= k.s.maxAttempts {
			return nil, 0, k.wrapEtcd("list", "", err)
		}
	}
}

// Walk calls fn with every object of the kind in key order, as of one
// revision, which it returns: it reads etcd a page at a time (the store's
// page size) at the revision of the first page, decoding each value as it
// goes, so it holds one page whatever the number of objects. An error of
// fn ends the walk and is returned as it is. A value that does not
// decode is an ErrBadValue naming its key; a revision compacted during
// the walk an ErrCompacted (the objects before it were passed to fn
// already, so Walk does not start again).
func (k *Kind[T]) Walk(ctx context.Context, fn func(T) error) (rev int64, err error) {
	start := time.Now()
	defer func() { k.s.observe("walk", k.name, start, 0, err) }()
	var fnErr error
	rev, err = k.s.rangePrefix(ctx, k.prefix, 0, func(kv *mvccpb.KeyValue) error {
		obj, err := k.decode("walk", string(kv.Key[len(k.prefix):]), kv.Value)
		if err != nil {
			return err
		}
		if err := fn(obj); err != nil {
			fnErr = err
			return err
		}
		return nil
	})
	switch {
	case fnErr != nil:
		return 0, fnErr
	case err != nil:
		return 0, k.wrapEtcd("walk", "", err)
	}
	return rev, nil
}

// parallelDecodeMin is the number of values from which decodeAll decodes
// on every CPU: protojson decoding dominates the cost of a long list.
const parallelDecodeMin = 256

// decodeAll decodes values of this kind, on several goroutines when there
// are many. errs[i] is the error of kvs[i], or nil; objs[i] is then zero.
func (k *Kind[T]) decodeAll(op string, kvs []*mvccpb.KeyValue) (objs []T, errs []error) {
	objs = make([]T, len(kvs))
	errs = make([]error, len(kvs))
	decode := func(lo, hi int) {
		for i := lo; i < hi; i++ {
			objs[i], errs[i] = k.decode(op, string(kvs[i].Key[len(k.prefix):]), kvs[i].Value)
		}
	}
	workers := min(runtime.GOMAXPROCS(0), len(kvs)/parallelDecodeMin)
	if workers <= 1 {
		decode(0, len(kvs))
		return objs, errs
	}
	var wg sync.WaitGroup
	chunk := (len(kvs) + workers - 1) / workers
	for lo := 0; lo < len(kvs); lo += chunk {
		wg.Go(func() { decode(lo, min(lo+chunk, len(kvs))) })
	}
	wg.Wait()
	return objs, errs
}

// wrapEtcd wraps an error of etcd, mapping a compaction to ErrCompacted
// and a refusal for lack of space to ErrNoSpace.
// Errors of this package pass as they are.
func (k *Kind[T]) wrapEtcd(op, key string, err error) error {
	if _, ok := err.(*Error); ok {
		return err
	}
	if isCompacted(err) {
		return &Error{Op: op, Kind: k.name, Key: key, Err: ErrCompacted, Cause: err}
	}
	if e := noSpace(op, k.name, key, err); e != nil {
		return e
	}
	if key == "" {
		return fmt.Errorf("store: %s %s: %w", op, k.name, err)
	}
	return fmt.Errorf("store: %s %s %q: %w", op, k.name, key, err)
}

// Create writes obj when no object has its key, and returns the revision of
// the write; otherwise an ErrAlreadyExists error.
func (k *Kind[T]) Create(ctx context.Context, obj T) (rev int64, err error) {
	start := time.Now()
	defer func() { k.s.observe("create", k.name, start, 0, err) }()
	key := KeyOf(obj)
	val, err := k.encode("create", obj)
	if err != nil {
		return 0, err
	}
	p := k.Path(key)
	resp, err := k.s.client.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(p), "=", 0)).
		Then(clientv3.OpPut(p, val)).
		Commit()
	if err != nil {
		return 0, k.wrapEtcd("create", key, err)
	}
	if !resp.Succeeded {
		return 0, k.err("create", key, ErrAlreadyExists)
	}
	k.recent.put(key, obj, resp.Header.Revision)
	return resp.Header.Revision, nil
}

// Put writes obj whether or not an object has its key, and returns the
// revision of the write.
func (k *Kind[T]) Put(ctx context.Context, obj T) (rev int64, err error) {
	start := time.Now()
	defer func() { k.s.observe("put", k.name, start, 0, err) }()
	key := KeyOf(obj)
	val, err := k.encode("put", obj)
	if err != nil {
		return 0, err
	}
	resp, err := k.s.client.Put(ctx, k.Path(key), val)
	if err != nil {
		return 0, k.wrapEtcd("put", key, err)
	}
	k.recent.put(key, obj, resp.Header.Revision)
	return resp.Header.Revision, nil
}
