// Package metricsdoc holds the metrics table of docs/operator.md to what the
// hosts register. Each package that defines metrics registers them on a
// Recorder in a test and calls Check with its row of the table: a metric
// renamed, added or removed without the table, or the other way round,
// fails that package's tests.
//
// The table has one row per package: `| host | package | metrics |`, the
// package as its path in the module (hosts/crm) and the metrics as
// backquoted names.
package metricsdoc

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// Doc is the page that holds the table, relative to the module root.
const Doc = "docs/operator.md"

// Packages are the packages that define metrics, each with a row in the
// table and a test that calls Check for it.
var Packages = []string{
	"hosts/controller",
	"hosts/controller/notify",
	"hosts/crm",
	"hosts/ccrm",
	"hosts/fluidos/node",
	"hosts/fluidos/provider",
	"hosts/fluidos/consumer",
	"hosts/fluidos/allocator",
}

// Recorder is a prometheus.Registerer that keeps what was registered on it
// (in a registry of its own, so that duplicates fail as they would in a
// host).
type Recorder struct {
	reg        *prometheus.Registry
	collectors []prometheus.Collector
}

var _ prometheus.Registerer = (*Recorder)(nil)

// NewRecorder returns an empty Recorder.
func NewRecorder() *Recorder { return &Recorder{reg: prometheus.NewRegistry()} }

// Register implements prometheus.Registerer.
func (r *Recorder) Register(c prometheus.Collector) error {
	if err := r.reg.Register(c); err != nil {
		return err
	}
	r.collectors = append(r.collectors, c)
	return nil
}

// MustRegister implements prometheus.Registerer.
func (r *Recorder) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		if err := r.Register(c); err != nil {
			panic(err)
		}
	}
}

// Unregister implements prometheus.Registerer.
func (r *Recorder) Unregister(c prometheus.Collector) bool {
	i := slices.Index(r.collectors, c)
	if i < 0 {
		return false
	}
	r.collectors = slices.Delete(r.collectors, i, i+1)
	return r.reg.Unregister(c)
}

// Gatherer returns the registry the collectors are registered in.
func (r *Recorder) Gatherer() prometheus.Gatherer { return r.reg }

// descName reads a descriptor's fully-qualified name: prometheus.Desc has
// no accessor, its String starts with it.
var descName = regexp.MustCompile(`^Desc\{fqName: "([^"]*)"`)

// Names returns the sorted names of the metrics registered on r, whether
// or not they have a series yet.
func (r *Recorder) Names() ([]string, error) {
	var names []string
	for _, c := range r.collectors {
		cn, err := namesOf(c)
		if err != nil {
			return nil, err
		}
		names = append(names, cn...)
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}

// namesOf returns the names of the metrics c describes.
func namesOf(c prometheus.Collector) ([]string, error) {
	var names []string
	ch := make(chan *prometheus.Desc)
	go func() { c.Describe(ch); close(ch) }()
	var err error
	for d := range ch {
		m := descName.FindStringSubmatch(d.String())
		if m == nil {
			err = fmt.Errorf("metricsdoc: cannot read the name of %s", d)
			continue
		}
		names = append(names, m[1])
	}
	return names, err
}

// typeOf is the Prometheus type of a collector of one metric: "counter",
// "gauge", "histogram", or "" when it cannot tell (a custom collector, a
// GaugeFunc). Gauge goes before Counter: a gauge has Inc and Add too.
func typeOf(c prometheus.Collector) string {
	switch c.(type) {
	case *prometheus.CounterVec:
		return "counter"
	case *prometheus.GaugeVec:
		return "gauge"
	case *prometheus.HistogramVec:
		return "histogram"
	case prometheus.Gauge:
		return "gauge"
	case prometheus.Histogram:
		return "histogram"
	case prometheus.Counter:
		return "counter"
	}
	return ""
}

// checkSuffixes holds the names of r's metrics to Prometheus's naming
// practice: a counter ends in _total, a gauge does not, a histogram ends in
// its base unit (_seconds or _bytes).
func (r *Recorder) checkSuffixes() []error {
	var errs []error
	for _, c := range r.collectors {
		names, err := namesOf(c)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		typ := typeOf(c)
		for _, n := range names {
			switch {
			case typ == "counter" && !strings.HasSuffix(n, "_total"):
				errs = append(errs, fmt.Errorf("counter %s: a counter's name ends in _total", n))
			case typ == "gauge" && strings.HasSuffix(n, "_total"):
				errs = append(errs, fmt.Errorf("gauge %s: _total is for counters", n))
			case typ == "histogram" && !strings.HasSuffix(n, "_seconds") && !strings.HasSuffix(n, "_bytes"):
				errs = append(errs, fmt.Errorf("histogram %s: name it after its base unit (_seconds, _bytes)", n))
			}
		}
	}
	return errs
}

// validName is a metric name of the project: the edgekit namespace, then
// lower-case words joined by underscores.
var validName = regexp.MustCompile(`^edgekit_[a-z0-9]+(_[a-z0-9]+)*$`)

// Check fails t unless the row of pkg in the table lists exactly the
// metrics registered on r, each of them is in the edgekit namespace, and
// counters, gauges and histograms have the suffixes Prometheus expects.
func Check(t testing.TB, pkg string, r *Recorder) {
	t.Helper()
	got, err := r.Names()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) == 0 {
		t.Fatalf("%s registered no metrics", pkg)
	}
	for _, err := range r.checkSuffixes() {
		t.Errorf("%s: %v", pkg, err)
	}
	for _, n := range got {
		if !validName.MatchString(n) {
			t.Errorf("%s registers %q: metric names are edgekit_<subsystem>_<name> in lower-case snake case", pkg, n)
		}
	}
	rows, err := ReadTable()
	if err != nil {
		t.Fatal(err)
	}
	documented, ok := rows[pkg]
	if !ok {
		t.Fatalf("%s has no row in the metrics table of %s", pkg, Doc)
	}
	for _, n := range got {
		if !slices.Contains(documented, n) {
			t.Errorf("%s registers %s, missing from its row in %s", pkg, n, Doc)
		}
	}
	for _, n := range documented {
		if !slices.Contains(got, n) {
			t.Errorf("%s lists %s for %s, which does not register it", Doc, n, pkg)
		}
	}
}

// tableRow is a row of the table: host, package in backquotes, metrics.
var tableRow = regexp.MustCompile("^\\|[^|]*\\|\\s*`([a-z/]+)`\\s*\\|(.*)\\|\\s*$")

// backquoted is a metric name in backquotes.
var backquoted = regexp.MustCompile("`([a-zA-Z_:][a-zA-Z0-9_:]*)`")

// ReadTable reads the metrics table of Doc: the metric names of each
// package's row.
func ReadTable() (map[string][]string, error) {
	root, err := moduleRoot()
	if err != nil {
		return nil, err
	}
	f, err := os.Open(filepath.Join(root, Doc))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rows := map[string][]string{}
	in := false
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "## ") {
			in = strings.TrimSpace(line) == "## Metrics"
			continue
		}
		if !in {
			continue
		}
		m := tableRow.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if _, dup := rows[m[1]]; dup {
			return nil, fmt.Errorf("metricsdoc: %s has two rows for %s", Doc, m[1])
		}
		var names []string
		for _, b := range backquoted.FindAllStringSubmatch(m[2], -1) {
			names = append(names, b[1])
		}
		rows[m[1]] = names
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("metricsdoc: no metrics table under \"## Metrics\" in %s", Doc)
	}
	return rows, nil
}

// moduleRoot is the directory of go.mod above the working directory.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for range 64 {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return "", errors.New("metricsdoc: no go.mod above the working directory")
}
