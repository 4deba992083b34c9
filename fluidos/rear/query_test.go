package rear_test

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/fluidos/rear"
)

func exact(s string) *fluidos.StringFilter {
	return &fluidos.StringFilter{Filter: &fluidos.StringFilter_Exact{Exact: s}}
}

func regex(s string) *fluidos.StringFilter {
	return &fluidos.StringFilter{Filter: &fluidos.StringFilter_Regex{Regex: s}}
}

func match(v int64) *fluidos.ResourceFilter {
	return &fluidos.ResourceFilter{Filter: &fluidos.ResourceFilter_Match{Match: &fluidos.ResourceMatchSelector{Value: v}}}
}

func between(lo, hi *int64) *fluidos.ResourceFilter {
	return &fluidos.ResourceFilter{Filter: &fluidos.ResourceFilter_Range{Range: &fluidos.ResourceRangeSelector{Min: lo, Max: hi}}}
}

// querySelectors is one selector per filter kind and flavor type.
func querySelectors() map[string]*fluidos.Selector {
	k8s := fluidos.FlavorType_FLAVOR_TYPE_K8SLICE
	return map[string]*fluidos.Selector{
		"k8slice everything": {FlavorType: k8s, Filter: &fluidos.Selector_K8Slice{K8Slice: &fluidos.K8SliceSelector{
			Architecture: exact("amd64"), Cpu: between(ptr[int64](1500), ptr[int64](8000)), Memory: match(4 << 30),
			Pods: between(ptr[int64](10), nil), Storage: between(nil, ptr[int64](100<<30)),
			Gpu: &fluidos.GPUSelector{Model: regex("nvidia-.*"), Cores: match(2), Memory: between(ptr[int64](8<<30), nil)},
		}}},
		"k8slice regex":        {FlavorType: k8s, Filter: &fluidos.Selector_K8Slice{K8Slice: &fluidos.K8SliceSelector{Architecture: regex("amd64|arm64")}}},
		"k8slice gpu required": {FlavorType: k8s, Filter: &fluidos.Selector_K8Slice{K8Slice: &fluidos.K8SliceSelector{Gpu: &fluidos.GPUSelector{}}}},
		"k8slice no filter":    {FlavorType: k8s, Filter: &fluidos.Selector_K8Slice{K8Slice: &fluidos.K8SliceSelector{}}},
		"service": {FlavorType: fluidos.FlavorType_FLAVOR_TYPE_SERVICE, Filter: &fluidos.Selector_Service{Service: &fluidos.ServiceSelector{
			Category: regex("data.*"), Tags: []string{"sql", "ha"}, Name: exact("PostgreSQL"),
		}}},
		"vm": {FlavorType: fluidos.FlavorType_FLAVOR_TYPE_VM, Filter: &fluidos.Selector_Vm{Vm: &fluidos.VMSelector{
			Architecture: exact("arm64"), Cpu: match(2000), Memory: between(ptr[int64](1<<30), nil), Storage: match(10 << 30),
			OsImage: regex("ubuntu-.*"), Hypervisor: exact("kvm"), Gpu: &fluidos.GPUSelector{Cores: match(1)},
		}}},
		"sensor": {FlavorType: fluidos.FlavorType_FLAVOR_TYPE_SENSOR, Filter: &fluidos.Selector_Sensor{Sensor: &fluidos.SensorSelector{
			SensorType: exact("temperature"), Unit: regex("celsius|kelvin"),
			SamplingRateHz: &fluidos.FloatRangeSelector{Min: ptr(0.5), Max: ptr(10.0)}, Accuracy: &fluidos.FloatRangeSelector{Max: ptr(0.1)},
		}}},
	}
}

func TestQueryRoundTrip(t *testing.T) {
	t.Parallel()
	for name, sel := range querySelectors() {
		route, q := rear.EncodeQuery(sel, false)
		got, err := rear.ParseQuery(sel.GetFlavorType(), q)
		if err != nil {
			t.Errorf("%s: ParseQuery(%s) = %v", name, q.Encode(), err)
			continue
		}
		if !proto.Equal(got, sel) {
			t.Errorf("%s: %s?%s parses to\n%v\nwant\n%v", name, route, q.Encode(), got, sel)
		}
		if route != rear.RouteOf(sel.GetFlavorType()) {
			t.Errorf("%s: route %s", name, route)
		}
	}
}

func TestPortableQueryIsUnderstoodByTheReferenceGrammar(t *testing.T) {
	t.Parallel()
	// The keys a reference node accepts.
	k8s := map[string]bool{}
	for _, f := range []string{"architecture", "cpu", "memory", "pods", "storage"} {
		k8s["filter["+f+"][match]"] = true
		k8s["filter["+f+"][range][min]"] = f != "architecture"
		k8s["filter["+f+"][range][max]"] = f != "architecture"
	}
	svc := map[string]bool{"filter[category][match]": true, "filter[tags][match]": true}
	for name, sel := range querySelectors() {
		route, q := rear.EncodeQuery(sel, true)
		allowed := map[string]map[string]bool{rear.RouteK8SliceFlavors: k8s, rear.RouteServiceFlavors: svc, rear.RouteFlavors: {}}[route]
		if allowed == nil {
			t.Errorf("%s: portable route %s is not a reference route", name, route)
			continue
		}
		for k, vs := range q {
			if !allowed[k] || len(vs) != 1 {
				t.Errorf("%s: portable query has %s=%v", name, k, vs)
			}
		}
	}
}

func TestParseQueryReferenceExamples(t *testing.T) {
	t.Parallel()
	q, _ := url.ParseQuery("filter[cpu][range][min]=1000m&filter[memory][range][max]=16Gi&filter[architecture][match]=amd64&[storage][match]=10Gi")
	sel, err := rear.ParseQuery(fluidos.FlavorType_FLAVOR_TYPE_K8SLICE, q)
	if err != nil {
		t.Fatal(err)
	}
	k := sel.GetK8Slice()
	if k.GetCpu().GetRange().GetMin() != 1000 || k.GetMemory().GetRange().GetMax() != 16<<30 || k.GetArchitecture().GetExact() != "amd64" || k.GetStorage().GetMatch().GetValue() != 10<<30 {
		t.Errorf("parsed %v", k)
	}
}

func TestParseQueryErrors(t *testing.T) {
	t.Parallel()
	k8s, svc := fluidos.FlavorType_FLAVOR_TYPE_K8SLICE, fluidos.FlavorType_FLAVOR_TYPE_SERVICE
	for _, c := range []struct {
		t     fluidos.FlavorType
		query string
		names string
	}{
		{k8s, "filter[color][match]=red", "color"},
		{k8s, "cpu=1", `"cpu"`},
		{k8s, "filter[cpu][match]=1&filter[cpu][range][min]=1", "both"},
		{k8s, "filter[cpu][match]=1&filter[cpu][match]=2", "one"},
		{k8s, "filter[cpu][match]=", "one"},
		{k8s, "filter[cpu][match]=lots", "cpu"},
		{k8s, "filter[cpu][match]=-1", "cpu"},
		{k8s, "filter[cpu][range]=1", "range"},
		{k8s, "filter[cpu][match][min]=1", "match"},
		{k8s, "filter[cpu][range][regex]=1", "regex"},
		{k8s, "filter[architecture][range][min]=1", "min"},
		{k8s, "filter[architecture][range][regex]=(", "regular expression"},
		{k8s, "filter[cpu][range][min]=4&filter[cpu][range][max]=2", "minimum above maximum"},
		{k8s, "filter[gpu][match]=false", "gpu"},
		{k8s, "[cpu][match]=1", "cpu"},
		{k8s, "filter[category][match]=db", "category"},
		{svc, "filter[tags][match]=", "tag"},
		{svc, "filter[tags][range][min]=1", "tags"},
		{svc, "filter[cpu][match]=1", "cpu"},
		{fluidos.FlavorType_FLAVOR_TYPE_SENSOR, "filter[accuracy][match]=NaN", "accuracy"},
		{fluidos.FlavorType_FLAVOR_TYPE_UNSPECIFIED, "", "flavor type"},
	} {
		q, err := url.ParseQuery(c.query)
		if err != nil {
			t.Fatal(err)
		}
		_, err = rear.ParseQuery(c.t, q)
		if !errors.Is(err, rear.ErrBadFilter) || !strings.Contains(err.Error(), c.names) {
			t.Errorf("ParseQuery(%s) = %v, want ErrBadFilter naming %q", c.query, err, c.names)
		}
	}
}

// FuzzParseQuery: any query string either parses into a valid selector
// that encodes back to an equivalent query, or is refused with
// ErrBadFilter; never a panic.
func FuzzParseQuery(f *testing.F) {
	for _, sel := range querySelectors() {
		_, q := rear.EncodeQuery(sel, false)
		f.Add(uint8(sel.GetFlavorType()), q.Encode())
	}
	f.Add(uint8(1), "filter[cpu][range][min]=1000m&[storage][match]=1Gi")
	f.Fuzz(func(t *testing.T, typ uint8, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		ft := fluidos.FlavorType(typ % 5)
		sel, err := rear.ParseQuery(ft, q)
		if err != nil {
			if !errors.Is(err, rear.ErrBadFilter) {
				t.Fatalf("ParseQuery(%q) = %v, not ErrBadFilter", raw, err)
			}
			return
		}
		if err := sel.Validate(); err != nil {
			t.Fatalf("ParseQuery(%q) gave an invalid selector: %v", raw, err)
		}
		_, q2 := rear.EncodeQuery(sel, false)
		again, err := rear.ParseQuery(ft, q2)
		if err != nil || !proto.Equal(again, sel) {
			t.Fatalf("re-encoded %q parses to %v, %v; want %v", q2.Encode(), again, err, sel)
		}
	})
}
