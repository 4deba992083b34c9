package store

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/btree"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/metadata"
)

// Bounds of the wait between two attempts at watching after a failure.
const (
	cacheMinBackoff = 50 * time.Millisecond
	cacheMaxBackoff = 2 * time.Second
	// progressEvery is how often WaitRev asks etcd for the watch's progress
	// while it waits.
	progressEvery = 100 * time.Millisecond
)

// Cache is a copy of every object of a kind, kept current by a watch.
//
// Start lists the kind, then watches it from the revision after the list.
// When the watch breaks (a member stops, its leader is lost) it watches
// again from the revision after the last one it applied, so no change is
// missed or seen twice. When that revision was compacted meanwhile, it
// lists again and reports the difference as events: a synthetic delete
// for every object that vanished, a put for every object that is new or
// changed. Start can be called again after it returned and resumes the
// same way.
//
// Handlers (OnEvent) see every change in revision order, after the cache
// has applied it; the first list reports every object as a put. A value
// that does not decode is logged, dropped from the cache and reported to
// handlers as an EventError naming its key.
type Cache[T Message[T]] struct {
	k        *Kind[T]
	logger   *slog.Logger
	stream   string // names the cache's watch stream (see watchContext)
	handlers []func(Event[T])

	mu    sync.RWMutex
	items map[string]cacheEntry[T]
	// tree holds the same entries in key order; Snapshot clones it
	// lazily (copy on write), so a long read walks one revision without
	// copying every object or holding mu.
	tree *btree.BTreeG[cacheItem[T]]
	// written holds the writes of this process's transactions that the
	// watch has not applied yet, by key; writtenOrder the same in the
	// order they were recorded, for pruning (see cache_write.go).
	written      map[string]cacheWrite[T]
	writtenOrder []writtenKey
	rev          int64         // every change up to rev is applied
	revCh        chan struct{} // closed when rev advances
	relist       bool          // the next round lists first

	synced   chan struct{}
	syncOnce sync.Once
	running  atomic.Bool

	watchMu     sync.Mutex
	cancelWatch context.CancelFunc // ends the current watch; see breakWatch
}

type cacheEntry[T any] struct {
	obj    T
	modRev int64
}

// cacheItem is an entry of the cache's ordered tree.
type cacheItem[T any] struct {
	key string
	cacheEntry[T]
}

// treeDegree is the degree of the cache's tree: nodes of up to 63 items.
const treeDegree = 32

func newTree[T any]() *btree.BTreeG[cacheItem[T]] {
	return btree.NewG(treeDegree, func(a, b cacheItem[T]) bool { return a.key < b.key })
}

// CacheOption configures a Cache.
type CacheOption[T Message[T]] func(*Cache[T])

// OnEvent adds a handler called with every change the cache applies, in
// order, from the goroutine running Start. It gets its own copy of the
// object; a slow handler delays the cache.
func OnEvent[T Message[T]](fn func(Event[T])) CacheOption[T] {
	return func(c *Cache[T]) { c.handlers = append(c.handlers, fn) }
}

// NewCache returns a cache of the objects of k; Start fills it.
func NewCache[T Message[T]](k *Kind[T], opts ...CacheOption[T]) *Cache[T] {
	c := &Cache[T]{
		k:      k,
		logger: k.s.logger.With("cache", k.name),
		items:  map[string]cacheEntry[T]{},
		tree:   newTree[T](),
		revCh:  make(chan struct{}),
		synced: make(chan struct{}),
		stream: k.name + "#" + strconv.FormatUint(cacheStreams.Add(1), 10),
	}
	for _, o := range opts {
		o(c)
	}
	return c
}

// Kind returns the kind the cache copies.
func (c *Cache[T]) Kind() *Kind[T] { return c.k }

// Synced is closed once the first list is applied.
func (c *Cache[T]) Synced() <-chan struct{} { return c.synced }

// Rev returns the revision up to which every change is applied.
func (c *Cache[T]) Rev() int64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.rev
}

// Get returns a copy of the object of key and whether the cache has it.
//
// It is the newest copy the cache knows: a write of a transaction of this
// process shows as soon as it committed (see Cache.TxGet).
func (c *Cache[T]) Get(key string) (T, bool) {
	c.mu.RLock()
	obj, _, ok, _ := c.lookup(key)
	c.mu.RUnlock()
	if !ok {
		var zero T
		return zero, false
	}
	return obj.Clone(), true
}

// Len returns the number of objects in the cache.
func (c *Cache[T]) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.items)
}

// List returns copies of every object in the cache, sorted by key.
func (c *Cache[T]) List() []T {
	c.mu.RLock()
	out := make([]T, 0, c.tree.Len())
	c.tree.Ascend(func(it cacheItem[T]) bool {
		out = append(out, it.obj.Clone())
		return true
	})
	c.mu.RUnlock()
	return out
}

// Snapshot returns the content of the cache as it is now, at one
// revision, to read without holding the cache: taking it costs the same
// whatever the number of objects (the cache's ordered tree is shared and
// copied on write), changes applied afterwards do not show in it, and
// reading it never delays the cache. A caller that must read its own
// writes calls WaitRev first.
func (c *Cache[T]) Snapshot() *Snapshot[T] {
	c.mu.Lock() // Clone marks the shared tree copy-on-write: one at a time
	defer c.mu.Unlock()
	return &Snapshot[T]{tree: c.tree.Clone(), rev: c.rev}
}

// Snapshot is the content of a Cache at one revision (see Cache.Snapshot).
// It can be read from several goroutines at once.
type Snapshot[T Message[T]] struct {
	tree *btree.BTreeG[cacheItem[T]]
	rev  int64
}

// Rev returns the revision of the snapshot: every change up to it shows,
// none after it.
func (s *Snapshot[T]) Rev() int64 { return s.rev }

// Len returns the number of objects in the snapshot.
func (s *Snapshot[T]) Len() int { return s.tree.Len() }

// Range calls fn with the objects of the snapshot in key order, from the
// first key not before from ("" for all), until fn returns false. The
// objects are the cache's own: fn must not change them (Clone first).
func (s *Snapshot[T]) Range(from string, fn func(key string, obj T) bool) {
	s.tree.AscendGreaterOrEqual(cacheItem[T]{key: from}, func(it cacheItem[T]) bool {
		return fn(it.key, it.obj)
	})
}

// WaitRev waits until the cache has applied every change up to rev (a
// revision returned by a write, for reading one's own writes), or ctx
// ends. It asks etcd for the watch's progress while it waits, so that it
// returns also when rev is a write of another kind.
func (c *Cache[T]) WaitRev(ctx context.Context, rev int64) error {
	var timer *time.Timer
	for {
		c.mu.RLock()
		cur, ch := c.rev, c.revCh
		c.mu.RUnlock()
		if cur >= rev {
			return nil
		}
		c.requestProgress()
		if timer == nil {
			timer = time.NewTimer(progressEvery)
			defer timer.Stop()
		} else {
			timer.Reset(progressEvery)
		}
		select {
		case <-ch:
		case <-timer.C:
		case <-ctx.Done():
			return &Error{Op: "wait", Kind: c.k.name, Err: ctx.Err(), Rev: rev}
		}
	}
}

// requestProgress asks etcd to tell the cache's watch the current
// revision. The request goes to the watch stream of the same metadata as
// the cache's watch (see watchContext).
func (c *Cache[T]) requestProgress() {
	ctx, cancel := context.WithTimeout(c.watchContext(), time.Second)
	defer cancel()
	if err := c.k.s.client.RequestProgress(ctx); err != nil {
		c.logger.Debug("store: request watch progress", "err", err)
	}
}

// cacheStreams numbers the caches of the process, each of which watches on
// a stream of its own.
var cacheStreams atomic.Uint64

// watchContext is the context the cache's watch and its progress requests
// derive from: "require leader", and metadata naming this cache, so that
// the client runs them on a watch stream of their own. etcd answers a
// progress request only when every watch of its stream started at or
// before the current revision; on a stream shared with other watches of
// the process, one started ahead of it (from the revision after a read)
// would keep the cache from learning of writes to other keys until the
// next write, and WaitRev would wait for it.
func (c *Cache[T]) watchContext() context.Context {
	return metadata.AppendToOutgoingContext(clientv3.WithRequireLeader(context.Background()), "edgekit-cache", c.stream)
}

// Start fills the cache and keeps it current until ctx ends, then returns
// nil. Failures of etcd are logged and retried with back-off. It returns
// an error only when the cache is running already.
func (c *Cache[T]) Start(ctx context.Context) error {
	if !c.running.CompareAndSwap(false, true) {
		return errors.New("store: cache of " + c.k.name + " is running already")
	}
	defer c.running.Store(false)
	c.k.s.addSink(c)
	defer c.k.s.removeSink(c)
	backoff := cacheMinBackoff
	for ctx.Err() == nil {
		c.mu.RLock()
		list := c.rev == 0 || c.relist
		c.mu.RUnlock()
		if list {
			if err := c.list(ctx); err != nil {
				if ctx.Err() != nil {
					break
				}
				c.logger.Warn("store: cache list failed", "err", err)
				sleep(ctx, backoff)
				backoff = min(2*backoff, cacheMaxBackoff)
				continue
			}
		}
		progressed, err := c.watch(ctx)
		if ctx.Err() != nil {
			break
		}
		if progressed {
			backoff = cacheMinBackoff
		}
		if errors.Is(err, ErrCompacted) {
			c.logger.Info("store: cache resumes after a compaction by listing again", "err", err)
			c.mu.Lock()
			c.relist = true
			c.mu.Unlock()
			continue
		}
		c.logger.Warn("store: cache watch ended; watching again", "err", err, "rev", c.Rev())
		sleep(ctx, backoff)
		backoff = min(2*backoff, cacheMaxBackoff)
	}
	return nil
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// list reads every object and applies the difference to the cache.
func (c *Cache[T]) list(ctx context.Context) error {
	var kvs []*mvccpb.KeyValue
	rev, err := c.k.s.rangePrefix(ctx, c.k.prefix, 0, func(kv *mvccpb.KeyValue) error {
		kvs = append(kvs, kv)
		return nil
	})
	if err != nil {
		return c.k.wrapEtcd("cache list", "", err)
	}
	objs, errs := c.k.decodeAll("cache list", kvs)
	fresh := make(map[string]cacheEntry[T], len(kvs))
	tree := newTree[T]()
	var bad []Event[T]
	for i, kv := range kvs {
		key := string(kv.Key[len(c.k.prefix):])
		if errs[i] != nil {
			c.logger.Error("store: cache skips a bad value", "key", key, "err", errs[i])
			bad = append(bad, Event[T]{Type: EventError, Key: key, Rev: kv.ModRevision, Err: errs[i]})
			continue
		}
		e := cacheEntry[T]{obj: objs[i], modRev: kv.ModRevision}
		fresh[key] = e
		tree.ReplaceOrInsert(cacheItem[T]{key: key, cacheEntry: e})
	}
	c.mu.Lock()
	var evs []Event[T]
	for key, old := range c.items {
		if _, ok := fresh[key]; !ok {
			evs = append(evs, Event[T]{Type: EventDelete, Key: key, Object: old.obj, Rev: rev})
		}
	}
	for key, e := range fresh {
		if old, ok := c.items[key]; !ok || old.modRev != e.modRev {
			evs = append(evs, Event[T]{Type: EventPut, Key: key, Object: e.obj, Rev: e.modRev})
		}
	}
	evs = append(evs, bad...)
	slices.SortFunc(evs, func(a, b Event[T]) int { return strings.Compare(a.Key, b.Key) })
	c.items = fresh
	c.tree = tree
	c.relist = false
	c.advance(rev)
	c.mu.Unlock()
	c.syncOnce.Do(func() { close(c.synced) })
	c.dispatch(evs)
	return nil
}

// advance moves rev forward and wakes WaitRev. c.mu is held.
func (c *Cache[T]) advance(rev int64) {
	if rev > c.rev {
		c.rev = rev
		close(c.revCh)
		c.revCh = make(chan struct{})
		if len(c.writtenOrder) > 0 {
			c.pruneWritten()
		}
	}
}

// watch applies changes from rev+1 until the watch ends, and says whether
// it applied any.
func (c *Cache[T]) watch(ctx context.Context) (progressed bool, err error) {
	wctx, cancel := context.WithCancel(c.watchContext())
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	c.watchMu.Lock()
	c.cancelWatch = cancel
	c.watchMu.Unlock()

	from := c.Rev() + 1
	wch := c.k.s.client.Watch(wctx, c.k.prefix, clientv3.WithPrefix(), clientv3.WithRev(from),
		clientv3.WithProgressNotify())
	for resp := range wch {
		if err := resp.Err(); err != nil {
			return progressed, c.k.watchErr(resp)
		}
		if resp.IsProgressNotify() {
			c.mu.Lock()
			c.advance(resp.Header.Revision)
			c.mu.Unlock()
			continue
		}
		if len(resp.Events) == 0 {
			continue
		}
		c.apply(resp.Events)
		progressed = true
	}
	return progressed, errors.New("watch channel closed")
}

// apply applies the events of one watch response and dispatches them.
func (c *Cache[T]) apply(events []*clientv3.Event) {
	evs := make([]Event[T], 0, len(events))
	c.mu.Lock()
	for _, e := range events {
		ev := c.k.event(e, false)
		switch ev.Type {
		case EventPut:
			e := cacheEntry[T]{obj: ev.Object, modRev: ev.Rev}
			c.items[ev.Key] = e
			c.tree.ReplaceOrInsert(cacheItem[T]{key: ev.Key, cacheEntry: e})
		case EventDelete:
			if old, ok := c.items[ev.Key]; ok {
				ev.Object = old.obj
			}
			delete(c.items, ev.Key)
			c.tree.Delete(cacheItem[T]{key: ev.Key})
		case EventError:
			c.logger.Error("store: cache drops an object whose new value is bad", "key", ev.Key, "err", ev.Err)
			delete(c.items, ev.Key)
			c.tree.Delete(cacheItem[T]{key: ev.Key})
		}
		evs = append(evs, ev)
		c.advance(e.Kv.ModRevision)
	}
	c.mu.Unlock()
	c.dispatch(evs)
}

// dispatch hands events to the handlers, each with its own copy.
func (c *Cache[T]) dispatch(evs []Event[T]) {
	for _, h := range c.handlers {
		for _, ev := range evs {
			if ev.Type != EventError {
				ev.Object = ev.Object.Clone() // a nil object clones to nil
			}
			h(ev)
		}
	}
}

// breakWatch ends the current watch as a broken connection would; Start
// watches again from the revision after the last one applied.
func (c *Cache[T]) breakWatch() {
	c.watchMu.Lock()
	defer c.watchMu.Unlock()
	if c.cancelWatch != nil {
		c.cancelWatch()
	}
}
