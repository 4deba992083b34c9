package controller

import (
	"context"
	"sync"
	"time"

	"github.com/edgekit/edgekit/internal/store"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"
)

// metrics are the controller's Prometheus metrics.
type metrics struct {
	calls    *prometheus.CounterVec // method, code
	requests *prometheus.CounterVec // kind, op
	reports  *prometheus.CounterVec // kind, result
}

func newMetrics(reg prometheus.Registerer, objects prometheus.Collector) (*metrics, error) {
	m := &metrics{
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "edgekit", Subsystem: "controller", Name: "api_calls_total",
			Help: "API calls by gRPC method and status code.",
		}, []string{"method", "code"}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "edgekit", Subsystem: "controller", Name: "change_requests_total",
			Help: "Changes requested from resource managers, by kind and operation.",
		}, []string{"kind", "op"}),
		reports: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "edgekit", Subsystem: "controller", Name: "info_reports_total",
			Help: "Info reports from resource managers, by Info kind and result (applied, rejected_transition, stale_request, stale, refused, error).",
		}, []string{"kind", "result"}),
	}
	for _, c := range []prometheus.Collector{m.calls, m.requests, m.reports, objects} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// StoreMetrics is a store.Observer that records the latency of store
// operations in Prometheus.
type StoreMetrics struct {
	latency *prometheus.HistogramVec
}

var _ store.Observer = (*StoreMetrics)(nil)

// NewStoreMetrics registers the store latency histogram with reg.
func NewStoreMetrics(reg prometheus.Registerer) (*StoreMetrics, error) {
	m := &StoreMetrics{latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: "edgekit", Subsystem: "controller", Name: "store_operation_seconds",
		Help:    "Latency of store operations by operation, kind (" + mixedKind + " for a transaction) and result.",
		Buckets: prometheus.ExponentialBuckets(0.0005, 2, 14),
	}, []string{"op", "kind", "result"})}
	if err := reg.Register(m.latency); err != nil {
		return nil, err
	}
	return m, nil
}

// mixedKind is the kind label of an operation that is not of one kind: a
// transaction, which may read and write objects of several kinds. A label
// value is never empty (Prometheus reads an empty value as no label).
const mixedKind = "mixed"

// Observe implements store.Observer.
func (m *StoreMetrics) Observe(o store.Observation) {
	result := "ok"
	if o.Err != nil {
		result = "error"
	}
	kind := o.Kind
	if kind == "" {
		kind = mixedKind
	}
	m.latency.WithLabelValues(o.Op, kind, result).Observe(o.Duration.Seconds())
}

func (c *Controller) countRequest(kind string, o op) {
	c.metrics.requests.WithLabelValues(kind, o.String()).Inc()
}

func (c *Controller) unaryMetrics(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	resp, err := handler(ctx, req)
	c.metrics.calls.WithLabelValues(info.FullMethod, status.Code(err).String()).Inc()
	return resp, err
}

func (c *Controller) streamMetrics(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	err := handler(srv, ss)
	c.metrics.calls.WithLabelValues(info.FullMethod, status.Code(err).String()).Inc()
	return err
}

// scrapeTimeout bounds the store reads of one metrics scrape.
const scrapeTimeout = 10 * time.Second

// objectCounter is a collector of how many objects of each kind are in
// each state, counted from the store at scrape time.
type objectCounter struct {
	desc  *prometheus.Desc
	mu    sync.Mutex
	count func(ctx context.Context) (map[[2]string]int, error)
}

func newObjectCounter() *objectCounter {
	return &objectCounter{desc: prometheus.NewDesc("edgekit_controller_objects",
		"Objects in the store by kind and state.", []string{"kind", "state"}, nil)}
}

func (o *objectCounter) Describe(ch chan<- *prometheus.Desc) { ch <- o.desc }

func (o *objectCounter) Collect(ch chan<- prometheus.Metric) {
	o.mu.Lock()
	count := o.count
	o.mu.Unlock()
	if count == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	counts, err := count(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(o.desc, err)
		return
	}
	for k, n := range counts {
		ch <- prometheus.MustNewConstMetric(o.desc, prometheus.GaugeValue, float64(n), k[0], k[1])
	}
}
