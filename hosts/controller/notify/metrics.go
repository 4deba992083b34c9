package notify

import (
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
	for _, c := range []prometheus.Collector{m.sessions, m.refused, m.updates, m.reports, m.queueFull, m.syncSeconds} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
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
