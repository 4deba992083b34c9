package notify

import (
	"errors"

	"github.com/edgekit/edgekit/internal/notify"
	notifyv1 "github.com/edgekit/edgekit/proto/edgekit/notify/v1"
	"github.com/prometheus/client_golang/prometheus"
)

// metrics of the notify server.
type metrics struct {
	sessions    prometheus.Gauge
	refused     *prometheus.CounterVec
	updates     *prometheus.CounterVec
	reports     *prometheus.CounterVec
	queueFull   prometheus.Counter
	syncSeconds prometheus.Histogram
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		sessions: prometheus.NewGauge(prometheus.GaugeOpts{Name: "edgekit_controller_notify_sessions",
			Help: "CRMs connected to the notify server."}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "edgekit_controller_notify_refused_total",
			Help: "Notify streams refused, by reason."}, []string{"reason"}),
		updates: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "edgekit_controller_notify_updates_sent_total",
			Help: "Object updates sent to CRMs, by kind."}, []string{"kind"}),
		reports: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "edgekit_controller_notify_reports_total",
			Help: "Info reports received from CRMs, by verdict."}, []string{"verdict"}),
		queueFull: prometheus.NewCounter(prometheus.CounterOpts{Name: "edgekit_controller_notify_queue_full_total",
			Help: "Notify streams ended because the CRM read too slowly."}),
		syncSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "edgekit_controller_notify_initial_sync_seconds",
			Help: "Time from a CRM's Hello to the end of its initial sync.", Buckets: prometheus.ExponentialBuckets(0.001, 4, 10)}),
	}
	if reg == nil {
		return m, nil
	}
	// A server started again in the same process on the same registerer
	// (a controller restarted in place, as controllertest.Env.Restart
	// does) counts on with the collectors registered before, instead of
	// failing to start.
	var err error
	if m.sessions, err = register(reg, m.sessions); err != nil {
		return nil, err
	}
	if m.refused, err = register(reg, m.refused); err != nil {
		return nil, err
	}
	if m.updates, err = register(reg, m.updates); err != nil {
		return nil, err
	}
	if m.reports, err = register(reg, m.reports); err != nil {
		return nil, err
	}
	if m.queueFull, err = register(reg, m.queueFull); err != nil {
		return nil, err
	}
	if m.syncSeconds, err = register(reg, m.syncSeconds); err != nil {
		return nil, err
	}
	return m, nil
}

// register registers c with reg and returns it, or returns the collector
// of the same description registered already (of the same type).
func register[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	err := reg.Register(c)
	if err == nil {
		return c, nil
	}
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing, nil
		}
	}
	return c, err
}

// sent counts a sent message.
func (m *metrics) sent(r *notifyv1.ConnectResponse) {
	u := r.GetUpdate()
	if u == nil {
		return
	}
	kind := "unknown"
	if obj, err := notify.ObjectOf(u); err == nil {
		kind = notify.KindOf(obj)
	}
	m.updates.WithLabelValues(kind).Inc()
}
