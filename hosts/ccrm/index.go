package ccrm

import (
	"sync"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/hosts/controller"
	"github.com/edgekit/edgekit/internal/store"
)

// workItem is what the scheduler needs of an object: its state, the
// cloudlet it lives on and the key of its claim.
type workItem struct {
	kind, key string
	state     edgeproto.TrackedState
	cloudlet  string
	claimPath string
}

// workIndex is a small summary of the objects the caches follow that need
// work (see needsWork), kept by their event handlers, so that looking for
// work costs no copy of an object and no visit of the many objects that
// need none: the items by kind and key, and whether each cloudlet is one
// the replica serves.
type workIndex struct {
	mu     sync.RWMutex
	items  map[string]workItem // by kind + "/" + key
	served map[string]bool     // cloudlet key string -> served
}

func newWorkIndex() *workIndex {
	return &workIndex{items: map[string]workItem{}, served: map[string]bool{}}
}

// put records the item of an object, or forgets it when the object needs
// no work.
func (x *workIndex) put(it workItem) {
	_, needed := needsWork(it.state)
	x.mu.Lock()
	if needed {
		x.items[it.kind+"/"+it.key] = it
	} else {
		delete(x.items, it.kind+"/"+it.key)
	}
	x.mu.Unlock()
}

// get returns the item of an object that needs work.
func (x *workIndex) get(kind, key string) (workItem, bool) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	it, ok := x.items[kind+"/"+key]
	return it, ok
}

func (x *workIndex) del(kind, key string) {
	x.mu.Lock()
	delete(x.items, kind+"/"+key)
	x.mu.Unlock()
}

func (x *workIndex) setServed(cloudlet string, served bool, exists bool) {
	x.mu.Lock()
	if exists {
		x.served[cloudlet] = served
	} else {
		delete(x.served, cloudlet)
	}
	x.mu.Unlock()
}

// each calls fn for every item (of an object needing work) on a served
// cloudlet.
func (x *workIndex) each(fn func(workItem)) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	for _, it := range x.items {
		if x.served[it.cloudlet] {
			fn(it)
		}
	}
}

// tracked is an object the scheduler indexes.
type tracked interface {
	GetKeyString() string
	GetState() edgeproto.TrackedState
}

// indexer returns the cache handler that keeps the index of one kind and
// wakes the scheduler; cloudletOf names the cloudlet of an object.
func indexer[T tracked](r *Replica, kind string, cloudletOf func(T) *edgeproto.CloudletKey) func(store.Event[T]) {
	return func(ev store.Event[T]) {
		switch ev.Type {
		case store.EventPut:
			st := ev.Object.GetState()
			it := workItem{kind: kind, key: ev.Key, state: st}
			if _, needed := needsWork(st); needed {
				it.cloudlet = cloudletKeyString(cloudletOf(ev.Object))
				it.claimPath = controller.ClaimKey(r.st.Prefix(), kind, ev.Key)
			}
			r.index.put(it)
		case store.EventDelete:
			r.index.del(kind, ev.Key)
		}
		r.wake()
	}
}

// cloudletIndexer also records whether each cloudlet is served.
func cloudletIndexer(r *Replica, kind string) func(store.Event[*edgeproto.Cloudlet]) {
	items := indexer(r, kind, (*edgeproto.Cloudlet).GetKey)
	return func(ev store.Event[*edgeproto.Cloudlet]) {
		switch ev.Type {
		case store.EventPut:
			r.index.setServed(ev.Key, r.serves(ev.Object), true)
		case store.EventDelete:
			r.index.setServed(ev.Key, false, false)
		}
		items(ev)
	}
}
