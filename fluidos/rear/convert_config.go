package rear

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/edgekit/edgekit/fluidos"
)

// EncodeConfiguration is the wire form of cfg; nil for none. flavor, the
// flavor cfg is for, may be nil: it gives the types of a service's
// parameters when cfg carries them as text only (see ConfigurationData).
func EncodeConfiguration(cfg *fluidos.Configuration, flavor *fluidos.Flavor) (*Configuration, error) {
	if cfg == nil {
		return nil, nil
	}
	var (
		w    Configuration
		data any
		err  error
	)
	switch s := cfg.GetSpec().(type) {
	case *fluidos.Configuration_K8Slice:
		w.Type = TypeK8Slice
		k := s.K8Slice
		kc := &K8SliceConfiguration{CPU: FormatCPU(k.GetCpu()), Memory: FormatBytes(k.GetMemory()), Pods: FormatCount(k.GetPods()), GPU: encodeGPU(k.GetGpu())}
		if k.GetStorage() != 0 {
			st := FormatBytes(k.GetStorage())
			kc.Storage = &st
		}
		data = kc
	case *fluidos.Configuration_Service:
		w.Type = TypeService
		sc := &ServiceConfiguration{}
		if p := s.Service.GetHostingPolicy(); p != fluidos.HostingPolicy_HOSTING_POLICY_UNSPECIFIED {
			name, err := hostingName(p)
			if err != nil {
				return nil, &FieldError{Field: "data.hostingPolicy", Err: err}
			}
			sc.HostingPolicy = &name
		}
		if sc.ConfigurationData, err = ConfigurationData(s.Service, flavor.GetService().GetConfigurationSchema()); err != nil {
			return nil, within("data.configurationData", err)
		}
		data = sc
	case *fluidos.Configuration_Vm:
		w.Type = TypeVM
		data = &VMConfiguration{CPU: FormatCPU(s.Vm.GetCpu()), Memory: FormatBytes(s.Vm.GetMemory()), Storage: FormatBytes(s.Vm.GetStorage()), OSImage: s.Vm.GetOsImage()}
	case *fluidos.Configuration_Sensor:
		w.Type = TypeSensor
		data = &SensorConfiguration{SamplingRateHz: s.Sensor.GetSamplingRateHz()}
	default:
		return nil, fieldErr("type", "configuration has no type")
	}
	if w.Data, err = json.Marshal(data); err != nil {
		return nil, within("data", err)
	}
	return &w, nil
}

// DecodeConfiguration is the typed form of w; nil for none. A service's
// configurationData is kept as received (configuration_data) and, when
// it is an object of strings, numbers and booleans, also given as
// parameters.
func DecodeConfiguration(w *Configuration) (*fluidos.Configuration, error) {
	if w == nil {
		return nil, nil
	}
	if len(w.Data) == 0 {
		return nil, fieldErr("data", "missing")
	}
	bad := func(err error) error { return fieldErr("data", "%v", err) }
	switch w.Type {
	case TypeK8Slice:
		var d K8SliceConfiguration
		if err := json.Unmarshal(w.Data, &d); err != nil {
			return nil, bad(err)
		}
		k := &fluidos.K8SliceConfiguration{}
		var err error
		if k.Cpu, err = quantityField("data.cpu", d.CPU, ParseCPU); err != nil {
			return nil, err
		}
		if k.Memory, err = quantityField("data.memory", d.Memory, ParseBytes); err != nil {
			return nil, err
		}
		if k.Pods, err = quantityField("data.pods", d.Pods, ParseCount); err != nil {
			return nil, err
		}
		if d.Storage != nil {
			if k.Storage, err = quantityField("data.storage", *d.Storage, ParseBytes); err != nil {
				return nil, err
			}
		}
		if k.Gpu, err = decodeGPU(d.GPU); err != nil {
			return nil, within("data", err)
		}
		return &fluidos.Configuration{Spec: &fluidos.Configuration_K8Slice{K8Slice: k}}, nil
	case TypeService:
		var d ServiceConfiguration
		if err := json.Unmarshal(w.Data, &d); err != nil {
			return nil, bad(err)
		}
		sc := &fluidos.ServiceConfiguration{}
		if d.HostingPolicy != nil {
			p, err := hostingPolicy(*d.HostingPolicy)
			if err != nil {
				return nil, &FieldError{Field: "data.hostingPolicy", Err: err}
			}
			sc.HostingPolicy = p
		}
		if len(d.ConfigurationData) > 0 {
			sc.ConfigurationData = string(d.ConfigurationData)
			sc.Parameters = parametersOf(d.ConfigurationData)
		}
		return &fluidos.Configuration{Spec: &fluidos.Configuration_Service{Service: sc}}, nil
	case TypeVM:
		var d VMConfiguration
		if err := json.Unmarshal(w.Data, &d); err != nil {
			return nil, bad(err)
		}
		vm := &fluidos.VMConfiguration{OsImage: d.OSImage}
		var err error
		if vm.Cpu, err = quantityField("data.cpu", d.CPU, ParseCPU); err != nil {
			return nil, err
		}
		if vm.Memory, err = quantityField("data.memory", d.Memory, ParseBytes); err != nil {
			return nil, err
		}
		if vm.Storage, err = quantityField("data.storage", d.Storage, ParseBytes); err != nil {
			return nil, err
		}
		return &fluidos.Configuration{Spec: &fluidos.Configuration_Vm{Vm: vm}}, nil
	case TypeSensor:
		var d SensorConfiguration
		if err := json.Unmarshal(w.Data, &d); err != nil {
			return nil, bad(err)
		}
		if d.SamplingRateHz < 0 {
			return nil, fieldErr("data.samplingRateHz", "negative: %v", d.SamplingRateHz)
		}
		return &fluidos.Configuration{Spec: &fluidos.Configuration_Sensor{Sensor: &fluidos.SensorConfiguration{SamplingRateHz: d.SamplingRateHz}}}, nil
	}
	return nil, fieldErr("type", "unknown configuration type %q (want k8slice, service, vm or sensor)", w.Type)
}

// ConfigurationData is the JSON value of a service configuration: its
// configuration_data when set, else an object of its parameters, each
// typed by schema (INT and FLOAT as numbers, BOOL as a boolean, others as
// strings). A value that does not parse as its type is an error matching
// ErrInvalidConfiguration.
func ConfigurationData(cfg *fluidos.ServiceConfiguration, schema *fluidos.ConfigurationSchema) (json.RawMessage, error) {
	if d := cfg.GetConfigurationData(); d != "" {
		if !json.Valid([]byte(d)) {
			return nil, fmt.Errorf("%w: configuration data is not JSON", ErrInvalidConfiguration)
		}
		return json.RawMessage(d), nil
	}
	types := map[string]fluidos.ParameterType{}
	for _, p := range schema.GetParameters() {
		types[p.GetName()] = p.GetType()
	}
	obj := make(map[string]any, len(cfg.GetParameters()))
	for name, v := range cfg.GetParameters() {
		switch types[name] {
		case fluidos.ParameterType_PARAMETER_TYPE_INT:
			if _, err := strconv.ParseInt(v, 10, 64); err != nil || !json.Valid([]byte(v)) {
				return nil, fmt.Errorf("%w: parameter %s: %q is not an integer", ErrInvalidConfiguration, name, v)
			}
			obj[name] = json.Number(v)
		case fluidos.ParameterType_PARAMETER_TYPE_FLOAT:
			if _, err := strconv.ParseFloat(v, 64); err != nil || !json.Valid([]byte(v)) {
				return nil, fmt.Errorf("%w: parameter %s: %q is not a decimal number", ErrInvalidConfiguration, name, v)
			}
			obj[name] = json.Number(v)
		case fluidos.ParameterType_PARAMETER_TYPE_BOOL:
			b, err := strconv.ParseBool(v)
			if err != nil || (v != "true" && v != "false") {
				return nil, fmt.Errorf("%w: parameter %s: %q is not true or false", ErrInvalidConfiguration, name, v)
			}
			obj[name] = b
		default:
			obj[name] = v
		}
	}
	return json.Marshal(obj)
}

// parametersOf gives the members of a JSON object of scalars as text;
// nil when data is anything else.
func parametersOf(data json.RawMessage) map[string]string {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil || obj == nil {
		return nil
	}
	out := make(map[string]string, len(obj))
	for k, v := range obj {
		switch x := v.(type) {
		case string:
			out[k] = x
		case json.Number:
			out[k] = x.String()
		case bool:
			out[k] = strconv.FormatBool(x)
		default:
			return nil
		}
	}
	return out
}
