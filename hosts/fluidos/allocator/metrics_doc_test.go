package allocator_test

import (
	"testing"

	"github.com/edgekit/edgekit/hosts/fluidos/allocator"
	"github.com/edgekit/edgekit/internal/testenv/metricsdoc"
)

func TestMetricsAreTheDocumentedOnes(t *testing.T) {
	r := metricsdoc.NewRecorder()
	allocator.NewMetrics(r)
	metricsdoc.Check(t, "hosts/fluidos/allocator", r)
}
