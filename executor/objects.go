package executor

import (
	"github.com/edgekit/edgekit/edgeproto"
	"google.golang.org/protobuf/proto"
)

// Getter reads one kind of object by key from the host (its caches in the
// CRM, etcd in the CCRM). The engine reads what an operation depends on
// when the operation starts, never keeps what it read, and never modifies
// it (it hands the platform clones).
type Getter[K, V any] interface {
	Get(key K) (V, bool)
}

// GetterFunc adapts a function to Getter.
type GetterFunc[K, V any] func(key K) (V, bool)

// Get calls f(key).
func (f GetterFunc[K, V]) Get(key K) (V, bool) { return f(key) }

// Objects are the lookups the engine needs besides the object it works on:
// a ClusterInst needs its Cloudlet; an AppInst its ClusterInst (which must
// be READY), its App and its Cloudlet; a cloudlet trust-policy update its
// TrustPolicy; a TrustPolicyException the AppInsts it applies to. A nil
// Getter finds nothing.
type Objects struct {
	Cloudlets     Getter[*edgeproto.CloudletKey, *edgeproto.Cloudlet]
	ClusterInsts  Getter[*edgeproto.ClusterKey, *edgeproto.ClusterInst]
	Apps          Getter[*edgeproto.AppKey, *edgeproto.App]
	AppInsts      Getter[*edgeproto.AppInstKey, *edgeproto.AppInst]
	TrustPolicies Getter[*edgeproto.TrustPolicyKey, *edgeproto.TrustPolicy]
}

// CacheGetter reads a Cache by key message (see KeyString).
func CacheGetter[K proto.Message, V Object[V]](c *Cache[V]) Getter[K, V] {
	return GetterFunc[K, V](func(key K) (V, bool) { return c.Get(KeyString(key)) })
}

func get[K, V any](g Getter[K, V], key K) (V, bool) {
	if g == nil {
		var zero V
		return zero, false
	}
	return g.Get(key)
}
