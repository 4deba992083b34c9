package rear

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"

	"github.com/edgekit/edgekit/fluidos"
)

// encodeK8Slice is the wire form of a slice. A slice without a
// partitionability policy can only be bought whole, which REAR words as
// minimums equal to the slice's quantities.
func encodeK8Slice(k *fluidos.K8Slice) *K8Slice {
	c := k.GetCharacteristics()
	w := &K8Slice{
		Characteristics: K8SliceCharacteristics{
			Architecture: c.GetArchitecture(),
			CPU:          FormatCPU(c.GetCpu()),
			Memory:       FormatBytes(c.GetMemory()),
			Pods:         FormatCount(c.GetPods()),
			GPU:          encodeGPU(c.GetGpu()),
		},
		Properties: encodeProperties(k.GetProperties()),
	}
	if c.GetStorage() != 0 {
		s := FormatBytes(c.GetStorage())
		w.Characteristics.Storage = &s
	}
	p := k.GetPartitionability()
	if p == nil {
		p = &fluidos.Partitionability{CpuMin: c.GetCpu(), MemoryMin: c.GetMemory(), PodsMin: c.GetPods()}
	}
	w.Policies.Partitionability = Partitionability{
		CPUMin:     FormatCPU(p.GetCpuMin()),
		MemoryMin:  FormatBytes(p.GetMemoryMin()),
		PodsMin:    FormatCount(p.GetPodsMin()),
		CPUStep:    FormatCPU(p.GetCpuStep()),
		MemoryStep: FormatBytes(p.GetMemoryStep()),
		PodsStep:   FormatCount(p.GetPodsStep()),
	}
	return w
}

func decodeK8Slice(w *K8Slice) (*fluidos.K8Slice, error) {
	wc := &w.Characteristics
	c := &fluidos.K8SliceCharacteristics{Architecture: wc.Architecture}
	var err error
	for _, q := range []struct {
		field string
		text  string
		parse func(string) (int64, error)
		into  *int64
	}{
		{"charateristics.cpu", wc.CPU, ParseOfferedCPU, &c.Cpu},
		{"charateristics.memory", wc.Memory, ParseOfferedBytes, &c.Memory},
		{"charateristics.pods", wc.Pods, ParseCount, &c.Pods},
	} {
		if *q.into, err = quantityField(q.field, q.text, q.parse); err != nil {
			return nil, err
		}
	}
	if wc.Storage != nil {
		if c.Storage, err = quantityField("charateristics.storage", *wc.Storage, ParseOfferedBytes); err != nil {
			return nil, err
		}
	}
	if c.Gpu, err = decodeGPU(wc.GPU); err != nil {
		return nil, within("charateristics", err)
	}
	props, err := decodeProperties(&w.Properties)
	if err != nil {
		return nil, within("properties", err)
	}
	wp := &w.Policies.Partitionability
	p := &fluidos.Partitionability{}
	for _, q := range []struct {
		field string
		text  string
		parse func(string) (int64, error)
		into  *int64
	}{
		{"cpuMin", wp.CPUMin, ParseCPU, &p.CpuMin},
		{"memoryMin", wp.MemoryMin, ParseBytes, &p.MemoryMin},
		{"podsMin", wp.PodsMin, ParseCount, &p.PodsMin},
		{"cpuStep", wp.CPUStep, ParseCPU, &p.CpuStep},
		{"memoryStep", wp.MemoryStep, ParseBytes, &p.MemoryStep},
		{"podsStep", wp.PodsStep, ParseCount, &p.PodsStep},
	} {
		if *q.into, err = quantityField("policies.partitionability."+q.field, orZero(q.text), q.parse); err != nil {
			return nil, err
		}
	}
	return &fluidos.K8Slice{Characteristics: c, Partitionability: p, Properties: props}, nil
}

// orZero reads an absent policy quantity as zero.
func orZero(s string) string {
	if s == "" {
		return "0"
	}
	return s
}

func encodeProperties(p *fluidos.K8SliceProperties) K8SliceProperties {
	w := K8SliceProperties{
		Latency:               int(p.GetLatencyMs()),
		SecurityStandards:     p.GetSecurityStandards(),
		NetworkAuthorizations: encodeIntents(p.GetNetworkIntents()),
	}
	if cf := p.GetCarbonFootprint(); cf != nil {
		w.CarbonFootprint = &CarbonFootprint{Embodied: cf.GetEmbodied(), Operational: cf.GetOperational()}
	}
	if len(p.GetAdditionalProperties()) > 0 {
		w.AdditionalProperties = make(map[string]json.RawMessage, len(p.GetAdditionalProperties()))
		for k, v := range p.GetAdditionalProperties() {
			w.AdditionalProperties[k] = json.RawMessage(v)
		}
	}
	return w
}

func decodeProperties(w *K8SliceProperties) (*fluidos.K8SliceProperties, error) {
	if w.Latency < 0 || w.Latency > math.MaxUint32 {
		return nil, fieldErr("latency", "%d is not a latency in milliseconds", w.Latency)
	}
	p := &fluidos.K8SliceProperties{LatencyMs: uint32(w.Latency), SecurityStandards: w.SecurityStandards}
	if cf := w.CarbonFootprint; cf != nil {
		p.CarbonFootprint = &fluidos.CarbonFootprint{Embodied: cf.Embodied, Operational: cf.Operational}
	}
	intents, err := decodeIntents(w.NetworkAuthorizations)
	if err != nil {
		return nil, within("networkAuthorizations", err)
	}
	p.NetworkIntents = intents
	if len(w.AdditionalProperties) > 0 {
		p.AdditionalProperties = make(map[string]string, len(w.AdditionalProperties))
		for k, v := range w.AdditionalProperties {
			p.AdditionalProperties[k] = string(v)
		}
	}
	return p, nil
}

func encodeIntents(n *fluidos.NetworkIntents) *NetworkAuthorizations {
	if n == nil {
		return nil
	}
	return &NetworkAuthorizations{
		DeniedCommunications:    encodeIntentList(n.GetDeniedCommunications()),
		MandatoryCommunications: encodeIntentList(n.GetMandatoryCommunications()),
	}
}

func encodeIntentList(in []*fluidos.NetworkIntent) []NetworkIntent {
	if in == nil {
		return nil
	}
	out := make([]NetworkIntent, len(in))
	for i, x := range in {
		out[i] = NetworkIntent{
			Name:            x.GetName(),
			Source:          encodeEndpoint(x.GetSource()),
			Destination:     encodeEndpoint(x.GetDestination()),
			DestinationPort: x.GetDestinationPort(),
			ProtocolType:    x.GetProtocolType(),
		}
	}
	return out
}

func encodeEndpoint(e *fluidos.NetworkEndpoint) SourceDestination {
	w := SourceDestination{IsHotCluster: e.GetIsHotCluster()}
	switch s := e.GetResourceSelector().GetSelector().(type) {
	case *fluidos.NetworkResourceSelector_Cidr:
		b, _ := json.Marshal(s.Cidr) // a string always marshals
		w.ResourceSelector = ResourceSelector{TypeIdentifier: CIDRSelectorType, Selector: b}
	case *fluidos.NetworkResourceSelector_PodNamespace:
		b, _ := json.Marshal(PodNamespaceSelector{Pod: labels(s.PodNamespace.GetPod()), Namespace: labels(s.PodNamespace.GetNamespace())})
		w.ResourceSelector = ResourceSelector{TypeIdentifier: PodNamespaceSelectorType, Selector: b}
	}
	return w
}

func labels(in []*fluidos.Label) []KeyValue {
	if in == nil {
		return nil
	}
	out := make([]KeyValue, len(in))
	for i, l := range in {
		out[i] = KeyValue{Key: l.GetKey(), Value: l.GetValue()}
	}
	return out
}

func decodeIntents(w *NetworkAuthorizations) (*fluidos.NetworkIntents, error) {
	if w == nil {
		return nil, nil
	}
	denied, err := decodeIntentList("deniedCommunications", w.DeniedCommunications)
	if err != nil {
		return nil, err
	}
	mandatory, err := decodeIntentList("mandatoryCommunications", w.MandatoryCommunications)
	if err != nil {
		return nil, err
	}
	return &fluidos.NetworkIntents{DeniedCommunications: denied, MandatoryCommunications: mandatory}, nil
}

func decodeIntentList(field string, in []NetworkIntent) ([]*fluidos.NetworkIntent, error) {
	if in == nil {
		return nil, nil
	}
	out := make([]*fluidos.NetworkIntent, len(in))
	for i, x := range in {
		src, err := decodeEndpoint(&x.Source)
		if err != nil {
			return nil, within(fmt.Sprintf("%s[%d].source", field, i), err)
		}
		dst, err := decodeEndpoint(&x.Destination)
		if err != nil {
			return nil, within(fmt.Sprintf("%s[%d].destination", field, i), err)
		}
		out[i] = &fluidos.NetworkIntent{Name: x.Name, Source: src, Destination: dst, DestinationPort: x.DestinationPort, ProtocolType: x.ProtocolType}
	}
	return out, nil
}

// decodeEndpoint decodes one end of an intent. A selector whose JSON is
// an object is a PodNamespaceSelector whatever its type identifier says
// (the reference node labels those CIDRSelector too).
func decodeEndpoint(w *SourceDestination) (*fluidos.NetworkEndpoint, error) {
	e := &fluidos.NetworkEndpoint{IsHotCluster: w.IsHotCluster}
	rs := &w.ResourceSelector
	sel := bytes.TrimSpace(rs.Selector)
	switch {
	case rs.TypeIdentifier == "" && (len(sel) == 0 || string(sel) == "null"):
		return e, nil
	case rs.TypeIdentifier != CIDRSelectorType && rs.TypeIdentifier != PodNamespaceSelectorType:
		return nil, fieldErr("resourceSelectors.typeIdentifier", "unknown selector type %q (want %s or %s)", rs.TypeIdentifier, CIDRSelectorType, PodNamespaceSelectorType)
	case len(sel) > 0 && sel[0] == '{':
		var pn PodNamespaceSelector
		if err := json.Unmarshal(sel, &pn); err != nil {
			return nil, fieldErr("resourceSelectors.selector", "%v", err)
		}
		e.ResourceSelector = &fluidos.NetworkResourceSelector{Selector: &fluidos.NetworkResourceSelector_PodNamespace{
			PodNamespace: &fluidos.PodNamespaceSelector{Pod: typedLabels(pn.Pod), Namespace: typedLabels(pn.Namespace)},
		}}
	case rs.TypeIdentifier == CIDRSelectorType:
		var cidr string
		if err := json.Unmarshal(sel, &cidr); err != nil {
			return nil, fieldErr("resourceSelectors.selector", "a CIDRSelector is a string: %v", err)
		}
		e.ResourceSelector = &fluidos.NetworkResourceSelector{Selector: &fluidos.NetworkResourceSelector_Cidr{Cidr: cidr}}
	default:
		return nil, fieldErr("resourceSelectors.selector", "a PodNamespaceSelector is an object")
	}
	return e, nil
}

func typedLabels(in []KeyValue) []*fluidos.Label {
	if in == nil {
		return nil
	}
	out := make([]*fluidos.Label, len(in))
	for i, kv := range in {
		out[i] = &fluidos.Label{Key: kv.Key, Value: kv.Value}
	}
	return out
}
