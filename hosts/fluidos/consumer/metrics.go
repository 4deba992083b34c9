package consumer

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/edgekit/edgekit/fluidos"
)

// Metrics measures what a consumer does. A nil *Metrics measures nothing.
type Metrics struct {
	discoveries prometheus.Histogram
	peers       *prometheus.CounterVec
	solvers     *prometheus.CounterVec
	solverTime  prometheus.Histogram
}

// NewMetrics registers the consumer's metrics with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		discoveries: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "fluidos_discovery_seconds", Help: "Time a discovery across every peer took.", Buckets: prometheus.DefBuckets,
		}),
		peers: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "fluidos_discovery_peer_answers_total", Help: "Peer answers to discoveries, by result.",
		}, []string{"result"}),
		solvers: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "fluidos_solvers_total", Help: "Solvers that ended, by result.",
		}, []string{"result"}),
		solverTime: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "fluidos_solver_seconds", Help: "Time from a solver's start to its end.", Buckets: prometheus.DefBuckets,
		}),
	}
	reg.MustRegister(m.discoveries, m.peers, m.solvers, m.solverTime)
	return m
}

func (m *Metrics) discovered(d time.Duration) {
	if m != nil {
		m.discoveries.Observe(d.Seconds())
	}
}

func (m *Metrics) peerAnswered(r *fluidos.PeerResult) {
	if m == nil {
		return
	}
	res := "ok"
	if r.GetError() != "" {
		res = "error"
	}
	m.peers.WithLabelValues(res).Inc()
}

func (m *Metrics) solverDone(err error, d time.Duration) {
	if m == nil {
		return
	}
	res := "solved"
	if err != nil {
		res = "failed"
	}
	m.solvers.WithLabelValues(res).Inc()
	m.solverTime.Observe(d.Seconds())
}
