package provider

import (
	"errors"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics counts what a provider does. A nil *Metrics counts nothing.
//
// Every node has a provider, also one that only buys: its series appear
// once the node sold (or was asked to sell) something, so that a node that
// never did exports none of them. The counters without labels are
// therefore vectors without labels, whose one series is made on first use.
type Metrics struct {
	reservations *prometheus.CounterVec
	purchases    *prometheus.CounterVec
	expiries     *prometheus.CounterVec
	requests     *prometheus.CounterVec
	released     *prometheus.CounterVec
	lapsed       *prometheus.CounterVec
}

// NewMetrics registers the provider's metrics with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "edgekit", Subsystem: "fluidos", Name: name, Help: help}, labels)
	}
	m := &Metrics{
		reservations: counter("provider_reservations_total", "Reservations asked of this provider, by result.", "result"),
		purchases:    counter("provider_purchases_total", "Purchases asked of this provider, by result.", "result"),
		expiries:     counter("provider_expired_reservations_total", "Reservations that expired unbought."),
		requests:     counter("rear_requests_total", "REAR requests served, by route and HTTP status.", "route", "code"),
		released:     counter("provider_released_contracts_total", "Contracts whose capacity went back on sale after their teardown."),
		lapsed:       counter("provider_expired_contracts_total", "Contracts released because their buyer did not renew them."),
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
		m.expiries.WithLabelValues().Inc()
	}
}

func (m *Metrics) served(route string, code int) {
	if m != nil {
		m.requests.WithLabelValues(route, strconv.Itoa(code)).Inc()
	}
}

func (m *Metrics) releasedContract() {
	if m != nil {
		m.released.WithLabelValues().Inc()
	}
}

func (m *Metrics) expiredContract() {
	if m != nil {
		m.lapsed.WithLabelValues().Inc()
	}
}
