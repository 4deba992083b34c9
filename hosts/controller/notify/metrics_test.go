package notify

import (
	"testing"

	"github.com/edgekit/edgekit/internal/testenv/metricsdoc"
)

func TestMetricsAreTheDocumentedOnes(t *testing.T) {
	r := metricsdoc.NewRecorder()
	if _, err := newMetrics(r); err != nil {
		t.Fatal(err)
	}
	metricsdoc.Check(t, "hosts/controller/notify", r)
}
