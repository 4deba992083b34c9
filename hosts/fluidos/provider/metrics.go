package provider

import (
	"errors"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics counts what a provider does. A nil *Metrics counts nothing.
type Metrics struct {
	reservations *prometheus.CounterVec
	purchases    *prometheus.CounterVec
	expiries     prometheus.Counter
	requests     *prometheus.CounterVec
	released     prometheus.Counter
	lapsed       prometheus.Counter
}

// NewMetrics registers the provider's metrics with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		reservations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "fluidos_provider_reservations_total", Help: "Reservations asked of this provider, by result.",
		}, []string{"result"}),
		purchases: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "fluidos_provider_purchases_total", Help: "Purchases asked of this provider, by result.",
		}, []string{"result"}),
		expiries: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "fluidos_provider_expired_reservations_total", Help: "Reservations that expired unbought.",
		}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "fluidos_rear_requests_total", Help: "REAR requests served, by route and HTTP status.",
		}, []string{"route", "code"}),
		released: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "fluidos_provider_released_contracts_total", Help: "Contracts whose capacity went back on sale after their teardown.",
		}),
		lapsed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "fluidos_provider_expired_contracts_total", Help: "Contracts released because their buyer did not renew them.",
		}),
	}
	reg.MustRegister(m.reservations, m.purchases, m.expiries, m.requests, m.released, m.lapsed)
	return m
}

// result is the label of an outcome.
func result(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, ErrSoldOut):
		return "sold_out"
	case errors.Is(err, ErrNotBuyer):
		return "forbidden"
	case errors.Is(err, ErrExpired):
		return "expired"
	case errors.Is(err, ErrBusy):
		return "busy"
	case errors.Is(err, ErrBadRequest), errors.Is(err, ErrNotSold), errors.Is(err, ErrNotProvisionable), errors.Is(err, ErrFlavorNotFound), errors.Is(err, ErrTransactionNotFound):
		return "refused"
	}
	return "error"
}

func (m *Metrics) reserved(err error) {
	if m != nil {
		m.reservations.WithLabelValues(result(err)).Inc()
	}
}

func (m *Metrics) purchased(err error) {
	if m != nil {
		m.purchases.WithLabelValues(result(err)).Inc()
	}
}

func (m *Metrics) expired() {
	if m != nil {
		m.expiries.Inc()
	}
}

func (m *Metrics) served(route string, code int) {
	if m != nil {
		m.requests.WithLabelValues(route, strconv.Itoa(code)).Inc()
	}
}

func (m *Metrics) releasedContract() {
	if m != nil {
		m.released.Inc()
	}
}

func (m *Metrics) expiredContract() {
	if m != nil {
		m.lapsed.Inc()
	}
}
