package node

import (
	"log/slog"
	"testing"

	"github.com/edgekit/edgekit/internal/testenv/metricsdoc"
)

func TestMetricsAreTheDocumentedOnes(t *testing.T) {
	r := metricsdoc.NewRecorder()
	if _, err := newAPI(&Node{}, Options{}, nil, r, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	metricsdoc.Check(t, "hosts/fluidos/node", r)
}
