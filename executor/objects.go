package executor

import (
	"context"
	"errors"
	"fmt"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/fieldmap"
	"google.golang.org/protobuf/proto"
)

// Getter reads one kind of object by key from the host (its caches in the
// CRM, etcd in the CCRM). The engine reads what an operation depends on
// when the operation starts, never keeps what it read, and never modifies
// it (it hands the platform clones).
//
// Get returns an error matching ErrNotFound (a *NotFoundError, see
// NotFound) when the host does not know the object, and any other error
// when it could not tell (a store that is unreachable, a context that
// ended). The engine treats the two differently: an object that is gone
// may be worked around (a delete proceeds with the key alone), an unknown
// answer never is (the operation reports its error state).
type Getter[K, V any] interface {
	Get(ctx context.Context, key K) (V, error)
}

// GetterFunc adapts a function to Getter.
type GetterFunc[K, V any] func(ctx context.Context, key K) (V, error)

// Get calls f(ctx, key).
func (f GetterFunc[K, V]) Get(ctx context.Context, key K) (V, error) { return f(ctx, key) }

var _ Getter[string, string] = GetterFunc[string, string](nil)

// Lister lists the objects of one kind that the host has on a cloudlet,
// whatever their state: the host's side of start-up reconciliation (see
// Engine.Reconcile). An error means the host could not tell; the engine
// then changes nothing.
type Lister[V any] interface {
	List(ctx context.Context, cloudlet *edgeproto.CloudletKey) ([]V, error)
}

// ListerFunc adapts a function to Lister.
type ListerFunc[V any] func(ctx context.Context, cloudlet *edgeproto.CloudletKey) ([]V, error)

// List calls f(ctx, cloudlet).
func (f ListerFunc[V]) List(ctx context.Context, cloudlet *edgeproto.CloudletKey) ([]V, error) {
	return f(ctx, cloudlet)
}

var _ Lister[string] = ListerFunc[string](nil)

// Objects are the lookups the engine needs besides the object it works on:
// a ClusterInst needs its Cloudlet; an AppInst its ClusterInst (which must
// be READY), its App and its Cloudlet; a cloudlet trust-policy update its
// TrustPolicy; a TrustPolicyException the AppInsts it applies to. A nil
// Getter finds nothing (every Get is ErrNotFound).
//
// ClusterInstsOn and AppInstsOn list what the host has on a cloudlet; only
// Reconcile uses them, and it refuses to run without them (a missing list
// must never read as "the host wants nothing").
type Objects struct {
	Cloudlets     Getter[*edgeproto.CloudletKey, *edgeproto.Cloudlet]
	ClusterInsts  Getter[*edgeproto.ClusterKey, *edgeproto.ClusterInst]
	Apps          Getter[*edgeproto.AppKey, *edgeproto.App]
	AppInsts      Getter[*edgeproto.AppInstKey, *edgeproto.AppInst]
	TrustPolicies Getter[*edgeproto.TrustPolicyKey, *edgeproto.TrustPolicy]

	ClusterInstsOn Lister[*edgeproto.ClusterInst]
	AppInstsOn     Lister[*edgeproto.AppInst]
}

// CacheGetter reads a Cache by key message (see KeyString). An absent key
// is a *NotFoundError naming the kind and the key.
func CacheGetter[K proto.Message, V Object[V]](c *Cache[V]) Getter[K, V] {
	kind := kindOf[V]()
	return GetterFunc[K, V](func(_ context.Context, key K) (V, error) {
		ks := KeyString(key)
		if v, ok := c.Get(ks); ok {
			return v, nil
		}
		var zero V
		return zero, NotFound(kind, ks)
	})
}

// OnCloudlet is an object that lives on a cloudlet (ClusterInst, AppInst).
type OnCloudlet[V any] interface {
	Object[V]
	GetCloudletKey() *edgeproto.CloudletKey
}

// CacheLister lists the objects of a Cache whose cloudlet key is the one
// asked for, sorted by key.
func CacheLister[V OnCloudlet[V]](c *Cache[V]) Lister[V] {
	return ListerFunc[V](func(_ context.Context, cloudlet *edgeproto.CloudletKey) ([]V, error) {
		want := KeyString(cloudlet)
		var out []V
		for _, v := range c.List() {
			if KeyString(v.GetCloudletKey()) == want {
				out = append(out, v)
			}
		}
		return out, nil
	})
}

// lookup reads key through g (nil finds nothing) and returns a clone. The
// error of a failed lookup names what was looked up and why (role, "cloudlet
// of cluster"), and wraps the Getter's error.
func lookup[K proto.Message, V proto.Message](ctx context.Context, g Getter[K, V], role string, key K) (V, error) {
	var zero V
	if g == nil {
		return zero, fmt.Errorf("%s: %w", role, NotFound(kindOf[V](), KeyString(key)))
	}
	v, err := g.Get(ctx, key)
	switch {
	case errors.Is(err, ErrNotFound):
		return zero, fmt.Errorf("%s: %w", role, err)
	case err != nil:
		return zero, fmt.Errorf("%s %s: %w", role, KeyString(key), err)
	}
	if !v.ProtoReflect().IsValid() {
		// A Getter that answers (nil, nil) found nothing.
		return zero, fmt.Errorf("%s: %w", role, NotFound(kindOf[V](), KeyString(key)))
	}
	return fieldmap.Clone(v), nil
}

// kindOf is the message name of V ("ClusterInst").
func kindOf[V proto.Message]() string {
	var zero V
	return string(zero.ProtoReflect().Descriptor().Name())
}

// dependency looks up what an operation depends on. When stub is not nil
// (a delete, which can proceed with the key alone), an object the host no
// longer has is replaced by stub(); any other failure is returned, so that
// the engine never acts on a made-up object when the host could not tell.
func dependency[K proto.Message, V proto.Message](ctx context.Context, g Getter[K, V], role string, key K, stub func() V) (V, error) {
	v, err := lookup(ctx, g, role, key)
	if stub != nil && errors.Is(err, ErrNotFound) {
		return stub(), nil
	}
	return v, err
}
