package ccrm

import (
	"sync"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/internal/store"
)

// workItem is what the scheduler needs of an object: its state and the
// cloudlet it lives on.
type workItem struct {
	kind, key string
	state     edgeproto.TrackedState
	cloudlet  string
}

// workIndex is a small summary of the objects the caches follow, kept by
// their event handlers, so that looking for work costs no copy of an
// object: the items by kind and key, and whether each cloudlet is one the
// replica serves.
type workIndex struct {
	mu     sync.RWMutex
	items  map[string]workItem // by kind + "/" + key
	served map[string]bool     // cloudlet key string -> served
}

func newWorkIndex() *workIndex {
	return &workIndex{items: map[string]workItem{}, served: map[string]bool{}}
}

func (x *workIndex) put(it workItem) {
	x.mu.Lock()
	x.items[it.kind+"/"+it.key] = it
	x.mu.Unlock()
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

// each calls fn for every item on a served cloudlet.
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
			r.index.put(workItem{kind: kind, key: ev.Key, state: ev.Object.GetState(), cloudlet: cloudletKeyString(cloudletOf(ev.Object))})
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
