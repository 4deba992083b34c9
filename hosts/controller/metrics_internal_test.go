package controller

import (
	"fmt"
	"testing"
	"time"

	"github.com/edgekit/edgekit/internal/store"
	"github.com/edgekit/edgekit/internal/testenv/metricsdoc"
)

func TestMetricsAreTheDocumentedOnes(t *testing.T) {
	r := metricsdoc.NewRecorder()
	if _, err := newMetrics(r, newObjectCounter()); err != nil {
		t.Fatal(err)
	}
	if _, err := NewStoreMetrics(r); err != nil {
		t.Fatal(err)
	}
	if _, err := newStoreSpace(r); err != nil {
		t.Fatal(err)
	}
	if err := r.Register(newAlertCollector(nil)); err != nil {
		t.Fatal(err)
	}
	metricsdoc.Check(t, "hosts/controller", r)
}

// A transaction is of no one kind: its kind label must still have a value,
// as an empty one reads as no label at all.
func TestStoreMetricsLabelEveryOperationWithAKind(t *testing.T) {
	r := metricsdoc.NewRecorder()
	m, err := NewStoreMetrics(r)
	if err != nil {
		t.Fatal(err)
	}
	m.Observe(store.Observation{Op: "txn", Duration: time.Millisecond, Attempts: 1})
	m.Observe(store.Observation{Op: "get", Kind: "Cloudlet", Duration: time.Millisecond})
	families, err := r.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]string{}
	for _, f := range families {
		for _, s := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range s.GetLabel() {
				if l.GetValue() == "" {
					t.Errorf("%s has an empty %s label: %v", f.GetName(), l.GetName(), s.GetLabel())
				}
				labels[l.GetName()] = l.GetValue()
			}
			kinds[labels["op"]] = labels["kind"]
		}
	}
	if kinds["txn"] != mixedKind || kinds["get"] != "Cloudlet" {
		t.Errorf("kind labels by op = %v, want txn: %s, get: Cloudlet", kinds, mixedKind)
	}
}

// A report refused for answering an earlier request is counted apart from
// other stale reports.
func TestReportResultNamesAStaleRequest(t *testing.T) {
	for err, want := range map[error]string{
		nil:                                  "applied",
		fmt.Errorf("x: %w", ErrStaleRequest): "stale_request",
		fmt.Errorf("x: %w", ErrStaleReport):  "stale",
	} {
		if got := reportResult(err); got != want {
			t.Errorf("reportResult(%v) = %q, want %q", err, got, want)
		}
	}
}
