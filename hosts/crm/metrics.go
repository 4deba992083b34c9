package crm

import (
	"github.com/prometheus/client_golang/prometheus"
)

// metrics of a CRM.
type metrics struct {
	connected   prometheus.Gauge
	streams     *prometheus.CounterVec
	updates     *prometheus.CounterVec
	reports     prometheus.Counter
	acks        *prometheus.CounterVec
	submitted   *prometheus.CounterVec
	syncSeconds prometheus.Histogram
	pending     prometheus.GaugeFunc
}

func newMetrics(reg prometheus.Registerer, pending func() float64) (*metrics, error) {
	m := &metrics{
		connected: prometheus.NewGauge(prometheus.GaugeOpts{Name: "edgekit_crm_connected",
			Help: "1 while the notify stream to the controller is up and synchronised."}),
		streams: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "edgekit_crm_streams_total",
			Help: "Notify streams opened, by how they ended."}, []string{"end"}),
		updates: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "edgekit_crm_updates_received_total",
			Help: "Object updates received from the controller, by kind."}, []string{"kind"}),
		reports: prometheus.NewCounter(prometheus.CounterOpts{Name: "edgekit_crm_reports_sent_total",
			Help: "Info reports sent to the controller (again after a broken stream)."}),
		acks: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "edgekit_crm_report_acks_total",
			Help: "Acknowledgements of Info reports, by verdict."}, []string{"verdict"}),
		submitted: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "edgekit_crm_requests_submitted_total",
			Help: "Requests handed to the engine, by kind."}, []string{"kind"}),
		syncSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "edgekit_crm_initial_sync_seconds",
			Help: "Time from opening a notify stream to the end of its initial sync.", Buckets: prometheus.ExponentialBuckets(0.001, 4, 10)}),
		pending: prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "edgekit_crm_reports_pending",
			Help: "Objects whose Info has changes not yet acknowledged by the controller."}, pending),
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.connected, m.streams, m.updates, m.reports, m.acks, m.submitted, m.syncSeconds, m.pending} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}
