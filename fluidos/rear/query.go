package rear

import (
	"fmt"
	"math"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/edgekit/edgekit/fluidos"
)

// Provider routes.
const (
	RouteFlavors        = "/api/v2/flavors"
	RouteK8SliceFlavors = "/api/v2/flavors/k8slice"
	RouteServiceFlavors = "/api/v2/flavors/service"
	RouteVMFlavors      = "/api/v2/flavors/vm"
	RouteSensorFlavors  = "/api/v2/flavors/sensors"
	RouteReservations   = "/api/v2/reservations"
	// RoutePurchase has the transaction identifier in place of
	// {transactionID}; see PurchasePath.
	RoutePurchase = "/api/v2/transactions/{transactionID}/purchase"
)

// PurchasePath is the purchase route of a transaction.
func PurchasePath(transactionID string) string {
	return "/api/v2/transactions/" + url.PathEscape(transactionID) + "/purchase"
}

// maxFilterKeys bounds the keys of one query.
const maxFilterKeys = 32

// filterKey is filter[<field>][match] or filter[<field>][range][min|max|regex].
// The reference node sends a storage filter without its "filter" prefix;
// that spelling is accepted too.
var filterKey = regexp.MustCompile(`^(?:filter)?\[([A-Za-z]+)\]\[(match|range)\](?:\[(min|max|regex)\])?$`)

type fieldKind int

const (
	kindString fieldKind = iota
	kindCPU
	kindBytes
	kindCount
	kindFloat
	kindTags
	kindPresence
)

// queryFields are the filterable fields of each flavor type, by query
// name.
var queryFields = map[fluidos.FlavorType]map[string]fieldKind{
	fluidos.FlavorType_FLAVOR_TYPE_K8SLICE: {
		"architecture": kindString, "cpu": kindCPU, "memory": kindBytes, "pods": kindCount, "storage": kindBytes,
		"gpu": kindPresence, "gpuModel": kindString, "gpuCores": kindCount, "gpuMemory": kindBytes,
	},
	fluidos.FlavorType_FLAVOR_TYPE_SERVICE: {"category": kindString, "name": kindString, "tags": kindTags},
	fluidos.FlavorType_FLAVOR_TYPE_VM: {
		"architecture": kindString, "cpu": kindCPU, "memory": kindBytes, "storage": kindBytes,
		"osImage": kindString, "hypervisor": kindString,
		"gpu": kindPresence, "gpuModel": kindString, "gpuCores": kindCount, "gpuMemory": kindBytes,
	},
	fluidos.FlavorType_FLAVOR_TYPE_SENSOR: {"sensorType": kindString, "unit": kindString, "samplingRate": kindFloat, "accuracy": kindFloat},
}

// RouteOf is the discovery route of a flavor type; RouteFlavors for
// FLAVOR_TYPE_UNSPECIFIED.
func RouteOf(t fluidos.FlavorType) string {
	switch t {
	case fluidos.FlavorType_FLAVOR_TYPE_K8SLICE:
		return RouteK8SliceFlavors
	case fluidos.FlavorType_FLAVOR_TYPE_SERVICE:
		return RouteServiceFlavors
	case fluidos.FlavorType_FLAVOR_TYPE_VM:
		return RouteVMFlavors
	case fluidos.FlavorType_FLAVOR_TYPE_SENSOR:
		return RouteSensorFlavors
	}
	return RouteFlavors
}

// fieldFilter is what a query says about one field.
type fieldFilter struct {
	match, min, max, regex *string
	tags                   []string
}

// ParseQuery parses the filters of a discovery query for flavors of type t
// into a Selector of that type. The grammar is the reference node's:
// filter[<field>][match]=<value>, filter[<field>][range][min]=<value>,
// filter[<field>][range][max]=<value>, and filter[<field>][range][regex]=<re>
// for text fields; quantities are Kubernetes quantities (CPU "500m",
// memory "2Gi"). The fields are, by type:
//
//   - k8slice: architecture, cpu, memory, pods, storage, gpuModel,
//     gpuCores, gpuMemory, and gpu ([match]=true requires a GPU);
//   - service: category, name, and tags ([match], once per tag required);
//   - vm: architecture, cpu, memory, storage, osImage, hypervisor and the
//     gpu fields of k8slice;
//   - sensor: sensorType, unit, samplingRate and accuracy (numbers).
//
// An unknown key, a key given twice, a match with a range, a bad value, or
// a selector Validate refuses is an error matching ErrBadFilter that names
// the key.
func ParseQuery(t fluidos.FlavorType, q url.Values) (*fluidos.Selector, error) {
	fields, ok := queryFields[t]
	if !ok {
		return nil, fmt.Errorf("%w: flavor type %v has no filters", ErrBadFilter, t)
	}
	if len(q) > maxFilterKeys {
		return nil, fmt.Errorf("%w: %d keys, at most %d", ErrBadFilter, len(q), maxFilterKeys)
	}
	filters := map[string]*fieldFilter{}
	keys := make([]string, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, key := range keys {
		values := q[key]
		m := filterKey.FindStringSubmatch(key)
		if m == nil {
			return nil, fmt.Errorf("%w: unknown key %q (want filter[<field>][match] or filter[<field>][range][min|max|regex])", ErrBadFilter, key)
		}
		field, op, bound := m[1], m[2], m[3]
		if !strings.HasPrefix(key, "filter") && field != "storage" {
			return nil, fmt.Errorf("%w: unknown key %q (want filter[<field>]...)", ErrBadFilter, key)
		}
		kind, ok := fields[field]
		if !ok {
			return nil, fmt.Errorf("%w: %q: %s flavors have no field %q", ErrBadFilter, key, typeWord(t), field)
		}
		if (op == "match") != (bound == "") {
			return nil, fmt.Errorf("%w: %q: a match has no bound, a range needs [min], [max] or [regex]", ErrBadFilter, key)
		}
		if kind == kindTags && op == "match" {
			for _, v := range values {
				if v == "" {
					return nil, fmt.Errorf("%w: %q: empty tag", ErrBadFilter, key)
				}
			}
			f := filterOf(filters, field)
			f.tags = append(f.tags, values...)
			continue
		}
		if len(values) != 1 || values[0] == "" {
			return nil, fmt.Errorf("%w: %q: want one non-empty value, got %q", ErrBadFilter, key, values)
		}
		v := values[0]
		textual := kind == kindString
		switch {
		case bound == "regex" && !textual, (bound == "min" || bound == "max") && (textual || kind == kindPresence || kind == kindTags):
			return nil, fmt.Errorf("%w: %q: [range][%s] does not apply to %s", ErrBadFilter, key, bound, field)
		case op == "range" && kind == kindTags:
			return nil, fmt.Errorf("%w: %q: tags are matched, not ranged", ErrBadFilter, key)
		}
		f := filterOf(filters, field)
		switch bound {
		case "":
			f.match = &v
		case "min":
			f.min = &v
		case "max":
			f.max = &v
		case "regex":
			f.regex = &v
		}
		if f.match != nil && (f.min != nil || f.max != nil || f.regex != nil) {
			return nil, fmt.Errorf("%w: field %s has both a match and a range", ErrBadFilter, field)
		}
	}
	sel := &fluidos.Selector{FlavorType: t}
	if err := buildSelector(sel, t, filters); err != nil {
		return nil, err
	}
	if err := sel.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadFilter, err)
	}
	return sel, nil
}

func filterOf(m map[string]*fieldFilter, field string) *fieldFilter {
	f := m[field]
	if f == nil {
		f = &fieldFilter{}
		m[field] = f
	}
	return f
}

func typeWord(t fluidos.FlavorType) string {
	return strings.ToLower(strings.TrimPrefix(t.String(), "FLAVOR_TYPE_"))
}

// Typed builders of one field's filter.

func stringFilter(f *fieldFilter) *fluidos.StringFilter {
	switch {
	case f == nil:
		return nil
	case f.match != nil:
		return &fluidos.StringFilter{Filter: &fluidos.StringFilter_Exact{Exact: *f.match}}
	case f.regex != nil:
		return &fluidos.StringFilter{Filter: &fluidos.StringFilter_Regex{Regex: *f.regex}}
	}
	return nil
}

func resourceFilter(field string, kind fieldKind, f *fieldFilter) (*fluidos.ResourceFilter, error) {
	if f == nil {
		return nil, nil
	}
	parse := map[fieldKind]func(string) (int64, error){kindCPU: ParseCPU, kindBytes: ParseBytes, kindCount: ParseCount}[kind]
	val := func(bound, s string) (int64, error) {
		v, err := parse(s)
		if err != nil {
			return 0, fmt.Errorf("%w: filter[%s]%s: %w", ErrBadFilter, field, bound, err)
		}
		return v, nil
	}
	if f.match != nil {
		v, err := val("[match]", *f.match)
		if err != nil {
			return nil, err
		}
		return &fluidos.ResourceFilter{Filter: &fluidos.ResourceFilter_Match{Match: &fluidos.ResourceMatchSelector{Value: v}}}, nil
	}
	r := &fluidos.ResourceRangeSelector{}
	if f.min != nil {
		v, err := val("[range][min]", *f.min)
		if err != nil {
			return nil, err
		}
		r.Min = &v
	}
	if f.max != nil {
		v, err := val("[range][max]", *f.max)
		if err != nil {
			return nil, err
		}
		r.Max = &v
	}
	return &fluidos.ResourceFilter{Filter: &fluidos.ResourceFilter_Range{Range: r}}, nil
}

func floatFilter(field string, f *fieldFilter) (*fluidos.FloatRangeSelector, error) {
	if f == nil {
		return nil, nil
	}
	val := func(bound, s string) (*float64, error) {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%w: filter[%s]%s: %q is not a finite number", ErrBadFilter, field, bound, s)
		}
		return &v, nil
	}
	r := &fluidos.FloatRangeSelector{}
	var err error
	if f.match != nil {
		if r.Min, err = val("[match]", *f.match); err != nil {
			return nil, err
		}
		r.Max = r.Min
		return r, nil
	}
	if f.min != nil {
		if r.Min, err = val("[range][min]", *f.min); err != nil {
			return nil, err
		}
	}
	if f.max != nil {
		if r.Max, err = val("[range][max]", *f.max); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// gpuSelector builds the GPU selector of k8slice and vm queries: set when
// any gpu field is.
func gpuSelector(filters map[string]*fieldFilter) (*fluidos.GPUSelector, error) {
	p, model, cores, mem := filters["gpu"], filters["gpuModel"], filters["gpuCores"], filters["gpuMemory"]
	if p == nil && model == nil && cores == nil && mem == nil {
		return nil, nil
	}
	if p != nil && (p.match == nil || *p.match != "true") {
		return nil, fmt.Errorf("%w: filter[gpu][match] only takes true (a GPU is required)", ErrBadFilter)
	}
	g := &fluidos.GPUSelector{Model: stringFilter(model)}
	var err error
	if g.Cores, err = resourceFilter("gpuCores", kindCount, cores); err != nil {
		return nil, err
	}
	if g.Memory, err = resourceFilter("gpuMemory", kindBytes, mem); err != nil {
		return nil, err
	}
	return g, nil
}

func buildSelector(sel *fluidos.Selector, t fluidos.FlavorType, f map[string]*fieldFilter) error {
	var err error
	res := func(field string, kind fieldKind, into **fluidos.ResourceFilter) {
		if err == nil {
			*into, err = resourceFilter(field, kind, f[field])
		}
	}
	switch t {
	case fluidos.FlavorType_FLAVOR_TYPE_K8SLICE:
		k := &fluidos.K8SliceSelector{Architecture: stringFilter(f["architecture"])}
		res("cpu", kindCPU, &k.Cpu)
		res("memory", kindBytes, &k.Memory)
		res("pods", kindCount, &k.Pods)
		res("storage", kindBytes, &k.Storage)
		if err == nil {
			k.Gpu, err = gpuSelector(f)
		}
		sel.Filter = &fluidos.Selector_K8Slice{K8Slice: k}
	case fluidos.FlavorType_FLAVOR_TYPE_SERVICE:
		s := &fluidos.ServiceSelector{Category: stringFilter(f["category"]), Name: stringFilter(f["name"])}
		if tags := f["tags"]; tags != nil {
			s.Tags = tags.tags
		}
		sel.Filter = &fluidos.Selector_Service{Service: s}
	case fluidos.FlavorType_FLAVOR_TYPE_VM:
		vm := &fluidos.VMSelector{
			Architecture: stringFilter(f["architecture"]),
			OsImage:      stringFilter(f["osImage"]),
			Hypervisor:   stringFilter(f["hypervisor"]),
		}
		res("cpu", kindCPU, &vm.Cpu)
		res("memory", kindBytes, &vm.Memory)
		res("storage", kindBytes, &vm.Storage)
		if err == nil {
			vm.Gpu, err = gpuSelector(f)
		}
		sel.Filter = &fluidos.Selector_Vm{Vm: vm}
	case fluidos.FlavorType_FLAVOR_TYPE_SENSOR:
		sn := &fluidos.SensorSelector{SensorType: stringFilter(f["sensorType"]), Unit: stringFilter(f["unit"])}
		if sn.SamplingRateHz, err = floatFilter("samplingRate", f["samplingRate"]); err == nil {
			sn.Accuracy, err = floatFilter("accuracy", f["accuracy"])
		}
		sel.Filter = &fluidos.Selector_Sensor{Sensor: sn}
	}
	return err
}
