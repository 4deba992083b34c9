package notify

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/edgekit/edgekit/internal/testenv/metricsdoc"
)

func TestMetricsAreTheDocumentedOnes(t *testing.T) {
	r := metricsdoc.NewRecorder()
	if _, err := newMetrics(r); err != nil {
		t.Fatal(err)
	}
	metricsdoc.Check(t, "hosts/controller/notify", r)
}

// A server started again in the same process on the same registry (a
// controller restarted in place) registers its metrics without an error
// and counts on with the collectors of the first.
func TestMetricsOfAServerStartedAgain(t *testing.T) {
	reg := prometheus.NewRegistry()
	first, err := newMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	first.refused.WithLabelValues("busy").Inc()
	second, err := newMetrics(reg)
	if err != nil {
		t.Fatalf("metrics of a server started again: %v", err)
	}
	second.refused.WithLabelValues("busy").Inc()
	var m dto.Metric
	if err := first.refused.WithLabelValues("busy").Write(&m); err != nil {
		t.Fatal(err)
	}
	if got := m.GetCounter().GetValue(); got != 2 {
		t.Fatalf("refused{reason=busy} = %v after one refusal by each server, want 2", got)
	}
}
