package controller

import (
	"context"
	"fmt"
	"unicode"
	"unicode/utf8"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/fieldmap"
	"github.com/edgekit/edgekit/internal/apifields"
	"github.com/edgekit/edgekit/internal/store"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// MaxKeyFieldLen is the longest value a string field of an object key may
// have, in bytes.
const MaxKeyFieldLen = 128

// kind describes one kind of stored object the API serves: how it is
// stored, who owns it and which of its fields users may set.
type kind[T store.Object[T]] struct {
	name  string
	store *store.Kind[T]
	// owner is the organization that owns an object; "" means only admins
	// may change it (and everyone may see it).
	owner func(T) string
	// check validates an object about to be created (required fields,
	// values), beyond its key and enums.
	check func(T) error
	// readers, when set, are the organizations besides the owner that may
	// see an object.
	readers func(T) []string
	// parents are the objects obj depends on (see refs.go); nil for none.
	parents func(obj T) []ref
	// cache follows the kind while the controller serves; Show reads it.
	cache *store.Cache[T]
}

// txGet reads the object of key in tx through the kind's cache: no
// request while the cache runs and is synchronised, a read checked at
// commit like any other, and a run again on etcd's values when the copy
// was stale or the run failed (see store.Cache.TxGet).
func (k *kind[T]) txGet(tx *store.Tx, key string) (T, bool, error) {
	return txGet(tx, k.store, k.cache, key)
}

// refOf is the ref of obj as a child.
func (k *kind[T]) refOf(obj T) ref { return ref{kind: k.name, key: obj.GetKeyString()} }

// linkRefs records in tx what obj depends on.
func (k *kind[T]) linkRefs(c *Controller, tx *store.Tx, obj T) {
	if k.parents != nil {
		c.putRefs(tx, k.refOf(obj), k.parents(obj)...)
	}
}

// unlinkRefs removes in tx the records of what obj depends on.
func (k *kind[T]) unlinkRefs(c *Controller, tx *store.Tx, obj T) {
	if k.parents != nil {
		c.dropRefs(tx, k.refOf(obj), k.parents(obj)...)
	}
}

func newKind[T store.Object[T]](s *store.Store, owner func(T) string, check func(T) error) *kind[T] {
	k := store.NewKind[T](s)
	return &kind[T]{name: k.Name(), store: k, owner: owner, check: check, cache: store.NewCache(k)}
}

// schema returns the field schema of T.
func (k *kind[T]) schema() *fieldmap.Schema {
	var zero T
	return zero.FieldSchema()
}

// keyFlag is the flag of the object_key field ("1" for every edgeproto
// object).
const keyFlag = "1"

// checkCreate validates an object a user asks to create: a complete key,
// defined enums, no field only the controller sets (the access table of
// internal/apifields, which edgectl shares), and the kind's own rules. The
// error is an InvalidArgument naming the field.
func (k *kind[T]) checkCreate(obj T) error {
	if !obj.ProtoReflect().IsValid() {
		return invalidf("%s: no object in the request", k.name)
	}
	if err := checkKey(obj); err != nil {
		return invalidf("%s: %v", k.name, err)
	}
	if err := fieldmap.ValidateEnums(obj); err != nil {
		return invalidf("%s: %v", k.name, err)
	}
	if err := apifields.CheckCreate(obj); err != nil {
		return invalidf("%v", err)
	}
	if k.check != nil {
		if err := k.check(obj); err != nil {
			return invalidf("%s: %v", k.name, err)
		}
	}
	return nil
}

// parseUpdate validates the flags of an update: known flags of the kind,
// list actions only where allowed, and none of the key, the fields only
// the controller sets or the fields fixed at create (internal/apifields).
// The error is an InvalidArgument naming the flag.
func (k *kind[T]) parseUpdate(obj T, flags []string) (*fieldmap.FieldMap, error) {
	if !obj.ProtoReflect().IsValid() {
		return nil, invalidf("%s: no object in the request", k.name)
	}
	if err := checkKey(obj); err != nil {
		return nil, invalidf("%s: %v", k.name, err)
	}
	if len(flags) == 0 {
		return nil, invalidf("%s: update names no fields", k.name)
	}
	schema := k.schema()
	fm, err := schema.Parse(flags...)
	if err != nil {
		return nil, invalidf("%v", err)
	}
	if err := apifields.CheckUpdate(fm); err != nil {
		return nil, invalidf("%v", err)
	}
	if err := fieldmap.ValidateEnums(obj); err != nil {
		return nil, invalidf("%s: %v", k.name, err)
	}
	return fm, nil
}

// checkKey checks that obj has its key and that every string of the key is
// non-empty (but a version), at most MaxKeyFieldLen bytes of printable
// UTF-8.
func checkKey(obj proto.Message) error {
	m := obj.ProtoReflect()
	fd := m.Descriptor().Fields().ByName("key")
	if fd == nil || fd.Message() == nil {
		return fmt.Errorf("%s has no key field", m.Descriptor().Name())
	}
	if !m.Has(fd) {
		return fmt.Errorf("key is missing")
	}
	return checkKeyMessage("key", m.Get(fd).Message())
}

func checkKeyMessage(path string, m protoreflect.Message) error {
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		p := path + "." + string(fd.Name())
		switch {
		case fd.Message() != nil:
			if !m.Has(fd) {
				return fmt.Errorf("%s is missing", p)
			}
			if err := checkKeyMessage(p, m.Get(fd).Message()); err != nil {
				return err
			}
		case fd.Kind() == protoreflect.StringKind:
			s := m.Get(fd).String()
			if s == "" && fd.Name() != "version" {
				return fmt.Errorf("%s is empty", p)
			}
			if err := checkKeyString(s); err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
		}
	}
	return nil
}

func checkKeyString(s string) error {
	if len(s) > MaxKeyFieldLen {
		return fmt.Errorf("longer than %d bytes (%d)", MaxKeyFieldLen, len(s))
	}
	if !utf8.ValidString(s) {
		return fmt.Errorf("not valid UTF-8")
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return fmt.Errorf("holds the non-printable character %U", r)
		}
	}
	return nil
}

// Owners of each kind.
func cloudletOwner(c *edgeproto.Cloudlet) string       { return c.GetKey().GetOrganization() }
func clusterOwner(c *edgeproto.ClusterInst) string     { return c.GetKey().GetOrganization() }
func appOwner(a *edgeproto.App) string                 { return a.GetKey().GetOrganization() }
func appInstOwner(a *edgeproto.AppInst) string         { return a.GetKey().GetOrganization() }
func trustPolicyOwner(p *edgeproto.TrustPolicy) string { return p.GetKey().GetOrganization() }
func flavorOwner(*edgeproto.Flavor) string             { return "" }
func tpeOwner(e *edgeproto.TrustPolicyException) string {
	return e.GetKey().GetAppKey().GetOrganization()
}

// list returns every object of the kind as of now: from the cache, once it
// has applied every change up to the store's current revision (so a caller
// reads its own writes), or from the store when the cache is not running.
func (k *kind[T]) list(ctx context.Context, c *Controller) ([]T, error) {
	return listFresh(ctx, c, k.store, k.cache)
}

// walkFresh calls fn with every object of a kind in key order, as of one
// revision at or after the store's current revision (so that a caller
// reads its own writes), without holding more than one object at a time:
// it walks a snapshot of the cache (taken in constant time once the cache
// has caught up) when the cache is running, else the store a page at a
// time at one revision. The objects are the cache's own: fn must not
// change them. An error of fn ends the walk and is returned as it is;
// errors of the store come back as API errors.
func walkFresh[T store.Object[T]](ctx context.Context, c *Controller, k *store.Kind[T], cache *store.Cache[T], fn func(T) error) error {
	if c.showWhole.Load() {
		// The former way, kept for benchmarks: every object copied first.
		objs, err := listFresh(ctx, c, k, cache)
		if err != nil {
			return apiError(err)
		}
		for _, obj := range objs {
			if err := fn(obj); err != nil {
				return err
			}
		}
		return nil
	}
	if c.cachesRunning.Load() {
		select {
		case <-cache.Synced():
			rev, err := c.currentRev(ctx)
			if err != nil {
				return apiError(err)
			}
			if err := cache.WaitRev(ctx, rev); err != nil {
				return apiError(err)
			}
			var fnErr error
			cache.Snapshot().Range("", func(_ string, obj T) bool {
				fnErr = fn(obj)
				return fnErr == nil
			})
			return fnErr
		default:
		}
	}
	var fnErr error
	if _, err := k.Walk(ctx, func(obj T) error {
		fnErr = fn(obj)
		return fnErr
	}); err != nil {
		if fnErr != nil {
			return fnErr
		}
		return apiError(err)
	}
	return nil
}

// listFresh lists a kind from its cache when the cache is running and has
// caught up with the store's current revision, else from the store.
func listFresh[T store.Object[T]](ctx context.Context, c *Controller, k *store.Kind[T], cache *store.Cache[T]) ([]T, error) {
	if c.cachesRunning.Load() {
		select {
		case <-cache.Synced():
			rev, err := c.currentRev(ctx)
			if err != nil {
				return nil, err
			}
			if err := cache.WaitRev(ctx, rev); err != nil {
				return nil, err
			}
			return cache.List(), nil
		default:
		}
	}
	objs, _, err := k.List(ctx)
	return objs, err
}
