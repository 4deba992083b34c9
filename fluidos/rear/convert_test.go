package rear_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/google/go-cmp/cmp"

	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/fluidos/rear"
)

func node(id string) *fluidos.NodeIdentity {
	return &fluidos.NodeIdentity{NodeId: id, Ip: "127.0.0.1:7000", Domain: "example.org",
		AdditionalInformation: &fluidos.NodeAdditionalInformation{LiqoId: id + "-cluster"}}
}

// typedFlavors are flavors of every type with every field REAR carries set.
func typedFlavors() []*fluidos.Flavor {
	base := func(id string) *fluidos.Flavor {
		return &fluidos.Flavor{
			Id: id, Owner: node("p1"), ProviderId: "p1", Availability: true,
			Price:               &fluidos.Price{Amount: "1.25", Currency: "EUR", Period: "hourly"},
			Location:            &fluidos.Location{Latitude: -33.86, Longitude: 151.2, Country: "AU", City: "Sydney", AdditionalNotes: "dc 2"},
			NetworkPropertyType: "vpn",
			CreatedAt:           timestamppb.New(time.Date(2025, 1, 2, 3, 4, 5, 600, time.UTC)),
		}
	}
	k := base("k")
	k.Spec = &fluidos.Flavor_K8Slice{K8Slice: &fluidos.K8Slice{
		Characteristics: &fluidos.K8SliceCharacteristics{Architecture: "arm64", Cpu: 3500, Memory: 6 << 30, Pods: 55, Storage: 20e9,
			Gpu: &fluidos.GPU{Model: "m", Cores: 4, Memory: 1 << 30}},
		Partitionability: &fluidos.Partitionability{CpuMin: 500, MemoryMin: 1 << 30, PodsMin: 5, CpuStep: 250, MemoryStep: 256 << 20, PodsStep: 1},
		Properties: &fluidos.K8SliceProperties{LatencyMs: 7, SecurityStandards: []string{"a"},
			CarbonFootprint:      &fluidos.CarbonFootprint{Embodied: 3, Operational: []int64{1, 2}},
			AdditionalProperties: map[string]string{"x": `{"y":[1,true,null]}`},
			NetworkIntents: &fluidos.NetworkIntents{DeniedCommunications: []*fluidos.NetworkIntent{{
				Name:            "n",
				Source:          &fluidos.NetworkEndpoint{IsHotCluster: true, ResourceSelector: &fluidos.NetworkResourceSelector{Selector: &fluidos.NetworkResourceSelector_Cidr{Cidr: "10.0.0.0/8"}}},
				Destination:     &fluidos.NetworkEndpoint{ResourceSelector: &fluidos.NetworkResourceSelector{Selector: &fluidos.NetworkResourceSelector_PodNamespace{PodNamespace: &fluidos.PodNamespaceSelector{Pod: []*fluidos.Label{{Key: "a", Value: "b"}}}}}},
				DestinationPort: "443", ProtocolType: "TCP",
			}}},
		},
	}}
	s := base("s")
	s.Spec = &fluidos.Flavor_Service{Service: &fluidos.Service{Name: "kv", Description: "d", Category: "database", Tags: []string{"kv"}, MaxInstances: 3, SoldInstances: 1,
		HostingPolicies:       []fluidos.HostingPolicy{fluidos.HostingPolicy_HOSTING_POLICY_PROVIDER, fluidos.HostingPolicy_HOSTING_POLICY_SHARED},
		ConfigurationTemplate: `{"type":"object","properties":{"a":{"type":"integer"}}}`,
		ConfigurationSchema:   &fluidos.ConfigurationSchema{Parameters: []*fluidos.ConfigParameter{{Name: "a", Type: fluidos.ParameterType_PARAMETER_TYPE_INT}}}}}
	v := base("v")
	v.Spec = &fluidos.Flavor_Vm{Vm: &fluidos.VM{Cpu: 2000, Memory: 4 << 30, Storage: 50 << 30, Architecture: "amd64", OsImage: "ubuntu", Hypervisor: "kvm", Gpu: &fluidos.GPU{Model: "g", Cores: 1, Memory: 2 << 30}}}
	sn := base("sn")
	sn.Spec = &fluidos.Flavor_Sensor{Sensor: &fluidos.Sensor{SensorType: "temperature", SamplingRateHz: 2.5, Accuracy: 0.1, Unit: "celsius", SourceEndpoint: "mqtt://h/t",
		Location: &fluidos.Location{Latitude: 1, Longitude: 2, City: "c"}}}
	return []*fluidos.Flavor{k, s, v, sn}
}

func TestTypedFlavorsRoundTrip(t *testing.T) {
	t.Parallel()
	for _, f := range typedFlavors() {
		w, err := rear.EncodeFlavor(f)
		if err != nil {
			t.Fatalf("%s: %v", f.GetId(), err)
		}
		b, err := json.Marshal(w)
		if err != nil {
			t.Fatal(err)
		}
		var back rear.Flavor
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		got, err := rear.DecodeFlavor(&back)
		if err != nil {
			t.Fatalf("%s: %v\n%s", f.GetId(), err, b)
		}
		if diff := cmp.Diff(f, got, protocmp.Transform()); diff != "" {
			t.Errorf("%s: round trip changed it (-typed +back):\n%s", f.GetId(), diff)
		}
	}
}

func TestServiceTemplateDerivedFromSchema(t *testing.T) {
	t.Parallel()
	f := &fluidos.Flavor{Id: "s", Spec: &fluidos.Flavor_Service{Service: &fluidos.Service{Name: "kv", ConfigurationSchema: kvSchema()}}}
	w, err := rear.EncodeFlavor(f)
	if err != nil {
		t.Fatal(err)
	}
	var data rear.ServiceFlavor
	if err := json.Unmarshal(w.Type.Data, &data); err != nil {
		t.Fatal(err)
	}
	tmpl, err := rear.CompileTemplate(data.ConfigurationTemplate)
	if err != nil {
		t.Fatal(err)
	}
	if err := tmpl.Validate([]byte(`{"port":1}`)); err == nil {
		t.Error("the derived template accepted a configuration the schema refuses")
	}
	// A ServiceConfiguration given as parameters is typed by the flavor's
	// schema on the wire.
	cfg := &fluidos.Configuration{Spec: &fluidos.Configuration_Service{Service: &fluidos.ServiceConfiguration{
		HostingPolicy: fluidos.HostingPolicy_HOSTING_POLICY_PROVIDER,
		Parameters:    map[string]string{"password": "abcdefgh1", "port": "7000"}}}}
	wc, err := rear.EncodeConfiguration(cfg, f)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"hostingPolicy":"Provider","configurationData":{"password":"abcdefgh1","port":7000}}`; string(wc.Data) != want {
		t.Errorf("configuration data %s, want %s", wc.Data, want)
	}
	back, err := rear.DecodeConfiguration(wc)
	if err != nil {
		t.Fatal(err)
	}
	sc := back.GetService()
	if sc.GetParameters()["port"] != "7000" || sc.GetHostingPolicy() != fluidos.HostingPolicy_HOSTING_POLICY_PROVIDER {
		t.Errorf("decoded %v", sc)
	}
	if err := tmpl.Validate([]byte(sc.GetConfigurationData())); err != nil {
		t.Errorf("the decoded configuration does not satisfy the template: %v", err)
	}
}

func TestTypedTradeObjectsRoundTrip(t *testing.T) {
	t.Parallel()
	k := typedFlavors()[0]
	kcfg := &fluidos.Configuration{Spec: &fluidos.Configuration_K8Slice{K8Slice: &fluidos.K8SliceConfiguration{Cpu: 1000, Memory: 2 << 30, Pods: 10, Storage: 1 << 30, Gpu: &fluidos.GPU{Model: "m", Cores: 1, Memory: 1 << 30}}}}
	exp := timestamppb.New(time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC))
	tx := &fluidos.Transaction{Id: "t1", FlavorId: "k", Buyer: node("b1"), Configuration: kcfg, ExpirationTime: exp, BuyerClusterId: "b1-cluster"}
	w, err := rear.EncodeTransaction(tx, k)
	if err != nil {
		t.Fatal(err)
	}
	back, err := rear.DecodeTransaction(w)
	if err != nil || !proto.Equal(back, tx) {
		t.Errorf("transaction round trip: %v, %v", back, err)
	}
	rr := &fluidos.ReserveRequest{FlavorId: "k", Buyer: node("b1"), Configuration: kcfg}
	wr, err := rear.EncodeReserveRequest(rr, k)
	if err != nil {
		t.Fatal(err)
	}
	if back, err := rear.DecodeReserveRequest(wr); err != nil || !proto.Equal(back, rr) {
		t.Errorf("reserve request round trip: %v, %v", back, err)
	}
	pr := &fluidos.PurchaseRequest{BuyerCredentials: &fluidos.PeeringCredentials{ClusterId: "c", Kubeconfig: "k"},
		IngressTelemetryEndpoint: &fluidos.TelemetryEndpoint{Endpoint: "e", Intents: []string{"i"}}}
	if back := rear.DecodePurchaseRequest(rear.EncodePurchaseRequest(pr)); !proto.Equal(back, pr) {
		t.Errorf("purchase request round trip: %v", back)
	}
	c := &fluidos.Contract{Id: "c1", TransactionId: "t1", Flavor: k, Buyer: node("b1"), Seller: node("p1"), Configuration: kcfg,
		PeeringTargetCredentials: &fluidos.PeeringTargetCredentials{ClusterId: "x", ClusterName: "n", Endpoint: "https://e", Kubeconfig: "kc", Token: "tok"},
		ExpirationTime:           exp, BuyerClusterId: "b1-cluster", ExtraInformation: map[string]string{"a": "b"}, NetworkRequestsText: "allow all",
		IngressTelemetryEndpoint: &fluidos.TelemetryEndpoint{Endpoint: "e"}}
	wc, err := rear.EncodeContract(c)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(wc)
	var w2 rear.Contract
	if err := json.Unmarshal(b, &w2); err != nil {
		t.Fatal(err)
	}
	if back, err := rear.DecodeContract(&w2); err != nil || !proto.Equal(back, c) {
		t.Errorf("contract round trip: %v\n%v", err, cmp.Diff(c, back, protocmp.Transform()))
	}
}

func TestDecodeErrorsNameTheField(t *testing.T) {
	t.Parallel()
	good, err := rear.EncodeFlavor(typedFlavors()[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		edit  func(m map[string]any)
		field string
	}{
		{func(m map[string]any) { data(m)["charateristics"].(map[string]any)["cpu"] = "lots" }, "type.data.charateristics.cpu"},
		{func(m map[string]any) { data(m)["charateristics"].(map[string]any)["memory"] = "-1Gi" }, "type.data.charateristics.memory"},
		{func(m map[string]any) {
			data(m)["charateristics"].(map[string]any)["gpu"].(map[string]any)["cores"] = "x"
		}, "gpu.cores"},
		{func(m map[string]any) {
			data(m)["policies"].(map[string]any)["partitionability"].(map[string]any)["podsStep"] = "?"
		}, "policies.partitionability.podsStep"},
		{func(m map[string]any) { data(m)["properties"].(map[string]any)["latency"] = -3 }, "properties.latency"},
		{func(m map[string]any) { m["type"].(map[string]any)["name"] = "spaceship" }, "type.name"},
		{func(m map[string]any) { m["type"].(map[string]any)["data"] = "not an object" }, "type.data"},
		{func(m map[string]any) { delete(m["type"].(map[string]any), "data") }, "type.data"},
		{func(m map[string]any) { m["location"].(map[string]any)["latitude"] = "north" }, "location.latitude"},
		{func(m map[string]any) { m["location"].(map[string]any)["longitude"] = "200" }, "location.longitude"},
		{func(m map[string]any) {
			na := data(m)["properties"].(map[string]any)["networkAuthorizations"].(map[string]any)
			na["deniedCommunications"].([]any)[0].(map[string]any)["source"].(map[string]any)["resourceSelectors"].(map[string]any)["typeIdentifier"] = "Magic"
		}, "deniedCommunications[0].source.resourceSelectors.typeIdentifier"},
	} {
		var m map[string]any
		b, _ := json.Marshal(good)
		_ = json.Unmarshal(b, &m)
		c.edit(m)
		b, _ = json.Marshal(m)
		var w rear.Flavor
		if err := json.Unmarshal(b, &w); err != nil {
			t.Fatal(err)
		}
		_, err := rear.DecodeFlavor(&w)
		var fe *rear.FieldError
		if !errors.Is(err, rear.ErrInvalid) || !errors.As(err, &fe) || !strings.Contains(fe.Field, c.field) {
			t.Errorf("DecodeFlavor: %v, want ErrInvalid naming %s", err, c.field)
		}
	}
	svc := `{"flavorID":"s","type":{"name":"service","data":{"hostingPolicies":["Everywhere"]}}}`
	var w rear.Flavor
	_ = json.Unmarshal([]byte(svc), &w)
	if _, err := rear.DecodeFlavor(&w); !errors.Is(err, rear.ErrInvalid) || !strings.Contains(err.Error(), "hostingPolicies[0]") {
		t.Errorf("unknown hosting policy: %v", err)
	}
	if _, err := rear.EncodeFlavor(&fluidos.Flavor{Id: "none"}); !errors.Is(err, rear.ErrInvalid) {
		t.Errorf("a flavor without type encoded: %v", err)
	}
	if _, err := rear.DecodeConfiguration(&rear.Configuration{Type: "k8slice", Data: json.RawMessage(`{"cpu":"1","memory":"x","pods":"1"}`)}); !errors.Is(err, rear.ErrInvalid) || !strings.Contains(err.Error(), "data.memory") {
		t.Errorf("bad configuration memory: %v", err)
	}
	if _, err := rear.DecodeTransaction(&rear.Transaction{ExpirationTime: "tomorrow"}); !errors.Is(err, rear.ErrInvalid) || !strings.Contains(err.Error(), "expirationTime") {
		t.Errorf("bad expiration time: %v", err)
	}
}

func data(m map[string]any) map[string]any {
	return m["type"].(map[string]any)["data"].(map[string]any)
}
