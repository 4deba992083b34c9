package fluidos

import (
	"errors"
	"math"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
)

func i64(v int64) *int64     { return &v }
func f64(v float64) *float64 { return &v }

func exact(s string) *StringFilter { return &StringFilter{Filter: &StringFilter_Exact{Exact: s}} }
func regex(s string) *StringFilter { return &StringFilter{Filter: &StringFilter_Regex{Regex: s}} }
func eq(v int64) *ResourceFilter {
	return &ResourceFilter{Filter: &ResourceFilter_Match{Match: &ResourceMatchSelector{Value: v}}}
}
func between(min, max *int64) *ResourceFilter {
	return &ResourceFilter{Filter: &ResourceFilter_Range{Range: &ResourceRangeSelector{Min: min, Max: max}}}
}

func k8sSel(k *K8SliceSelector) *Selector {
	return &Selector{FlavorType: FlavorType_FLAVOR_TYPE_K8SLICE, Filter: &Selector_K8Slice{K8Slice: k}}
}

func k8sFlavor() *Flavor {
	return &Flavor{
		Id:           "k8s-1",
		Availability: true,
		Spec: &Flavor_K8Slice{K8Slice: &K8Slice{
			Characteristics: &K8SliceCharacteristics{
				Architecture: "amd64",
				Cpu:          4000,
				Memory:       8 << 30,
				Pods:         110,
				Gpu:          &GPU{Model: "nvidia-a100", Cores: 4, Memory: 40 << 30},
				Storage:      100 << 30,
			},
			Partitionability: &Partitionability{
				CpuMin: 500, MemoryMin: 1 << 30, PodsMin: 10,
				CpuStep: 250, MemoryStep: 512 << 20, PodsStep: 5,
			},
		}},
	}
}

func serviceFlavor() *Flavor {
	return &Flavor{Id: "svc-1", Spec: &Flavor_Service{Service: &Service{
		Name: "postgres", Category: "database", Tags: []string{"sql", "ha"},
	}}}
}

func vmFlavor() *Flavor {
	return &Flavor{Id: "vm-1", Spec: &Flavor_Vm{Vm: &VM{
		Cpu: 2000, Memory: 4 << 30, Storage: 50 << 30, Architecture: "arm64", OsImage: "ubuntu-24.04", Hypervisor: "kvm",
	}}}
}

func sensorFlavor() *Flavor {
	return &Flavor{Id: "sn-1", Spec: &Flavor_Sensor{Sensor: &Sensor{
		SensorType: "temperature", SamplingRateHz: 10, Accuracy: 0.5, Unit: "celsius",
	}}}
}

func TestSelectorMatch(t *testing.T) {
	for _, c := range []struct {
		name   string
		sel    *Selector
		flavor *Flavor
		want   bool
		// wantWhy is a substring of Mismatch's error when want is false,
		// wantIs a sentinel it must match besides ErrNoMatch (nil: none
		// checked).
		wantWhy string
		wantIs  error
	}{
		{name: "nil selector", sel: nil, flavor: k8sFlavor(), want: true},
		{name: "empty selector", sel: &Selector{}, flavor: serviceFlavor(), want: true},
		{name: "type only", sel: &Selector{FlavorType: FlavorType_FLAVOR_TYPE_K8SLICE}, flavor: k8sFlavor(), want: true},
		{name: "type mismatch", sel: &Selector{FlavorType: FlavorType_FLAVOR_TYPE_VM}, flavor: k8sFlavor(),
			wantWhy: `flavor_type: flavor type differs: selector wants VM, flavor "k8s-1" is K8SLICE`, wantIs: ErrFlavorTypeMismatch},
		{name: "type taken from filter", sel: &Selector{Filter: &Selector_Service{Service: &ServiceSelector{}}}, flavor: k8sFlavor(),
			wantWhy: "selector wants SERVICE", wantIs: ErrFlavorTypeMismatch},
		{name: "flavor without spec", sel: &Selector{FlavorType: FlavorType_FLAVOR_TYPE_SENSOR}, flavor: &Flavor{Id: "x"},
			wantWhy: "is UNSPECIFIED", wantIs: ErrFlavorTypeMismatch},
		{name: "k8s all filters match", flavor: k8sFlavor(), want: true, sel: k8sSel(&K8SliceSelector{
			Architecture: regex("amd64|arm64"),
			Cpu:          between(i64(2000), i64(4000)),
			Memory:       between(i64(8<<30), nil),
			Pods:         eq(110),
			Storage:      between(nil, i64(1<<40)),
			Gpu:          &GPUSelector{Model: exact("nvidia-a100"), Cores: between(i64(1), nil)},
		})},
		{name: "k8s empty filters match", flavor: k8sFlavor(), want: true, sel: k8sSel(&K8SliceSelector{
			Architecture: &StringFilter{}, Cpu: &ResourceFilter{}, Memory: between(nil, nil),
		})},
		{name: "cpu below range", flavor: k8sFlavor(), sel: k8sSel(&K8SliceSelector{Cpu: between(i64(8000), nil)}),
			wantWhy: "k8slice.cpu: 4000 not in [8000, ∞)"},
		{name: "cpu above range", flavor: k8sFlavor(), sel: k8sSel(&K8SliceSelector{Cpu: between(nil, i64(1000))}),
			wantWhy: "k8slice.cpu: 4000 not in (-∞, 1000]"},
		{name: "pods not equal", flavor: k8sFlavor(), sel: k8sSel(&K8SliceSelector{Pods: eq(100)}),
			wantWhy: "k8slice.pods: 110 is not 100"},
		{name: "regex is anchored", flavor: k8sFlavor(), sel: k8sSel(&K8SliceSelector{Architecture: regex("amd")}),
			wantWhy: `k8slice.architecture: "amd64" does not match regex "amd"`},
		{name: "exact differs", flavor: k8sFlavor(), sel: k8sSel(&K8SliceSelector{Architecture: exact("arm64")}),
			wantWhy: `k8slice.architecture: "amd64" is not "arm64"`},
		{name: "gpu absent", flavor: func() *Flavor {
			f := k8sFlavor()
			f.GetK8Slice().Characteristics.Gpu = nil
			return f
		}(), sel: k8sSel(&K8SliceSelector{Gpu: &GPUSelector{}}),
			wantWhy: "k8slice.gpu: flavor lacks the filtered field: flavor has no GPU", wantIs: ErrFieldAbsent},
		{name: "architecture absent", flavor: func() *Flavor {
			f := k8sFlavor()
			f.GetK8Slice().Characteristics.Architecture = ""
			return f
		}(), sel: k8sSel(&K8SliceSelector{Architecture: regex(".*")}),
			wantWhy: "k8slice.architecture: flavor lacks the filtered field", wantIs: ErrFieldAbsent},
		{name: "characteristics absent", flavor: &Flavor{Spec: &Flavor_K8Slice{K8Slice: &K8Slice{}}},
			sel: k8sSel(&K8SliceSelector{Pods: eq(0)}), wantWhy: "flavor has no characteristics", wantIs: ErrFieldAbsent},
		{name: "characteristics absent no filter", flavor: &Flavor{Spec: &Flavor_K8Slice{K8Slice: &K8Slice{}}},
			sel: k8sSel(&K8SliceSelector{}), want: true},
		{name: "gpu memory too small", flavor: k8sFlavor(), sel: k8sSel(&K8SliceSelector{Gpu: &GPUSelector{Memory: between(i64(80<<30), nil)}}),
			wantWhy: "k8slice.gpu.memory"},
		{name: "service category and tags", flavor: serviceFlavor(), want: true, sel: &Selector{Filter: &Selector_Service{Service: &ServiceSelector{
			Category: exact("database"), Tags: []string{"ha", "sql"}, Name: regex("postgres|mysql"),
		}}}},
		{name: "service category differs", flavor: serviceFlavor(), sel: &Selector{Filter: &Selector_Service{Service: &ServiceSelector{
			Category: exact("cache"),
		}}}, wantWhy: `service.category: "database" is not "cache"`},
		{name: "service lacks tag", flavor: serviceFlavor(), sel: &Selector{Filter: &Selector_Service{Service: &ServiceSelector{
			Tags: []string{"sql", "nosql"},
		}}}, wantWhy: `service.tags: service lacks tag "nosql"`},
		{name: "service has no tags", flavor: &Flavor{Spec: &Flavor_Service{Service: &Service{Category: "db"}}},
			sel:     &Selector{Filter: &Selector_Service{Service: &ServiceSelector{Tags: []string{"sql"}}}},
			wantWhy: "service.tags: flavor lacks the filtered field", wantIs: ErrFieldAbsent},
		{name: "vm matches", flavor: vmFlavor(), want: true, sel: &Selector{Filter: &Selector_Vm{Vm: &VMSelector{
			Architecture: exact("arm64"), Cpu: eq(2000), OsImage: regex(`ubuntu-\d+\.\d+`), Hypervisor: exact("kvm"),
		}}}},
		{name: "vm gpu absent", flavor: vmFlavor(), sel: &Selector{Filter: &Selector_Vm{Vm: &VMSelector{Gpu: &GPUSelector{}}}},
			wantWhy: "vm.gpu", wantIs: ErrFieldAbsent},
		{name: "sensor matches", flavor: sensorFlavor(), want: true, sel: &Selector{Filter: &Selector_Sensor{Sensor: &SensorSelector{
			SensorType: exact("temperature"), SamplingRateHz: &FloatRangeSelector{Min: f64(5), Max: f64(10)}, Unit: exact("celsius"),
		}}}},
		{name: "sensor rate too low", flavor: sensorFlavor(), sel: &Selector{Filter: &Selector_Sensor{Sensor: &SensorSelector{
			SamplingRateHz: &FloatRangeSelector{Min: f64(100)},
		}}}, wantWhy: "sensor.sampling_rate_hz: 10 not in [100, ∞)"},
		{name: "sensor accuracy", flavor: sensorFlavor(), sel: &Selector{Filter: &Selector_Sensor{Sensor: &SensorSelector{
			Accuracy: &FloatRangeSelector{Max: f64(0.1)},
		}}}, wantWhy: "sensor.accuracy: 0.5 not in (-∞, 0.1]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := proto.Clone(c.flavor)
			got, err := c.sel.Match(c.flavor)
			if err != nil {
				t.Fatalf("Match: unexpected error %v", err)
			}
			if got != c.want {
				t.Fatalf("Match = %v, want %v (Mismatch: %v)", got, c.want, c.sel.Mismatch(c.flavor))
			}
			why := c.sel.Mismatch(c.flavor)
			if c.want {
				if why != nil {
					t.Fatalf("Mismatch = %v for a match", why)
				}
			} else {
				var me *MismatchError
				if !errors.Is(why, ErrNoMatch) || !errors.As(why, &me) {
					t.Fatalf("Mismatch = %v, want a *MismatchError", why)
				}
				if !strings.Contains(why.Error(), c.wantWhy) {
					t.Errorf("Mismatch = %q, want it to contain %q", why, c.wantWhy)
				}
				if c.wantIs != nil && !errors.Is(why, c.wantIs) {
					t.Errorf("errors.Is(%v, %v) = false", why, c.wantIs)
				}
			}
			if !proto.Equal(before, c.flavor) {
				t.Error("Match modified the flavor")
			}
		})
	}
}

// problem is an expected error: a sentinel it matches and a substring of
// its text.
type problem struct {
	is   error
	text string
}

func TestSelectorValidate(t *testing.T) {
	for _, c := range []struct {
		name string
		sel  *Selector
		// want lists the expected problems; none for a valid selector.
		want []problem
	}{
		{name: "nil", sel: nil},
		{name: "valid", sel: k8sSel(&K8SliceSelector{Cpu: between(i64(0), i64(0)), Pods: eq(0), Architecture: regex("a.*")})},
		{name: "min above max", sel: k8sSel(&K8SliceSelector{Cpu: between(i64(4000), i64(2000))}),
			want: []problem{{ErrMinAboveMax, "invalid selector: k8slice.cpu.range: minimum above maximum: min 4000 above max 2000"}}},
		{name: "negative match", sel: k8sSel(&K8SliceSelector{Memory: eq(-1)}),
			want: []problem{{ErrNegativeQuantity, "k8slice.memory.match.value: negative quantity: -1"}}},
		{name: "negative bounds and inverted", sel: k8sSel(&K8SliceSelector{Pods: between(i64(-1), i64(-5))}),
			want: []problem{
				{ErrNegativeQuantity, "k8slice.pods.range.min: negative quantity: -1"},
				{ErrNegativeQuantity, "k8slice.pods.range.max: negative quantity: -5"},
				{ErrMinAboveMax, "k8slice.pods.range: minimum above maximum: min -1 above max -5"},
			}},
		{name: "invalid regex", sel: k8sSel(&K8SliceSelector{Architecture: regex("amd(64")}),
			want: []problem{{ErrInvalidRegex, "k8slice.architecture.regex: invalid regular expression: error parsing regexp: missing closing )"}}},
		{name: "invalid gpu regex", sel: &Selector{Filter: &Selector_Vm{Vm: &VMSelector{Gpu: &GPUSelector{Model: regex("[")}}}},
			want: []problem{{ErrInvalidRegex, "vm.gpu.model.regex"}}},
		{name: "empty exact", sel: &Selector{Filter: &Selector_Service{Service: &ServiceSelector{Category: exact("")}}},
			want: []problem{{ErrEmptyValue, "service.category.exact: empty value"}}},
		{name: "empty tag", sel: &Selector{Filter: &Selector_Service{Service: &ServiceSelector{Tags: []string{"a", ""}}}},
			want: []problem{{ErrEmptyValue, "service.tags[1]"}}},
		{name: "type conflict", sel: &Selector{FlavorType: FlavorType_FLAVOR_TYPE_VM, Filter: &Selector_K8Slice{K8Slice: &K8SliceSelector{}}},
			want: []problem{{ErrFilterTypeConflict, "flavor_type: filter does not agree with flavor type: flavor_type VM with a K8SLICE filter"}}},
		{name: "unknown type", sel: &Selector{FlavorType: 42},
			want: []problem{{ErrUnknownFlavorType, "flavor_type: unknown flavor type: 42"}}},
		{name: "sensor NaN bound", sel: &Selector{Filter: &Selector_Sensor{Sensor: &SensorSelector{
			Accuracy: &FloatRangeSelector{Max: f64(math.NaN())},
		}}},
			want: []problem{{ErrNotANumber, "sensor.accuracy.max: not a finite number: NaN"}}},
		{name: "sensor float range", sel: &Selector{Filter: &Selector_Sensor{Sensor: &SensorSelector{
			SamplingRateHz: &FloatRangeSelector{Min: f64(10), Max: f64(1)},
			Accuracy:       &FloatRangeSelector{Min: f64(-0.5)},
		}}},
			want: []problem{
				{ErrMinAboveMax, "sensor.sampling_rate_hz: minimum above maximum: min 10 above max 1"},
				{ErrNegativeQuantity, "sensor.accuracy.min: negative quantity: -0.5"},
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.sel.Validate()
			if len(c.want) == 0 {
				if err != nil {
					t.Fatalf("Validate = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidSelector) {
				t.Fatalf("Validate = %v, want ErrInvalidSelector", err)
			}
			lines := strings.Split(err.Error(), "\n")
			if len(lines) != len(c.want) {
				t.Fatalf("Validate found %d problems, want %d:\n%v", len(lines), len(c.want), err)
			}
			for _, w := range c.want {
				if !errors.Is(err, w.is) {
					t.Errorf("errors.Is(%v, %v) = false", err, w.is)
				}
				if !strings.Contains(err.Error(), w.text) {
					t.Errorf("Validate = %q, want it to contain %q", err, w.text)
				}
			}
			// An invalid selector makes Match fail with the same error.
			ok, merr := c.sel.Match(k8sFlavor())
			if ok || merr == nil || merr.Error() != err.Error() {
				t.Errorf("Match = %v, %v; want false and the Validate error", ok, merr)
			}
			var se *SelectorError
			if !errors.As(merr, &se) {
				t.Errorf("errors.As(*SelectorError) failed on %v", merr)
			}
		})
	}
}

func TestSelectorMatchNilFlavor(t *testing.T) {
	ok, err := (&Selector{}).Match(nil)
	if ok || !errors.Is(err, ErrNoFlavor) {
		t.Fatalf("Match(nil) = %v, %v; want false, ErrNoFlavor", ok, err)
	}
}

func TestFlavorTypeOf(t *testing.T) {
	for _, c := range []struct {
		f    *Flavor
		want FlavorType
	}{
		{nil, FlavorType_FLAVOR_TYPE_UNSPECIFIED},
		{&Flavor{}, FlavorType_FLAVOR_TYPE_UNSPECIFIED},
		{&Flavor{Spec: &Flavor_Vm{}}, FlavorType_FLAVOR_TYPE_UNSPECIFIED},
		{k8sFlavor(), FlavorType_FLAVOR_TYPE_K8SLICE},
		{serviceFlavor(), FlavorType_FLAVOR_TYPE_SERVICE},
		{vmFlavor(), FlavorType_FLAVOR_TYPE_VM},
		{sensorFlavor(), FlavorType_FLAVOR_TYPE_SENSOR},
	} {
		if got := FlavorTypeOf(c.f); got != c.want {
			t.Errorf("FlavorTypeOf(%v) = %s, want %s", c.f, got, c.want)
		}
	}
}

// FuzzSelectorMatch checks that matching never panics and that every error
// is an invalid selector.
func FuzzSelectorMatch(f *testing.F) {
	f.Add("amd64|arm64", int64(1000), int64(8000), "sql")
	f.Add("(", int64(-1), int64(-5), "")
	f.Fuzz(func(t *testing.T, pattern string, min, max int64, tag string) {
		sels := []*Selector{
			k8sSel(&K8SliceSelector{Architecture: regex(pattern), Cpu: between(&min, &max), Gpu: &GPUSelector{Cores: eq(min)}}),
			{Filter: &Selector_Service{Service: &ServiceSelector{Category: exact(pattern), Tags: []string{tag}}}},
			{Filter: &Selector_Vm{Vm: &VMSelector{OsImage: regex(pattern), Memory: between(nil, &max)}}},
		}
		for _, s := range sels {
			for _, fl := range []*Flavor{k8sFlavor(), serviceFlavor(), vmFlavor(), sensorFlavor(), {}} {
				ok, err := s.Match(fl)
				if err != nil && (ok || !errors.Is(err, ErrInvalidSelector)) {
					t.Fatalf("Match = %v, %v", ok, err)
				}
				if (s.Validate() == nil) != (err == nil) {
					t.Fatalf("Validate and Match disagree: %v vs %v", s.Validate(), err)
				}
			}
		}
	})
}
