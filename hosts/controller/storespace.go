package controller

import (
	"context"
	"sync"

	"github.com/edgekit/edgekit/hosts/controller/ui"
	"github.com/edgekit/edgekit/internal/etcd"
	"github.com/prometheus/client_golang/prometheus"
)

// Status page row of the store's NOSPACE alarm, shown to everyone while
// the alarm is on.
const (
	storeSpaceKind  = "Store"
	storeSpaceKey   = "etcd"
	storeSpaceState = "NOSPACE_ALARM"
	storeSpaceMsg   = "etcd's NOSPACE alarm is on: the store's database reached its quota. Writes are refused, reads and deletes work; " +
		"deleting objects that are no longer needed frees space, and writes resume without a restart."
)

// storeSpace carries the state of etcd's NOSPACE alarm (as an
// etcd.SpaceGuard sees it) to /metrics and the status page.
type storeSpace struct {
	guard *etcd.SpaceGuard
	gauge prometheus.Gauge

	mu      sync.Mutex
	on      bool
	changed chan struct{} // closed and replaced at each change
}

func newStoreSpace(reg prometheus.Registerer) (*storeSpace, error) {
	s := &storeSpace{
		gauge: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "edgekit", Subsystem: "controller", Name: "store_nospace_alarm",
			Help: "1 while etcd's NOSPACE alarm is on (the store's database reached its quota: writes are refused), 0 otherwise.",
		}),
		changed: make(chan struct{}),
	}
	if err := reg.Register(s.gauge); err != nil {
		return nil, err
	}
	return s, nil
}

// set records the alarm's state; it is an etcd.SpaceGuardConfig.OnChange.
func (s *storeSpace) set(on bool) {
	if on {
		s.gauge.Set(1)
	} else {
		s.gauge.Set(0)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.on != on {
		s.on = on
		close(s.changed)
		s.changed = make(chan struct{})
	}
}

// uiSource shows the alarm on the status page as one row while it is on.
func (s *storeSpace) uiSource() ui.Source {
	return ui.SourceFunc(func(ctx context.Context, out ui.Emitter) error {
		for {
			s.mu.Lock()
			on, changed := s.on, s.changed
			s.mu.Unlock()
			if on {
				out.Put(ui.Row{Kind: storeSpaceKind, Key: storeSpaceKey, State: storeSpaceState, Message: storeSpaceMsg})
			} else {
				out.Delete(storeSpaceKind, storeSpaceKey)
			}
			select {
			case <-ctx.Done():
				return nil
			case <-changed:
			}
		}
	})
}
