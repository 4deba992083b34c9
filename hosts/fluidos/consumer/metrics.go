package consumer

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/edgekit/edgekit/fluidos"
)

// Metrics measures what a consumer does. A nil *Metrics measures nothing.
//
// Every node has a consumer, also one that only sells: its series appear
// once the node ran a discovery or a solver, so that a node that never
// did exports none of them (the histograms are vectors without labels,
// whose one series is made on first use).
type Metrics struct {
	discoveries *prometheus.HistogramVec
	peers       *prometheus.CounterVec
	solvers     *prometheus.CounterVec
	solverTime  *prometheus.HistogramVec
}

// NewMetrics registers the consumer's metrics with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	const ns, sub = "edgekit", "fluidos"
	m := &Metrics{
		discoveries: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Subsystem: sub,
			Name: "consumer_discovery_seconds", Help: "Time a discovery across every peer took.", Buckets: prometheus.DefBuckets,
		}, nil),
		peers: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub,
			Name: "consumer_discovery_peer_answers_total", Help: "Peer answers to discoveries, by result.",
		}, []string{"result"}),
		solvers: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub,
			Name: "consumer_solvers_total", Help: "Solvers that ended, by result.",
		}, []string{"result"}),
		solverTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Subsystem: sub,
			Name: "consumer_solver_seconds", Help: "Time from a solver's start to its end.", Buckets: prometheus.DefBuckets,
		}, nil),
	}
	reg.MustRegister(m.discoveries, m.peers, m.solvers, m.solverTime)
	return m
}

func (m *Metrics) discovered(d time.Duration) {
	if m != nil {
		m.discoveries.WithLabelValues().Observe(d.Seconds())
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
	m.solverTime.WithLabelValues().Observe(d.Seconds())
}
