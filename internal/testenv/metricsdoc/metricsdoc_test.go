package metricsdoc

import (
	"slices"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// TestTableHasARowPerPackage holds the table to Packages, whose tests check
// each row: a row no test checks would drift unnoticed.
func TestTableHasARowPerPackage(t *testing.T) {
	rows, err := ReadTable()
	if err != nil {
		t.Fatal(err)
	}
	for pkg := range rows {
		if !slices.Contains(Packages, pkg) {
			t.Errorf("%s has a row for %s, which is not in Packages (add it, and a test that calls Check)", Doc, pkg)
		}
	}
	for _, pkg := range Packages {
		if _, ok := rows[pkg]; !ok {
			t.Errorf("%s has no row for %s", Doc, pkg)
		}
	}
}

func TestRecorderNamesVectorsWithoutSeries(t *testing.T) {
	r := NewRecorder()
	r.MustRegister(
		prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "edgekit", Subsystem: "x", Name: "b_total"}, []string{"l"}),
		prometheus.NewGauge(prometheus.GaugeOpts{Name: "edgekit_x_a"}),
	)
	got, err := r.Names()
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"edgekit_x_a", "edgekit_x_b_total"}; !slices.Equal(got, want) {
		t.Fatalf("Names() = %v, want %v", got, want)
	}
}

func TestSuffixesFollowPrometheusPractice(t *testing.T) {
	r := NewRecorder()
	r.MustRegister(
		prometheus.NewCounter(prometheus.CounterOpts{Name: "edgekit_x_requests"}),
		prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "edgekit_x_open_total"}, []string{"l"}),
		prometheus.NewHistogram(prometheus.HistogramOpts{Name: "edgekit_x_latency"}),
		prometheus.NewCounterVec(prometheus.CounterOpts{Name: "edgekit_x_ok_total"}, []string{"l"}),
		prometheus.NewGauge(prometheus.GaugeOpts{Name: "edgekit_x_sessions"}),
		prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "edgekit_x_wait_seconds"}, nil),
	)
	var got []string
	for _, err := range r.checkSuffixes() {
		got = append(got, err.Error())
	}
	want := []string{
		"counter edgekit_x_requests: a counter's name ends in _total",
		"gauge edgekit_x_open_total: _total is for counters",
		"histogram edgekit_x_latency: name it after its base unit (_seconds, _bytes)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("checkSuffixes:\n got %q\nwant %q", got, want)
	}
}
