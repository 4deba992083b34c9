package provider_test

import (
	"testing"

	"github.com/edgekit/edgekit/hosts/fluidos/provider"
	"github.com/edgekit/edgekit/internal/testenv/metricsdoc"
)

func TestMetricsAreTheDocumentedOnes(t *testing.T) {
	r := metricsdoc.NewRecorder()
	provider.NewMetrics(r)
	metricsdoc.Check(t, "hosts/fluidos/provider", r)
}

// Every node has a provider, also one that only buys: before it sold
// anything, the provider exports no series.
func TestMetricsExportNothingBeforeASale(t *testing.T) {
	r := metricsdoc.NewRecorder()
	provider.NewMetrics(r)
	families, err := r.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		t.Errorf("a provider that sold nothing exports %s", f.GetName())
	}
}
