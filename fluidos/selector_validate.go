package fluidos

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
)

// Validate reports every problem of s, joined (errors.Join), each a
// *SelectorError naming the field:
//
//   - flavor_type not defined by the enum (ErrUnknownFlavorType), or set
//     and different from the type of the filter (ErrFilterTypeConflict);
//   - a negative quantity in a match value or range bound
//     (ErrNegativeQuantity), a negative or non-finite number in a float
//     range (ErrNegativeQuantity, ErrNotANumber);
//   - a range whose min is above its max (ErrMinAboveMax);
//   - a regular expression that does not compile (ErrInvalidRegex), an
//     exact text filter or a tag that is empty (ErrEmptyValue).
//
// A nil selector is valid.
func (s *Selector) Validate() error {
	if s == nil {
		return nil
	}
	v := &selectorValidator{}
	ft := s.GetFlavorType()
	if _, ok := FlavorType_name[int32(ft)]; !ok {
		v.add("flavor_type", ErrUnknownFlavorType, strconv.Itoa(int(ft)))
	} else if got := filterType(s); ft != FlavorType_FLAVOR_TYPE_UNSPECIFIED && got != FlavorType_FLAVOR_TYPE_UNSPECIFIED && got != ft {
		v.add("flavor_type", ErrFilterTypeConflict, fmt.Sprintf("flavor_type %s with a %s filter", typeName(ft), typeName(got)))
	}
	switch {
	case s.GetK8Slice() != nil:
		k := s.GetK8Slice()
		v.text("k8slice.architecture", k.GetArchitecture())
		v.quantity("k8slice.cpu", k.GetCpu())
		v.quantity("k8slice.memory", k.GetMemory())
		v.quantity("k8slice.pods", k.GetPods())
		v.quantity("k8slice.storage", k.GetStorage())
		v.gpu("k8slice.gpu", k.GetGpu())
	case s.GetService() != nil:
		sv := s.GetService()
		v.text("service.category", sv.GetCategory())
		for i, tag := range sv.GetTags() {
			if tag == "" {
				v.add(fmt.Sprintf("service.tags[%d]", i), ErrEmptyValue, "")
			}
		}
		v.text("service.name", sv.GetName())
	case s.GetVm() != nil:
		vm := s.GetVm()
		v.text("vm.architecture", vm.GetArchitecture())
		v.quantity("vm.cpu", vm.GetCpu())
		v.quantity("vm.memory", vm.GetMemory())
		v.quantity("vm.storage", vm.GetStorage())
		v.text("vm.os_image", vm.GetOsImage())
		v.text("vm.hypervisor", vm.GetHypervisor())
		v.gpu("vm.gpu", vm.GetGpu())
	case s.GetSensor() != nil:
		sn := s.GetSensor()
		v.text("sensor.sensor_type", sn.GetSensorType())
		v.floatRange("sensor.sampling_rate_hz", sn.GetSamplingRateHz())
		v.floatRange("sensor.accuracy", sn.GetAccuracy())
		v.text("sensor.unit", sn.GetUnit())
	}
	return errors.Join(v.errs...)
}

type selectorValidator struct {
	errs []error
}

func (v *selectorValidator) add(field string, err error, detail string) {
	v.errs = append(v.errs, &SelectorError{Field: field, Detail: detail, Err: err})
}

func (v *selectorValidator) quantity(field string, f *ResourceFilter) {
	switch {
	case f.GetMatch() != nil:
		if val := f.GetMatch().GetValue(); val < 0 {
			v.add(field+".match.value", ErrNegativeQuantity, strconv.FormatInt(val, 10))
		}
	case f.GetRange() != nil:
		r := f.GetRange()
		if r.Min != nil && r.GetMin() < 0 {
			v.add(field+".range.min", ErrNegativeQuantity, strconv.FormatInt(r.GetMin(), 10))
		}
		if r.Max != nil && r.GetMax() < 0 {
			v.add(field+".range.max", ErrNegativeQuantity, strconv.FormatInt(r.GetMax(), 10))
		}
		if r.Min != nil && r.Max != nil && r.GetMin() > r.GetMax() {
			v.add(field+".range", ErrMinAboveMax, fmt.Sprintf("min %d above max %d", r.GetMin(), r.GetMax()))
		}
	}
}

func (v *selectorValidator) floatRange(field string, r *FloatRangeSelector) {
	if r == nil {
		return
	}
	for _, b := range []struct {
		name string
		set  bool
		val  float64
	}{{"min", r.Min != nil, r.GetMin()}, {"max", r.Max != nil, r.GetMax()}} {
		switch {
		case !b.set:
		case math.IsNaN(b.val) || math.IsInf(b.val, 0):
			v.add(field+"."+b.name, ErrNotANumber, formatFloat(b.val))
		case b.val < 0:
			v.add(field+"."+b.name, ErrNegativeQuantity, formatFloat(b.val))
		}
	}
	if r.Min != nil && r.Max != nil && r.GetMin() > r.GetMax() {
		v.add(field, ErrMinAboveMax, fmt.Sprintf("min %s above max %s", formatFloat(r.GetMin()), formatFloat(r.GetMax())))
	}
}

func (v *selectorValidator) text(field string, f *StringFilter) {
	switch x := f.GetFilter().(type) {
	case *StringFilter_Exact:
		if x.Exact == "" {
			v.add(field+".exact", ErrEmptyValue, "leave the filter unset to match any value")
		}
	case *StringFilter_Regex:
		if _, err := compileWhole(x.Regex); err != nil {
			v.add(field+".regex", fmt.Errorf("%w: %w", ErrInvalidRegex, err), "")
		}
	}
}

func (v *selectorValidator) gpu(field string, g *GPUSelector) {
	if g == nil {
		return
	}
	v.text(field+".model", g.GetModel())
	v.quantity(field+".cores", g.GetCores())
	v.quantity(field+".memory", g.GetMemory())
}

// compileWhole compiles pattern so that it must match a whole text.
func compileWhole(pattern string) (*regexp.Regexp, error) {
	if _, err := regexp.Compile(pattern); err != nil {
		return nil, err
	}
	return regexp.Compile(`^(?:` + pattern + `)$`)
}

func formatFloat(f float64) string {
	return strconv.FormatFloat(f, 'g', -1, 64)
}
