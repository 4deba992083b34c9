package fluidos

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
)

// Match reports whether f is a flavor s selects. A nil selector, and a
// selector with no flavor type and no filter, select every flavor.
//
// It returns (false, nil) when f does not match, for whatever reason,
// including a filter on a field f does not have (Mismatch says which); and
// (false, err) only when s is invalid (a *SelectorError, see Validate) or f
// is nil (ErrNoFlavor).
func (s *Selector) Match(f *Flavor) (bool, error) {
	err := s.Mismatch(f)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, ErrNoMatch):
		return false, nil
	}
	return false, err
}

// Mismatch explains Match: it returns nil when s selects f, a
// *MismatchError naming the first filter (in field order) that f fails,
// or the error that makes Match fail. A *MismatchError unwraps to:
//
//   - ErrFlavorTypeMismatch when f is not of the type s wants (the type is
//     flavor_type, or the type of the filter when flavor_type is unset);
//   - ErrFieldAbsent when a filter is set on a field f does not have: an
//     empty text field, a nil GPU, no tags, or a missing K8Slice
//     characteristics message. Such a filter never matches, whatever it
//     asks;
//   - nil when the field's value is not what the filter wants.
//
// Quantities (CPU, memory, pods, storage, GPU cores and memory, sampling
// rate, accuracy) are always present: zero is a value. Ranges are
// inclusive; a regex must match the whole text; tags must all be present
// on the service.
func (s *Selector) Mismatch(f *Flavor) error {
	if err := s.Validate(); err != nil {
		return err
	}
	if f == nil {
		return ErrNoFlavor
	}
	if s == nil {
		return nil
	}
	want := s.GetFlavorType()
	if want == FlavorType_FLAVOR_TYPE_UNSPECIFIED {
		want = filterType(s)
	}
	if got := FlavorTypeOf(f); want != FlavorType_FLAVOR_TYPE_UNSPECIFIED && got != want {
		return &MismatchError{
			Field:  "flavor_type",
			Detail: fmt.Sprintf("selector wants %s, flavor %q is %s", typeName(want), f.GetId(), typeName(got)),
			Err:    ErrFlavorTypeMismatch,
		}
	}
	switch {
	case s.GetK8Slice() != nil:
		return matchK8Slice(s.GetK8Slice(), f.GetK8Slice())
	case s.GetService() != nil:
		return matchService(s.GetService(), f.GetService())
	case s.GetVm() != nil:
		return matchVM(s.GetVm(), f.GetVm())
	case s.GetSensor() != nil:
		return matchSensor(s.GetSensor(), f.GetSensor())
	}
	return nil
}

func matchK8Slice(s *K8SliceSelector, k *K8Slice) error {
	c := k.GetCharacteristics()
	if c == nil {
		// Every filter of a K8SliceSelector is on the characteristics.
		for _, set := range []bool{
			s.GetArchitecture().GetFilter() != nil, s.GetCpu().GetFilter() != nil,
			s.GetMemory().GetFilter() != nil, s.GetPods().GetFilter() != nil,
			s.GetStorage().GetFilter() != nil, s.GetGpu() != nil,
		} {
			if set {
				return &MismatchError{Field: "k8slice", Detail: "flavor has no characteristics", Err: ErrFieldAbsent}
			}
		}
		return nil
	}
	return firstErr(
		func() error { return matchText("k8slice.architecture", s.GetArchitecture(), c.GetArchitecture()) },
		func() error { return matchQuantity("k8slice.cpu", s.GetCpu(), c.GetCpu()) },
		func() error { return matchQuantity("k8slice.memory", s.GetMemory(), c.GetMemory()) },
		func() error { return matchQuantity("k8slice.pods", s.GetPods(), c.GetPods()) },
		func() error { return matchQuantity("k8slice.storage", s.GetStorage(), c.GetStorage()) },
		func() error { return matchGPU("k8slice.gpu", s.GetGpu(), c.GetGpu()) },
	)
}

func matchService(s *ServiceSelector, sv *Service) error {
	return firstErr(
		func() error { return matchText("service.category", s.GetCategory(), sv.GetCategory()) },
		func() error {
			if len(s.GetTags()) == 0 {
				return nil
			}
			if len(sv.GetTags()) == 0 {
				return &MismatchError{Field: "service.tags", Detail: "service has no tags", Err: ErrFieldAbsent}
			}
			for _, tag := range s.GetTags() {
				if !slices.Contains(sv.GetTags(), tag) {
					return &MismatchError{Field: "service.tags", Detail: fmt.Sprintf("service lacks tag %q", tag)}
				}
			}
			return nil
		},
		func() error { return matchText("service.name", s.GetName(), sv.GetName()) },
	)
}

func matchVM(s *VMSelector, vm *VM) error {
	return firstErr(
		func() error { return matchText("vm.architecture", s.GetArchitecture(), vm.GetArchitecture()) },
		func() error { return matchQuantity("vm.cpu", s.GetCpu(), vm.GetCpu()) },
		func() error { return matchQuantity("vm.memory", s.GetMemory(), vm.GetMemory()) },
		func() error { return matchQuantity("vm.storage", s.GetStorage(), vm.GetStorage()) },
		func() error { return matchText("vm.os_image", s.GetOsImage(), vm.GetOsImage()) },
		func() error { return matchText("vm.hypervisor", s.GetHypervisor(), vm.GetHypervisor()) },
		func() error { return matchGPU("vm.gpu", s.GetGpu(), vm.GetGpu()) },
	)
}

func matchSensor(s *SensorSelector, sn *Sensor) error {
	return firstErr(
		func() error { return matchText("sensor.sensor_type", s.GetSensorType(), sn.GetSensorType()) },
		func() error {
			return matchFloat("sensor.sampling_rate_hz", s.GetSamplingRateHz(), sn.GetSamplingRateHz())
		},
		func() error { return matchFloat("sensor.accuracy", s.GetAccuracy(), sn.GetAccuracy()) },
		func() error { return matchText("sensor.unit", s.GetUnit(), sn.GetUnit()) },
	)
}

func firstErr(checks ...func() error) error {
	for _, c := range checks {
		if err := c(); err != nil {
			return err
		}
	}
	return nil
}

func matchText(field string, f *StringFilter, v string) error {
	if f.GetFilter() == nil {
		return nil
	}
	if v == "" {
		return &MismatchError{Field: field, Detail: "flavor has no value", Err: ErrFieldAbsent}
	}
	switch x := f.GetFilter().(type) {
	case *StringFilter_Exact:
		if v != x.Exact {
			return &MismatchError{Field: field, Detail: fmt.Sprintf("%q is not %q", v, x.Exact)}
		}
	case *StringFilter_Regex:
		re, err := compileWhole(x.Regex)
		if err != nil {
			// Validate already rejected it; kept so that a bad pattern can
			// never read as a match.
			return &SelectorError{Field: field + ".regex", Err: fmt.Errorf("%w: %w", ErrInvalidRegex, err)}
		}
		if !re.MatchString(v) {
			return &MismatchError{Field: field, Detail: fmt.Sprintf("%q does not match regex %q", v, x.Regex)}
		}
	}
	return nil
}

func matchQuantity(field string, f *ResourceFilter, v int64) error {
	switch {
	case f.GetMatch() != nil:
		if want := f.GetMatch().GetValue(); v != want {
			return &MismatchError{Field: field, Detail: fmt.Sprintf("%d is not %d", v, want)}
		}
	case f.GetRange() != nil:
		r := f.GetRange()
		if (r.Min != nil && v < r.GetMin()) || (r.Max != nil && v > r.GetMax()) {
			return &MismatchError{Field: field, Detail: fmt.Sprintf("%d not in %s", v, rangeText(r.Min != nil, strconv.FormatInt(r.GetMin(), 10), r.Max != nil, strconv.FormatInt(r.GetMax(), 10)))}
		}
	}
	return nil
}

func matchFloat(field string, r *FloatRangeSelector, v float64) error {
	if r == nil {
		return nil
	}
	if (r.Min != nil && !(v >= r.GetMin())) || (r.Max != nil && !(v <= r.GetMax())) {
		return &MismatchError{Field: field, Detail: fmt.Sprintf("%s not in %s", formatFloat(v), rangeText(r.Min != nil, formatFloat(r.GetMin()), r.Max != nil, formatFloat(r.GetMax())))}
	}
	return nil
}

func matchGPU(field string, s *GPUSelector, g *GPU) error {
	if s == nil {
		return nil
	}
	if g == nil {
		return &MismatchError{Field: field, Detail: "flavor has no GPU", Err: ErrFieldAbsent}
	}
	return firstErr(
		func() error { return matchText(field+".model", s.GetModel(), g.GetModel()) },
		func() error { return matchQuantity(field+".cores", s.GetCores(), g.GetCores()) },
		func() error { return matchQuantity(field+".memory", s.GetMemory(), g.GetMemory()) },
	)
}

// rangeText renders an inclusive range with open ends, for example
// "[1000, 4000]" or "[1000, ∞)".
func rangeText(hasMin bool, lo string, hasMax bool, hi string) string {
	l, h := "[", "]"
	if !hasMin {
		l, lo = "(", "-∞"
	}
	if !hasMax {
		h, hi = ")", "∞"
	}
	return l + lo + ", " + hi + h
}
