package ccrm

import (
	"context"
	"log/slog"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/protobuf/encoding/protojson"
)

// settingsKey is where the controller keeps the region's Settings (one
// value, protojson): the timeouts of every operation.
func (r *Replica) settingsKey() string { return r.st.Prefix() + "Settings" }

// followSettings keeps the region's Settings current in every engine (new
// operations use the new timeouts) until ctx ends.
func (r *Replica) followSettings(ctx context.Context) {
	for ctx.Err() == nil {
		resp, err := r.cli.Get(ctx, r.settingsKey())
		if err != nil {
			pause(ctx, 500*time.Millisecond)
			continue
		}
		if len(resp.Kvs) == 1 {
			r.applySettings(resp.Kvs[0].Value)
		}
		wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
		for wr := range r.cli.Watch(wctx, r.settingsKey(), clientv3.WithRev(resp.Header.Revision+1)) {
			if wr.Err() != nil {
				break
			}
			for _, ev := range wr.Events {
				if ev.Type == clientv3.EventTypePut {
					r.applySettings(ev.Kv.Value)
				}
			}
		}
		cancel()
	}
}

func (r *Replica) applySettings(val []byte) {
	s := &edgeproto.Settings{}
	if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(val, s); err != nil {
		r.log.Warn("unreadable settings: keeping the previous ones", slog.Any("error", err))
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.settings = s
	for _, ce := range r.engines {
		ce.eng.SetSettings(s)
	}
}

// currentSettings returns the region's settings as last read (nil before).
func (r *Replica) currentSettings() *edgeproto.Settings {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.settings
}
