package consumer_test

import (
	"testing"

	"github.com/edgekit/edgekit/hosts/fluidos/consumer"
	"github.com/edgekit/edgekit/internal/testenv/metricsdoc"
)

func TestMetricsAreTheDocumentedOnes(t *testing.T) {
	r := metricsdoc.NewRecorder()
	consumer.NewMetrics(r)
	metricsdoc.Check(t, "hosts/fluidos/consumer", r)
}

// Every node has a consumer, also one that only sells: before it ran a
// solver, the consumer exports no series.
func TestMetricsExportNothingBeforeASolver(t *testing.T) {
	r := metricsdoc.NewRecorder()
	consumer.NewMetrics(r)
	families, err := r.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		t.Errorf("a consumer that bought nothing exports %s", f.GetName())
	}
}
