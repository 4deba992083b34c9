package rear

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/edgekit/edgekit/fluidos"
)

// EncodeFlavor is the wire form of f. A flavor without a type, or whose
// type's object cannot be encoded, is an error naming the field.
func EncodeFlavor(f *fluidos.Flavor) (*Flavor, error) {
	if f == nil {
		return nil, fieldErr("flavor", "no flavor")
	}
	w := &Flavor{
		FlavorID:            f.GetId(),
		ProviderID:          f.GetProviderId(),
		NetworkPropertyType: f.GetNetworkPropertyType(),
		Timestamp:           timeOf(f.GetCreatedAt()),
		Location:            encodeLocation(f.GetLocation()),
		Price:               Price{Amount: f.GetPrice().GetAmount(), Currency: f.GetPrice().GetCurrency(), Period: f.GetPrice().GetPeriod()},
		Owner:               EncodeNodeIdentity(f.GetOwner()),
		Availability:        f.GetAvailability(),
	}
	var data any
	var err error
	switch s := f.GetSpec().(type) {
	case *fluidos.Flavor_K8Slice:
		w.Type.Name, data = TypeK8Slice, encodeK8Slice(s.K8Slice)
	case *fluidos.Flavor_Service:
		w.Type.Name = TypeService
		data, err = encodeService(s.Service)
	case *fluidos.Flavor_Vm:
		w.Type.Name, data = TypeVM, encodeVM(s.Vm)
	case *fluidos.Flavor_Sensor:
		w.Type.Name, data = TypeSensor, encodeSensor(s.Sensor)
	default:
		return nil, fieldErr("type", "flavor %q has no type", f.GetId())
	}
	if err != nil {
		return nil, within("type.data", err)
	}
	if w.Type.Data, err = json.Marshal(data); err != nil {
		return nil, within("type.data", err)
	}
	return w, nil
}

// DecodeFlavor is the typed form of w. An unknown type name, a type's
// object that is not the JSON of its type, or a bad quantity is an error
// naming the field.
func DecodeFlavor(w *Flavor) (*fluidos.Flavor, error) {
	if w == nil {
		return nil, fieldErr("flavor", "no flavor")
	}
	loc, err := decodeLocation(w.Location)
	if err != nil {
		return nil, within("location", err)
	}
	f := &fluidos.Flavor{
		Id:                  w.FlavorID,
		ProviderId:          w.ProviderID,
		NetworkPropertyType: w.NetworkPropertyType,
		CreatedAt:           timestampOf(w.Timestamp),
		Location:            loc,
		Price:               &fluidos.Price{Amount: w.Price.Amount, Currency: w.Price.Currency, Period: w.Price.Period},
		Owner:               DecodeNodeIdentity(w.Owner),
		Availability:        w.Availability,
	}
	switch w.Type.Name {
	case TypeK8Slice:
		var d K8Slice
		if err := unmarshalData(w.Type.Data, &d); err != nil {
			return nil, err
		}
		k, err := decodeK8Slice(&d)
		if err != nil {
			return nil, within("type.data", err)
		}
		f.Spec = &fluidos.Flavor_K8Slice{K8Slice: k}
	case TypeService:
		var d ServiceFlavor
		if err := unmarshalData(w.Type.Data, &d); err != nil {
			return nil, err
		}
		s, err := decodeService(&d)
		if err != nil {
			return nil, within("type.data", err)
		}
		f.Spec = &fluidos.Flavor_Service{Service: s}
	case TypeVM:
		var d VM
		if err := unmarshalData(w.Type.Data, &d); err != nil {
			return nil, err
		}
		vm, err := decodeVM(&d)
		if err != nil {
			return nil, within("type.data", err)
		}
		f.Spec = &fluidos.Flavor_Vm{Vm: vm}
	case TypeSensor:
		var d Sensor
		if err := unmarshalData(w.Type.Data, &d); err != nil {
			return nil, err
		}
		s, err := decodeSensor(&d)
		if err != nil {
			return nil, within("type.data", err)
		}
		f.Spec = &fluidos.Flavor_Sensor{Sensor: s}
	default:
		return nil, fieldErr("type.name", "unknown flavor type %q (want k8slice, service, vm or sensor)", w.Type.Name)
	}
	return f, nil
}

func unmarshalData(data json.RawMessage, into any) error {
	if len(data) == 0 {
		return fieldErr("type.data", "missing")
	}
	if err := json.Unmarshal(data, into); err != nil {
		return fieldErr("type.data", "%v", err)
	}
	return nil
}

// EncodeNodeIdentity is the wire form of n (its local namespace stays
// home).
func EncodeNodeIdentity(n *fluidos.NodeIdentity) NodeIdentity {
	w := NodeIdentity{NodeID: n.GetNodeId(), IP: n.GetIp(), Domain: n.GetDomain()}
	if a := n.GetAdditionalInformation(); a != nil {
		w.AdditionalInformation = &NodeAdditional{LiqoID: a.GetLiqoId(), Kubeconfig: a.GetKubeconfig()}
	}
	return w
}

// DecodeNodeIdentity is the typed form of w.
func DecodeNodeIdentity(w NodeIdentity) *fluidos.NodeIdentity {
	n := &fluidos.NodeIdentity{NodeId: w.NodeID, Ip: w.IP, Domain: w.Domain}
	if a := w.AdditionalInformation; a != nil {
		n.AdditionalInformation = &fluidos.NodeAdditionalInformation{LiqoId: a.LiqoID, Kubeconfig: a.Kubeconfig}
	}
	return n
}

func encodeLocation(l *fluidos.Location) *Location {
	if l == nil {
		return nil
	}
	return &Location{
		Latitude:        formatDegrees(l.GetLatitude()),
		Longitude:       formatDegrees(l.GetLongitude()),
		Country:         l.GetCountry(),
		City:            l.GetCity(),
		AdditionalNotes: l.GetAdditionalNotes(),
	}
}

func decodeLocation(w *Location) (*fluidos.Location, error) {
	if w == nil {
		return nil, nil
	}
	lat, err := parseDegrees("latitude", w.Latitude, 90)
	if err != nil {
		return nil, err
	}
	lon, err := parseDegrees("longitude", w.Longitude, 180)
	if err != nil {
		return nil, err
	}
	return &fluidos.Location{Latitude: lat, Longitude: lon, Country: w.Country, City: w.City, AdditionalNotes: w.AdditionalNotes}, nil
}

// formatDegrees is the wire text of a coordinate; 0 is sent as absent,
// as the reference node omits an empty one.
func formatDegrees(v float64) string {
	if v == 0 {
		return ""
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

func parseDegrees(field, s string, limit float64) (float64, error) {
	if s == "" {
		return 0, nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.Abs(v) > limit {
		return 0, fieldErr(field, "%q is not a number of degrees within ±%g", s, limit)
	}
	return v, nil
}

func timeOf(ts *timestamppb.Timestamp) time.Time {
	if ts == nil {
		return time.Time{}
	}
	return ts.AsTime()
}

func timestampOf(t time.Time) *timestamppb.Timestamp {
	if t.IsZero() {
		return nil
	}
	return timestamppb.New(t)
}

// formatTime is the RFC 3339 text of ts, empty for none.
func formatTime(ts *timestamppb.Timestamp) string {
	if ts == nil {
		return ""
	}
	return ts.AsTime().UTC().Format(time.RFC3339Nano)
}

// parseTime parses RFC 3339 text; empty is none.
func parseTime(field, s string) (*timestamppb.Timestamp, error) {
	if s == "" {
		return nil, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return nil, fieldErr(field, "%q is not an RFC 3339 time", s)
	}
	return timestamppb.New(t), nil
}

func encodeGPU(g *fluidos.GPU) *GPU {
	if g == nil {
		return nil
	}
	return &GPU{Model: g.GetModel(), Cores: FormatCount(g.GetCores()), Memory: FormatBytes(g.GetMemory())}
}

func decodeGPU(w *GPU) (*fluidos.GPU, error) {
	if w == nil {
		return nil, nil
	}
	cores, err := quantityField("gpu.cores", w.Cores, ParseCount)
	if err != nil {
		return nil, err
	}
	mem, err := quantityField("gpu.memory", w.Memory, ParseBytes)
	if err != nil {
		return nil, err
	}
	return &fluidos.GPU{Model: w.Model, Cores: cores, Memory: mem}, nil
}

func encodeVM(v *fluidos.VM) *VM {
	return &VM{
		Architecture: v.GetArchitecture(),
		CPU:          FormatCPU(v.GetCpu()),
		Memory:       FormatBytes(v.GetMemory()),
		Storage:      FormatBytes(v.GetStorage()),
		OSImage:      v.GetOsImage(),
		GPU:          encodeGPU(v.GetGpu()),
		Hypervisor:   v.GetHypervisor(),
	}
}

func decodeVM(w *VM) (*fluidos.VM, error) {
	vm := &fluidos.VM{Architecture: w.Architecture, OsImage: w.OSImage, Hypervisor: w.Hypervisor}
	var err error
	if vm.Cpu, err = quantityField("cpu", w.CPU, ParseCPU); err != nil {
		return nil, err
	}
	if vm.Memory, err = quantityField("memory", w.Memory, ParseBytes); err != nil {
		return nil, err
	}
	if vm.Storage, err = quantityField("storage", w.Storage, ParseBytes); err != nil {
		return nil, err
	}
	if vm.Gpu, err = decodeGPU(w.GPU); err != nil {
		return nil, err
	}
	return vm, nil
}

func encodeSensor(s *fluidos.Sensor) *Sensor {
	return &Sensor{
		SensorType:     s.GetSensorType(),
		SamplingRateHz: s.GetSamplingRateHz(),
		Accuracy:       s.GetAccuracy(),
		Unit:           s.GetUnit(),
		SourceEndpoint: s.GetSourceEndpoint(),
		Location:       encodeLocation(s.GetLocation()),
	}
}

func decodeSensor(w *Sensor) (*fluidos.Sensor, error) {
	loc, err := decodeLocation(w.Location)
	if err != nil {
		return nil, within("location", err)
	}
	for _, v := range []struct {
		name string
		val  float64
	}{{"samplingRateHz", w.SamplingRateHz}, {"accuracy", w.Accuracy}} {
		if v.val < 0 {
			return nil, fieldErr(v.name, "negative: %v", v.val)
		}
	}
	return &fluidos.Sensor{
		SensorType:     w.SensorType,
		SamplingRateHz: w.SamplingRateHz,
		Accuracy:       w.Accuracy,
		Unit:           w.Unit,
		SourceEndpoint: w.SourceEndpoint,
		Location:       loc,
	}, nil
}

// hostingName and hostingPolicy convert hosting policies.
func hostingName(p fluidos.HostingPolicy) (string, error) {
	switch p {
	case fluidos.HostingPolicy_HOSTING_POLICY_PROVIDER:
		return HostingProvider, nil
	case fluidos.HostingPolicy_HOSTING_POLICY_CONSUMER:
		return HostingConsumer, nil
	case fluidos.HostingPolicy_HOSTING_POLICY_SHARED:
		return HostingShared, nil
	}
	return "", fmt.Errorf("hosting policy %v has no REAR name", p)
}

func hostingPolicy(s string) (fluidos.HostingPolicy, error) {
	switch s {
	case HostingProvider:
		return fluidos.HostingPolicy_HOSTING_POLICY_PROVIDER, nil
	case HostingConsumer:
		return fluidos.HostingPolicy_HOSTING_POLICY_CONSUMER, nil
	case HostingShared:
		return fluidos.HostingPolicy_HOSTING_POLICY_SHARED, nil
	}
	return 0, fmt.Errorf("unknown hosting policy %q (want Provider, Consumer or Shared)", s)
}

func encodeService(s *fluidos.Service) (*ServiceFlavor, error) {
	w := &ServiceFlavor{Name: s.GetName(), Description: s.GetDescription(), Category: s.GetCategory(), Tags: s.GetTags(),
		MaxInstances: s.GetMaxInstances(), SoldInstances: s.GetSoldInstances()}
	for i, p := range s.GetHostingPolicies() {
		name, err := hostingName(p)
		if err != nil {
			return nil, &FieldError{Field: fmt.Sprintf("hostingPolicies[%d]", i), Err: err}
		}
		w.HostingPolicies = append(w.HostingPolicies, name)
	}
	if t := s.GetConfigurationTemplate(); t != "" {
		if !json.Valid([]byte(t)) {
			return nil, fieldErr("configurationTemplate", "not JSON")
		}
		w.ConfigurationTemplate = json.RawMessage(t)
		return w, nil
	}
	tmpl, err := TemplateOf(s.GetConfigurationSchema())
	if err != nil {
		return nil, within("configurationTemplate", err)
	}
	w.ConfigurationTemplate = tmpl
	return w, nil
}

func decodeService(w *ServiceFlavor) (*fluidos.Service, error) {
	s := &fluidos.Service{Name: w.Name, Description: w.Description, Category: w.Category, Tags: w.Tags,
		MaxInstances: w.MaxInstances, SoldInstances: w.SoldInstances}
	for i, name := range w.HostingPolicies {
		p, err := hostingPolicy(name)
		if err != nil {
			return nil, &FieldError{Field: fmt.Sprintf("hostingPolicies[%d]", i), Err: err}
		}
		s.HostingPolicies = append(s.HostingPolicies, p)
	}
	if len(w.ConfigurationTemplate) > 0 {
		s.ConfigurationTemplate = string(w.ConfigurationTemplate)
		s.ConfigurationSchema = SchemaOf(w.ConfigurationTemplate)
	}
	return s, nil
}
