package ccrm

import (
	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the replica's Prometheus metrics.
type metrics struct {
	claimsHeld       prometheus.GaugeFunc
	claims           *prometheus.CounterVec // by outcome: taken, contended
	takeovers        *prometheus.CounterVec // by kind
	operations       *prometheus.CounterVec // by kind and result
	reportRejections *prometheus.CounterVec // by kind and reason
	sessionsLost     prometheus.Counter
	collected        prometheus.Counter
	reconciles       *prometheus.CounterVec // by result
	reconciled       *prometheus.CounterVec // by kind, action and result
}

func newMetrics(reg prometheus.Registerer, held func() float64) (*metrics, error) {
	m := &metrics{
		claimsHeld: prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "edgekit_ccrm_claims_held", Help: "Claims this replica holds now (operations it runs).",
		}, held),
		claims: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "edgekit_ccrm_claim_attempts_total", Help: "Claim attempts by outcome: taken, or held by another replica (contended).",
		}, []string{"outcome"}),
		takeovers: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "edgekit_ccrm_takeovers_total", Help: "Operations taken over: claimed in an *ING state after their previous claim ended.",
		}, []string{"kind"}),
		operations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "edgekit_ccrm_operations_total", Help: "Operations run under a claim, by kind and result (ok, error, report_failed, rejected, canceled, skipped).",
		}, []string{"kind", "result"}),
		reportRejections: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "edgekit_ccrm_report_rejections_total", Help: "Reports not applied: refused by the controller, or not sent for want of a valid claim (no_claim).",
		}, []string{"kind", "reason"}),
		sessionsLost: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "edgekit_ccrm_sessions_lost_total", Help: "Leases lost (expired or unknown to etcd), each ending every claim held under it.",
		}),
		collected: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "edgekit_ccrm_reservations_collected_total", Help: "Reserved values deleted because their owner no longer exists.",
		}),
		reconciles: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "edgekit_ccrm_reconciliations_total", Help: "Reconciliations of a cloudlet with its platform, by result (ok, error: the platform or the region could not be listed, or an action failed).",
		}, []string{"result"}),
		reconciled: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "edgekit_ccrm_reconcile_actions_total", Help: "Objects a reconciliation acted on, by kind, action (delete: removed from the platform as the region no longer has them; none: the region had them again; busy: claimed by another replica) and result (ok, error).",
		}, []string{"kind", "action", "result"}),
	}
	// Series that exist from the start, so that rates and alerts see zeros.
	for _, kind := range []string{"Cloudlet", "ClusterInst", "AppInst"} {
		m.takeovers.WithLabelValues(kind)
		for _, res := range []string{"ok", "error"} {
			m.operations.WithLabelValues(kind, res)
		}
	}
	for _, res := range []string{"ok", "error"} {
		m.reconciles.WithLabelValues(res)
	}
	for _, o := range []string{"taken", "contended"} {
		m.claims.WithLabelValues(o)
	}
	for _, c := range []prometheus.Collector{m.claimsHeld, m.claims, m.takeovers, m.operations, m.reportRejections, m.sessionsLost, m.collected, m.reconciles, m.reconciled} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}
