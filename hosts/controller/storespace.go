package controller

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/edgekit/edgekit/hosts/controller/ui"
	"github.com/edgekit/edgekit/internal/etcd"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// The status page's row of a store that is full, shown to everyone.
const (
	storeSpaceKind = "Store"
	storeSpaceKey  = "etcd"
)

// storeSpace carries what an etcd.SpaceGuard sees of the store's space to
// /metrics and the status page, and refuses the API's writes that add
// data while the store is full, so that deletes (which are writes too for
// the objects with a lifecycle: they request the deletion) still get
// through before etcd's NOSPACE alarm refuses them all.
type storeSpace struct {
	guard   *etcd.SpaceGuard
	alarm   prometheus.Gauge
	full    prometheus.Gauge
	size    prometheus.Gauge
	quota   prometheus.Gauge
	mu      sync.Mutex
	state   etcd.SpaceState
	changed chan struct{} // closed and replaced when NoSpace or Full change
}

func newStoreSpace(reg prometheus.Registerer) (*storeSpace, error) {
	gauge := func(name, help string) prometheus.Gauge {
		return prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "edgekit", Subsystem: "controller", Name: name, Help: help})
	}
	s := &storeSpace{
		alarm: gauge("store_nospace_alarm",
			"1 while etcd's NOSPACE alarm is on (the store's database reached its quota: writes are refused), 0 otherwise."),
		full: gauge("store_full",
			"1 while the API refuses writes that add data because the store is full (the NOSPACE alarm, or a database at 95% of its quota), 0 otherwise."),
		size:    gauge("store_db_size_bytes", "Size of the store's etcd database file (the largest member's), which the quota bounds."),
		quota:   gauge("store_quota_bytes", "Database quota of the embedded etcd; 0 with an external cluster (its own quota applies)."),
		changed: make(chan struct{}),
	}
	for _, c := range []prometheus.Collector{s.alarm, s.full, s.size, s.quota} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// observe records what the guard saw; it is an etcd.SpaceGuardConfig.Observe.
func (s *storeSpace) observe(st etcd.SpaceState) {
	if st.NoSpace {
		s.alarm.Set(1)
	} else {
		s.alarm.Set(0)
	}
	if st.NoSpace || st.Full {
		s.full.Set(1)
	} else {
		s.full.Set(0)
	}
	s.size.Set(float64(st.DBSize))
	s.quota.Set(float64(st.Quota))
	s.mu.Lock()
	defer s.mu.Unlock()
	if st.NoSpace != s.state.NoSpace || st.Full != s.state.Full {
		close(s.changed)
		s.changed = make(chan struct{})
	}
	s.state = st
}

// fullReason returns why writes that add data are refused now, or "".
func (s *storeSpace) fullReason() string {
	s.mu.Lock()
	st := s.state
	s.mu.Unlock()
	switch {
	case st.NoSpace:
		return "etcd's NOSPACE alarm is on: the region's store reached its database quota"
	case st.Full:
		return fmt.Sprintf("the region's store is nearly full (its database holds %s of its %s quota)",
			etcd.FormatBytes(st.DBSize), etcd.FormatBytes(st.Quota))
	}
	return ""
}

// refuses reports whether a full store refuses the API method: every
// method of the user API that writes, but its deletes.
func refuses(fullMethod string) bool {
	if !strings.HasPrefix(fullMethod, "/edgeproto.") {
		return false // resource managers' reports, notify, health, reflection
	}
	name := fullMethod[strings.LastIndexByte(fullMethod, '/')+1:]
	for _, p := range []string{"Show", "Watch", "Delete"} {
		if strings.HasPrefix(name, p) {
			return false
		}
	}
	return true
}

func (s *storeSpace) refusal(fullMethod string) error {
	if !refuses(fullMethod) {
		return nil
	}
	why := s.fullReason()
	if why == "" {
		return nil
	}
	return status.Error(codes.ResourceExhausted, why+
		"; writes that add data are refused until deleting objects that are no longer needed frees space (reads and deletes work)")
}

func (s *storeSpace) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if err := s.refusal(info.FullMethod); err != nil {
		return nil, err
	}
	return handler(ctx, req)
}

func (s *storeSpace) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	if err := s.refusal(info.FullMethod); err != nil {
		return err
	}
	return handler(srv, ss)
}

// uiSource shows a full store on the status page as one row.
func (s *storeSpace) uiSource() ui.Source {
	return ui.SourceFunc(func(ctx context.Context, out ui.Emitter) error {
		for {
			s.mu.Lock()
			st, changed := s.state, s.changed
			s.mu.Unlock()
			switch {
			case st.NoSpace:
				out.Put(ui.Row{Kind: storeSpaceKind, Key: storeSpaceKey, State: "NOSPACE_ALARM", Message: "etcd's NOSPACE alarm is on: " +
					"the store's database reached its quota. Writes are refused, reads and deletes work; deleting objects that are " +
					"no longer needed frees space, and writes resume without a restart."})
			case st.Full:
				out.Put(ui.Row{Kind: storeSpaceKind, Key: storeSpaceKey, State: "NEARLY_FULL", Message: fmt.Sprintf(
					"The store's database holds %s of its %s quota: writes that add data are refused, reads and deletes work; "+
						"deleting objects that are no longer needed frees space.", etcd.FormatBytes(st.DBSize), etcd.FormatBytes(st.Quota))})
			default:
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
