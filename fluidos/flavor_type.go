package fluidos

import "strings"

// FlavorTypeOf returns the type of what f offers, from the member of its
// spec oneof; FLAVOR_TYPE_UNSPECIFIED when f is nil or offers nothing.
func FlavorTypeOf(f *Flavor) FlavorType {
	switch {
	case f.GetK8Slice() != nil:
		return FlavorType_FLAVOR_TYPE_K8SLICE
	case f.GetService() != nil:
		return FlavorType_FLAVOR_TYPE_SERVICE
	case f.GetVm() != nil:
		return FlavorType_FLAVOR_TYPE_VM
	case f.GetSensor() != nil:
		return FlavorType_FLAVOR_TYPE_SENSOR
	}
	return FlavorType_FLAVOR_TYPE_UNSPECIFIED
}

// filterType returns the flavor type of the selector's filter, or
// FLAVOR_TYPE_UNSPECIFIED when it has none.
func filterType(s *Selector) FlavorType {
	switch {
	case s.GetK8Slice() != nil:
		return FlavorType_FLAVOR_TYPE_K8SLICE
	case s.GetService() != nil:
		return FlavorType_FLAVOR_TYPE_SERVICE
	case s.GetVm() != nil:
		return FlavorType_FLAVOR_TYPE_VM
	case s.GetSensor() != nil:
		return FlavorType_FLAVOR_TYPE_SENSOR
	}
	return FlavorType_FLAVOR_TYPE_UNSPECIFIED
}

// typeName is the enum value name without its FLAVOR_TYPE_ prefix.
func typeName(t FlavorType) string {
	return strings.TrimPrefix(t.String(), "FLAVOR_TYPE_")
}
