package crm

import (
	"testing"

	"github.com/edgekit/edgekit/internal/testenv/metricsdoc"
)

func TestMetricsAreTheDocumentedOnes(t *testing.T) {
	r := metricsdoc.NewRecorder()
	if _, err := newMetrics(r, func() float64 { return 0 }); err != nil {
		t.Fatal(err)
	}
	metricsdoc.Check(t, "hosts/crm", r)
}
