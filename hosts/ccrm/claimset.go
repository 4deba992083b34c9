package ccrm

import (
	"context"
	"log/slog"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// keySet is a watch-fed set of the etcd keys under a prefix (the claims),
// with the value of each.
type keySet struct {
	cli     *clientv3.Client
	prefix  string
	log     *slog.Logger
	changed func()

	mu   sync.RWMutex
	keys map[string]string
	// deleted is the revision of the latest delete the watch saw.
	deleted int64
}

// lastDelete is the revision of the latest delete of a key of the set
// seen so far.
func (s *keySet) lastDelete() int64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.deleted
}

func newKeySet(cli *clientv3.Client, prefix string, log *slog.Logger, changed func()) *keySet {
	return &keySet{cli: cli, prefix: prefix, log: log, changed: changed, keys: map[string]string{}}
}

func (s *keySet) has(key string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, ok := s.keys[key]
	return ok
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
					s.deleted = max(s.deleted, ev.Kv.ModRevision)
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
