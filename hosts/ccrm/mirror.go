package ccrm

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/edgekit/edgekit/internal/store"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// mirror is a watch-fed copy of the objects of one kind: it lists them,
// then follows the watch from the list's revision, and lists again when
// the watch breaks (a compaction, a lost member). Every change calls
// changed. The copy may lag etcd: the replica decides what to claim from
// it, and reads the object again from etcd once it holds the claim.
type mirror[T store.Object[T]] struct {
	k       *store.Kind[T]
	log     *slog.Logger
	changed func()

	mu     sync.RWMutex
	objs   map[string]T
	synced chan struct{}
	once   sync.Once
}

func newMirror[T store.Object[T]](k *store.Kind[T], log *slog.Logger, changed func()) *mirror[T] {
	return &mirror[T]{k: k, log: log, changed: changed, objs: map[string]T{}, synced: make(chan struct{})}
}

func (m *mirror[T]) get(key string) (T, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	o, ok := m.objs[key]
	return o, ok
}

// list returns the objects sorted by key.
func (m *mirror[T]) list() []T {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make([]T, 0, len(m.objs))
	for _, k := range slices.Sorted(maps.Keys(m.objs)) {
		out = append(out, m.objs[k])
	}
	return out
}

// start follows the kind until ctx ends.
func (m *mirror[T]) start(ctx context.Context) {
	for ctx.Err() == nil {
		objs, rev, err := m.k.List(ctx)
		if err != nil {
			if ctx.Err() == nil {
				m.log.Warn("list", slog.String("kind", m.k.Name()), slog.Any("error", err))
			}
			pause(ctx, 200*time.Millisecond)
			continue
		}
		fresh := make(map[string]T, len(objs))
		for _, o := range objs {
			fresh[o.GetKeyString()] = o
		}
		m.mu.Lock()
		m.objs = fresh
		m.mu.Unlock()
		m.once.Do(func() { close(m.synced) })
		m.changed()
		for ev := range m.k.Watch(ctx, rev+1) {
			switch ev.Type {
			case store.EventPut:
				m.mu.Lock()
				m.objs[ev.Key] = ev.Object
				m.mu.Unlock()
			case store.EventDelete:
				m.mu.Lock()
				delete(m.objs, ev.Key)
				m.mu.Unlock()
			case store.EventError:
				if ctx.Err() == nil {
					m.log.Debug("watch broken: listing again", slog.String("kind", m.k.Name()), slog.Any("error", ev.Err))
				}
			}
			m.changed()
		}
	}
}

// keySet is a watch-fed set of the etcd keys under a prefix (the claims),
// with the value of each.
type keySet struct {
	cli     *clientv3.Client
	prefix  string
	log     *slog.Logger
	changed func()

	mu     sync.RWMutex
	keys   map[string]string
	synced chan struct{}
	once   sync.Once
}

func newKeySet(cli *clientv3.Client, prefix string, log *slog.Logger, changed func()) *keySet {
	return &keySet{cli: cli, prefix: prefix, log: log, changed: changed, keys: map[string]string{}, synced: make(chan struct{})}
}

func (s *keySet) has(key string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, ok := s.keys[key]
	return ok
}

// snapshot returns a copy of the keys and values.
func (s *keySet) snapshot() map[string]string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return maps.Clone(s.keys)
}

func (s *keySet) start(ctx context.Context) {
	for ctx.Err() == nil {
		resp, err := s.cli.Get(ctx, s.prefix, clientv3.WithPrefix())
		if err != nil {
			if ctx.Err() == nil {
				s.log.Warn("list claims", slog.Any("error", err))
			}
			pause(ctx, 200*time.Millisecond)
			continue
		}
		fresh := map[string]string{}
		for _, kv := range resp.Kvs {
			fresh[string(kv.Key)] = string(kv.Value)
		}
		s.mu.Lock()
		s.keys = fresh
		s.mu.Unlock()
		s.once.Do(func() { close(s.synced) })
		s.changed()
		wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
		for wr := range s.cli.Watch(wctx, s.prefix, clientv3.WithPrefix(), clientv3.WithRev(resp.Header.Revision+1)) {
			if wr.Err() != nil {
				break
			}
			s.mu.Lock()
			for _, ev := range wr.Events {
				if ev.Type == clientv3.EventTypeDelete {
					delete(s.keys, string(ev.Kv.Key))
				} else {
					s.keys[string(ev.Kv.Key)] = string(ev.Kv.Value)
				}
			}
			s.mu.Unlock()
			s.changed()
		}
		cancel()
	}
}

// pause waits d or until ctx ends.
func pause(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
