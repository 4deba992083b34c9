package allocator

import (
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/edgekit/edgekit/fluidos"
)

// Metrics measures what an allocator does. A nil *Metrics measures
// nothing. No label carries an identifier, a key or a secret.
type Metrics struct {
	activation *prometheus.HistogramVec
	teardown   *prometheus.HistogramVec
	failures   *prometheus.CounterVec
	restarts   *prometheus.CounterVec
}

// NewMetrics registers the allocator's metrics with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	buckets := prometheus.ExponentialBuckets(0.05, 2, 12)
	m := &Metrics{
		activation: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "edgekit", Subsystem: "fluidos", Name: "provider_allocation_seconds", Help: "Time from a sale to its allocation ACTIVE, by flavor type.", Buckets: buckets,
		}, []string{"type"}),
		teardown: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "edgekit", Subsystem: "fluidos", Name: "provider_teardown_seconds", Help: "Time to tear down an allocation, by flavor type.", Buckets: buckets,
		}, []string{"type"}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "edgekit", Subsystem: "fluidos", Name: "provider_allocation_failures_total", Help: "Allocations that failed, by flavor type.",
		}, []string{"type"}),
		restarts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "edgekit", Subsystem: "fluidos", Name: "provider_service_restarts_total", Help: "Restarts of services that became unhealthy, by flavor type.",
		}, []string{"type"}),
	}
	reg.MustRegister(m.activation, m.teardown, m.failures, m.restarts)
	return m
}

func typeLabel(t fluidos.FlavorType) string {
	return strings.ToLower(strings.TrimPrefix(t.String(), "FLAVOR_TYPE_"))
}

func (m *Metrics) active(t fluidos.FlavorType, d time.Duration) {
	if m != nil {
		m.activation.WithLabelValues(typeLabel(t)).Observe(d.Seconds())
	}
}

func (m *Metrics) tornDown(t fluidos.FlavorType, d time.Duration) {
	if m != nil {
		m.teardown.WithLabelValues(typeLabel(t)).Observe(d.Seconds())
	}
}

func (m *Metrics) failed(t fluidos.FlavorType) {
	if m != nil {
		m.failures.WithLabelValues(typeLabel(t)).Inc()
	}
}

func (m *Metrics) restarted(t fluidos.FlavorType) {
	if m != nil {
		m.restarts.WithLabelValues(typeLabel(t)).Inc()
	}
}
