package rear

import (
	"net/url"
	"strconv"

	"github.com/edgekit/edgekit/fluidos"
)

// SelectorType is the flavor type a selector wants: its flavor_type, else
// the type of its filter, else FLAVOR_TYPE_UNSPECIFIED.
func SelectorType(sel *fluidos.Selector) fluidos.FlavorType {
	if t := sel.GetFlavorType(); t != fluidos.FlavorType_FLAVOR_TYPE_UNSPECIFIED {
		return t
	}
	switch {
	case sel.GetK8Slice() != nil:
		return fluidos.FlavorType_FLAVOR_TYPE_K8SLICE
	case sel.GetService() != nil:
		return fluidos.FlavorType_FLAVOR_TYPE_SERVICE
	case sel.GetVm() != nil:
		return fluidos.FlavorType_FLAVOR_TYPE_VM
	case sel.GetSensor() != nil:
		return fluidos.FlavorType_FLAVOR_TYPE_SENSOR
	}
	return fluidos.FlavorType_FLAVOR_TYPE_UNSPECIFIED
}

// EncodeQuery is the discovery route and query string of sel, the inverse
// of ParseQuery: ParseQuery(SelectorType(sel), q) selects what sel selects.
//
// With portable set, only what a reference node understands is encoded
// (k8slice: architecture match, cpu, memory, pods and storage; service:
// category match and the first tag), and vm and sensor selectors go to
// RouteFlavors with no filter: the caller must then filter what it
// receives with sel.Match, since the answer is a superset.
func EncodeQuery(sel *fluidos.Selector, portable bool) (route string, q url.Values) {
	q = url.Values{}
	t := SelectorType(sel)
	route = RouteOf(t)
	switch t {
	case fluidos.FlavorType_FLAVOR_TYPE_K8SLICE:
		k := sel.GetK8Slice()
		putString(q, "architecture", k.GetArchitecture(), portable)
		putResource(q, "cpu", k.GetCpu(), FormatCPU)
		putResource(q, "memory", k.GetMemory(), FormatBytes)
		putResource(q, "pods", k.GetPods(), FormatCount)
		putResource(q, "storage", k.GetStorage(), FormatBytes)
		if !portable {
			putGPU(q, k.GetGpu())
		}
	case fluidos.FlavorType_FLAVOR_TYPE_SERVICE:
		s := sel.GetService()
		putString(q, "category", s.GetCategory(), portable)
		if tags := s.GetTags(); len(tags) > 0 {
			if portable {
				tags = tags[:1]
			}
			q["filter[tags][match]"] = append([]string(nil), tags...)
		}
		if !portable {
			putString(q, "name", s.GetName(), false)
		}
	case fluidos.FlavorType_FLAVOR_TYPE_VM:
		if portable {
			return RouteFlavors, url.Values{}
		}
		vm := sel.GetVm()
		putString(q, "architecture", vm.GetArchitecture(), false)
		putResource(q, "cpu", vm.GetCpu(), FormatCPU)
		putResource(q, "memory", vm.GetMemory(), FormatBytes)
		putResource(q, "storage", vm.GetStorage(), FormatBytes)
		putString(q, "osImage", vm.GetOsImage(), false)
		putString(q, "hypervisor", vm.GetHypervisor(), false)
		putGPU(q, vm.GetGpu())
	case fluidos.FlavorType_FLAVOR_TYPE_SENSOR:
		if portable {
			return RouteFlavors, url.Values{}
		}
		sn := sel.GetSensor()
		putString(q, "sensorType", sn.GetSensorType(), false)
		putString(q, "unit", sn.GetUnit(), false)
		putFloat(q, "samplingRate", sn.GetSamplingRateHz())
		putFloat(q, "accuracy", sn.GetAccuracy())
	}
	return route, q
}

// putString encodes a text filter; a regex is left out when portable (a
// reference node refuses it).
func putString(q url.Values, field string, f *fluidos.StringFilter, portable bool) {
	switch x := f.GetFilter().(type) {
	case *fluidos.StringFilter_Exact:
		q.Set("filter["+field+"][match]", x.Exact)
	case *fluidos.StringFilter_Regex:
		if !portable {
			q.Set("filter["+field+"][range][regex]", x.Regex)
		}
	}
}

func putResource(q url.Values, field string, f *fluidos.ResourceFilter, format func(int64) string) {
	switch {
	case f.GetMatch() != nil:
		q.Set("filter["+field+"][match]", format(f.GetMatch().GetValue()))
	case f.GetRange() != nil:
		r := f.GetRange()
		if r.Min != nil {
			q.Set("filter["+field+"][range][min]", format(r.GetMin()))
		}
		if r.Max != nil {
			q.Set("filter["+field+"][range][max]", format(r.GetMax()))
		}
	}
}

func putFloat(q url.Values, field string, r *fluidos.FloatRangeSelector) {
	if r == nil {
		return
	}
	if r.Min != nil {
		q.Set("filter["+field+"][range][min]", strconv.FormatFloat(r.GetMin(), 'g', -1, 64))
	}
	if r.Max != nil {
		q.Set("filter["+field+"][range][max]", strconv.FormatFloat(r.GetMax(), 'g', -1, 64))
	}
}

func putGPU(q url.Values, g *fluidos.GPUSelector) {
	if g == nil {
		return
	}
	q.Set("filter[gpu][match]", "true")
	putString(q, "gpuModel", g.GetModel(), false)
	putResource(q, "gpuCores", g.GetCores(), FormatCount)
	putResource(q, "gpuMemory", g.GetMemory(), FormatBytes)
}
