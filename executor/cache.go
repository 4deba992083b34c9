package executor

import (
	"context"
	"slices"
	"sync"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/fieldmap"
	"google.golang.org/protobuf/proto"
)

// Object is what the typed containers of this package hold: a generated
// message that applies partial updates to itself.
type Object[T any] interface {
	proto.Message
	CopyInFields(src T, fm *fieldmap.FieldMap) int
}

// Cache is a typed, concurrency-safe map of objects keyed by KeyString,
// applying partial updates with CopyInFields: the receiving side of a
// Sender in a host that keeps reports in memory (the CRM sends its caches
// back over the notify stream). It is itself a Sender.
//
// Get and List return clones; Apply and Put store clones, so callers never
// share memory with the cache.
type Cache[T Object[T]] struct {
	mu       sync.RWMutex
	objs     map[string]T
	onChange func(key string, obj T, fields *fieldmap.FieldMap)
}

// NewCache returns an empty cache.
func NewCache[T Object[T]]() *Cache[T] { return &Cache[T]{objs: map[string]T{}} }

var _ Sender[*edgeproto.ClusterInstInfo] = (*Cache[*edgeproto.ClusterInstInfo])(nil)

// OnChange registers fn to run, with the cache's lock held and in report
// order, after every Apply or Send that changed something (obj is a clone of
// the stored object). Register it before the cache is used.
func (c *Cache[T]) OnChange(fn func(key string, obj T, fields *fieldmap.FieldMap)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.onChange = fn
}

// Send applies a report; it implements Sender and never fails.
func (c *Cache[T]) Send(_ context.Context, info T, fields *fieldmap.FieldMap) error {
	c.Apply(info, fields)
	return nil
}

// Apply copies the flagged fields of info into the stored object of the same
// key, creating it when absent, and returns how many fields changed. A nil
// fields copies every field.
func (c *Cache[T]) Apply(info T, fields *fieldmap.FieldMap) int {
	key := KeyString(info)
	c.mu.Lock()
	defer c.mu.Unlock()
	cur, ok := c.objs[key]
	changed := 0
	if !ok {
		cur = info.ProtoReflect().New().Interface().(T)
		c.objs[key] = cur
		changed = 1
	}
	if fields == nil {
		if !proto.Equal(cur, info) {
			changed++
		}
		cur = fieldmap.Clone(info)
		c.objs[key] = cur
	} else {
		changed += cur.CopyInFields(info, fields)
	}
	if changed > 0 && c.onChange != nil {
		c.onChange(key, fieldmap.Clone(cur), fields)
	}
	return changed
}

// Put stores a clone of obj, replacing the object of the same key.
func (c *Cache[T]) Put(obj T) { c.Apply(obj, nil) }

// Get returns a clone of the object stored under key.
func (c *Cache[T]) Get(key string) (T, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	obj, ok := c.objs[key]
	if !ok {
		var zero T
		return zero, false
	}
	return fieldmap.Clone(obj), true
}

// Delete removes the object stored under key.
func (c *Cache[T]) Delete(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.objs, key)
}

// Keys returns the stored keys, sorted.
func (c *Cache[T]) Keys() []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.keysLocked()
}

// List returns clones of the stored objects, sorted by key.
func (c *Cache[T]) List() []T {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]T, 0, len(c.objs))
	for _, k := range c.keysLocked() {
		out = append(out, fieldmap.Clone(c.objs[k]))
	}
	return out
}

func (c *Cache[T]) keysLocked() []string {
	keys := make([]string, 0, len(c.objs))
	for k := range c.objs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
