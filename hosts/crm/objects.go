package crm

import (
	"sync/atomic"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/internal/notify"
	"google.golang.org/protobuf/proto"
)

// objKind is one kind of object the CRM receives, kept in a typed cache.
type objKind struct {
	name string
	// put stores obj and returns the object it replaced (nil: none).
	put func(obj proto.Message) proto.Message
	// del removes the object of key and returns it (nil: none).
	del  func(key string) proto.Message
	keys func() []string
	list func() []proto.Message
}

func newObjKind[T executor.Object[T]](c *executor.Cache[T]) *objKind {
	var zero T
	return &objKind{
		name: notify.KindOf(zero),
		put: func(obj proto.Message) proto.Message {
			o := obj.(T)
			prev, ok := c.Get(executor.KeyString(o))
			c.Put(o)
			if !ok {
				return nil
			}
			return prev
		},
		del: func(key string) proto.Message {
			prev, ok := c.Get(key)
			if !ok {
				return nil
			}
			c.Delete(key)
			return prev
		},
		keys: c.Keys,
		list: func() []proto.Message {
			objs := c.List()
			out := make([]proto.Message, len(objs))
			for i, o := range objs {
				out[i] = o
			}
			return out
		},
	}
}

// objects are the CRM's typed caches of what the controller sends: the
// engine reads its lookups from them.
type objects struct {
	settings      atomic.Pointer[edgeproto.Settings]
	cloudlets     *executor.Cache[*edgeproto.Cloudlet]
	flavors       *executor.Cache[*edgeproto.Flavor]
	trustPolicies *executor.Cache[*edgeproto.TrustPolicy]
	apps          *executor.Cache[*edgeproto.App]
	clusters      *executor.Cache[*edgeproto.ClusterInst]
	appInsts      *executor.Cache[*edgeproto.AppInst]
	tpes          *executor.Cache[*edgeproto.TrustPolicyException]
	kinds         map[string]*objKind
	order         []*objKind // dependencies first
}

func newObjects() *objects {
	o := &objects{
		cloudlets:     executor.NewCache[*edgeproto.Cloudlet](),
		flavors:       executor.NewCache[*edgeproto.Flavor](),
		trustPolicies: executor.NewCache[*edgeproto.TrustPolicy](),
		apps:          executor.NewCache[*edgeproto.App](),
		clusters:      executor.NewCache[*edgeproto.ClusterInst](),
		appInsts:      executor.NewCache[*edgeproto.AppInst](),
		tpes:          executor.NewCache[*edgeproto.TrustPolicyException](),
		kinds:         map[string]*objKind{},
	}
	o.settings.Store(&edgeproto.Settings{})
	o.order = []*objKind{newObjKind(o.flavors), newObjKind(o.cloudlets), newObjKind(o.trustPolicies),
		newObjKind(o.apps), newObjKind(o.clusters), newObjKind(o.appInsts), newObjKind(o.tpes)}
	for _, k := range o.order {
		o.kinds[k.name] = k
	}
	return o
}

// lookups are the engine's Getters over the caches.
func (o *objects) lookups() executor.Objects {
	return executor.Objects{
		Cloudlets:     executor.CacheGetter[*edgeproto.CloudletKey](o.cloudlets),
		ClusterInsts:  executor.CacheGetter[*edgeproto.ClusterKey](o.clusters),
		Apps:          executor.CacheGetter[*edgeproto.AppKey](o.apps),
		AppInsts:      executor.CacheGetter[*edgeproto.AppInstKey](o.appInsts),
		TrustPolicies: executor.CacheGetter[*edgeproto.TrustPolicyKey](o.trustPolicies),
		// What the controller wants on the cloudlet, for start-up
		// reconciliation.
		ClusterInstsOn: executor.CacheLister(o.clusters),
		AppInstsOn:     executor.CacheLister(o.appInsts),
	}
}

// infoObject maps an Info kind to the kind of the object it reports on.
// (a TrustPolicyException reports on itself).
var infoObject = map[string]string{"CloudletInfo": "Cloudlet", "ClusterInstInfo": "ClusterInst", "AppInstInfo": "AppInst",
	"TrustPolicyException": "TrustPolicyException"}

// exists reports whether the object an Info of infoKind and key reports on
// is in the caches.
func (o *objects) exists(infoKind, key string) bool {
	switch infoObject[infoKind] {
	case "Cloudlet":
		_, ok := o.cloudlets.Get(key)
		return ok
	case "ClusterInst":
		_, ok := o.clusters.Get(key)
		return ok
	case "AppInst":
		_, ok := o.appInsts.Get(key)
		return ok
	case "TrustPolicyException":
		_, ok := o.tpes.Get(key)
		return ok
	}
	return false
}
