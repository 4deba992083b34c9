package rear

import (
	"encoding/json"
	"time"
)

// Flavor type names on the wire (FlavorType.Name, Configuration.Type).
const (
	TypeK8Slice = "k8slice"
	TypeService = "service"
	TypeVM      = "vm"
	TypeSensor  = "sensor"
)

// Flavor is a flavor on the wire.
type Flavor struct {
	FlavorID            string       `json:"flavorID"`
	ProviderID          string       `json:"providerID"`
	Type                FlavorType   `json:"type"`
	NetworkPropertyType string       `json:"networkPropertyType,omitempty"`
	Timestamp           time.Time    `json:"timestamp"`
	Location            *Location    `json:"location,omitempty"`
	Price               Price        `json:"price"`
	Owner               NodeIdentity `json:"owner"`
	Availability        bool         `json:"availability"`
}

// FlavorType is the type of a flavor and its type's object (K8Slice,
// ServiceFlavor, VM or Sensor) as JSON.
type FlavorType struct {
	Name string          `json:"name"`
	Data json.RawMessage `json:"data"`
}

// Location is where a flavor is. Country travels under "altitude", as the
// reference node sends it; latitude and longitude are decimal text.
type Location struct {
	Latitude        string `json:"latitude,omitempty"`
	Longitude       string `json:"longitude,omitempty"`
	Country         string `json:"altitude,omitempty"`
	City            string `json:"city,omitempty"`
	AdditionalNotes string `json:"additionalNotes,omitempty"`
}

// Price is what a flavor costs.
type Price struct {
	Amount   string `json:"amount"`
	Currency string `json:"currency"`
	Period   string `json:"period"`
}

// NodeIdentity names a node; IP is the host:port of its REAR endpoint.
type NodeIdentity struct {
	NodeID                string          `json:"ID"`
	IP                    string          `json:"IP"`
	Domain                string          `json:"domain"`
	AdditionalInformation *NodeAdditional `json:"additionalInformation,omitempty"`
}

// NodeAdditional is what a node adds about itself for peering.
type NodeAdditional struct {
	LiqoID     string `json:"liqoID,omitempty"`
	Kubeconfig string `json:"kubeconfig,omitempty"`
}

// GPU describes graphics processors; cores and memory are quantities.
type GPU struct {
	Model  string `json:"model"`
	Cores  string `json:"cores"`
	Memory string `json:"memory"`
}

// K8Slice is the data of a k8slice flavor.
type K8Slice struct {
	Characteristics K8SliceCharacteristics `json:"charateristics"`
	Properties      K8SliceProperties      `json:"properties"`
	Policies        K8SlicePolicies        `json:"policies"`
}

// K8SliceCharacteristics are the resources of a slice, as quantities.
type K8SliceCharacteristics struct {
	Architecture string  `json:"architecture"`
	CPU          string  `json:"cpu"`
	Memory       string  `json:"memory"`
	Pods         string  `json:"pods"`
	GPU          *GPU    `json:"gpu,omitempty"`
	Storage      *string `json:"storage,omitempty"`
}

// K8SliceProperties are the qualities of a slice.
type K8SliceProperties struct {
	Latency               int                        `json:"latency,omitempty"`
	SecurityStandards     []string                   `json:"securityStandards,omitempty"`
	CarbonFootprint       *CarbonFootprint           `json:"carbonFootprint,omitempty"`
	NetworkAuthorizations *NetworkAuthorizations     `json:"networkAuthorizations,omitempty"`
	AdditionalProperties  map[string]json.RawMessage `json:"additionalProperties,omitempty"`
}

// CarbonFootprint is the carbon cost of a slice.
type CarbonFootprint struct {
	Embodied    int64   `json:"embodied"`
	Operational []int64 `json:"operational"`
}

// NetworkAuthorizations are the communications a slice must not and must
// have.
type NetworkAuthorizations struct {
	DeniedCommunications    []NetworkIntent `json:"deniedCommunications"`
	MandatoryCommunications []NetworkIntent `json:"mandatoryCommunications"`
}

// NetworkIntent is one communication.
type NetworkIntent struct {
	Name            string            `json:"name"`
	Source          SourceDestination `json:"source"`
	Destination     SourceDestination `json:"destination"`
	DestinationPort string            `json:"destinationPort"`
	ProtocolType    string            `json:"protocolType"`
}

// SourceDestination is one end of a NetworkIntent.
type SourceDestination struct {
	IsHotCluster     bool             `json:"isHotCluster"`
	ResourceSelector ResourceSelector `json:"resourceSelectors"`
}

// Resource selector type identifiers.
const (
	CIDRSelectorType         = "CIDRSelector"
	PodNamespaceSelectorType = "PodNamespaceSelector"
)

// ResourceSelector is a typed selector: a CIDR as a JSON string, or a
// PodNamespaceSelector object.
type ResourceSelector struct {
	TypeIdentifier string          `json:"typeIdentifier"`
	Selector       json.RawMessage `json:"selector"`
}

// PodNamespaceSelector selects pods and namespaces by labels.
type PodNamespaceSelector struct {
	Pod       []KeyValue `json:"pod"`
	Namespace []KeyValue `json:"namespace"`
}

// KeyValue is a label.
type KeyValue struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// K8SlicePolicies hold the partitionability of a slice.
type K8SlicePolicies struct {
	Partitionability Partitionability `json:"partitionability"`
}

// Partitionability is how a slice may be split, as quantities.
type Partitionability struct {
	CPUMin     string `json:"cpuMin"`
	MemoryMin  string `json:"memoryMin"`
	PodsMin    string `json:"podsMin"`
	CPUStep    string `json:"cpuStep"`
	MemoryStep string `json:"memoryStep"`
	PodsStep   string `json:"podsStep"`
}

// Hosting policies on the wire.
const (
	HostingProvider = "Provider"
	HostingConsumer = "Consumer"
	HostingShared   = "Shared"
)

// ServiceFlavor is the data of a service flavor; ConfigurationTemplate is
// a JSON Schema. MaxInstances and SoldInstances are edgekit's additions
// (a reference node ignores them).
type ServiceFlavor struct {
	Name                  string          `json:"name"`
	Description           string          `json:"description"`
	Category              string          `json:"category"`
	Tags                  []string        `json:"tags"`
	HostingPolicies       []string        `json:"hostingPolicies"`
	ConfigurationTemplate json.RawMessage `json:"configurationTemplate"`
	MaxInstances          uint32          `json:"maxInstances,omitempty"`
	SoldInstances         uint32          `json:"soldInstances,omitempty"`
}

// VM is the data of a vm flavor (the reference node defines none; this is
// edgekit's).
type VM struct {
	Architecture string `json:"architecture"`
	CPU          string `json:"cpu"`
	Memory       string `json:"memory"`
	Storage      string `json:"storage"`
	OSImage      string `json:"osImage,omitempty"`
	GPU          *GPU   `json:"gpu,omitempty"`
	Hypervisor   string `json:"hypervisor,omitempty"`
}

// Sensor is the data of a sensor flavor (the reference node defines none;
// this is edgekit's).
type Sensor struct {
	SensorType     string    `json:"sensorType"`
	SamplingRateHz float64   `json:"samplingRateHz"`
	Accuracy       float64   `json:"accuracy"`
	Unit           string    `json:"unit"`
	SourceEndpoint string    `json:"sourceEndpoint,omitempty"`
	Location       *Location `json:"location,omitempty"`
}

// Configuration is what a buyer asks of a flavor: the type's configuration
// object as JSON.
type Configuration struct {
	Type string          `json:"type"`
	Data json.RawMessage `json:"data"`
}

// K8SliceConfiguration is the partition a buyer asks of a slice.
type K8SliceConfiguration struct {
	CPU     string  `json:"cpu"`
	Memory  string  `json:"memory"`
	Pods    string  `json:"pods"`
	GPU     *GPU    `json:"gpu,omitempty"`
	Storage *string `json:"storage,omitempty"`
}

// ServiceConfiguration is the configuration of a service: a JSON value
// the flavor's template must accept.
type ServiceConfiguration struct {
	HostingPolicy     *string         `json:"hostingPolicy,omitempty"`
	ConfigurationData json.RawMessage `json:"configurationData"`
}

// VMConfiguration is what a buyer asks of a VM (edgekit's).
type VMConfiguration struct {
	CPU     string `json:"cpu"`
	Memory  string `json:"memory"`
	Storage string `json:"storage"`
	OSImage string `json:"osImage,omitempty"`
}

// SensorConfiguration is what a buyer asks of a sensor (edgekit's).
type SensorConfiguration struct {
	SamplingRateHz float64 `json:"samplingRateHz"`
}

// ReserveRequest asks a provider to hold a flavor.
type ReserveRequest struct {
	FlavorID      string         `json:"flavorID"`
	Buyer         NodeIdentity   `json:"buyerID"`
	Configuration *Configuration `json:"configuration,omitempty"`
}

// Transaction is a provider's answer to a reservation.
type Transaction struct {
	TransactionID  string         `json:"transactionID"`
	FlavorID       string         `json:"flavorID"`
	Configuration  *Configuration `json:"configuration,omitempty"`
	Buyer          NodeIdentity   `json:"buyer"`
	ClusterID      string         `json:"clusterID"`
	ExpirationTime string         `json:"expirationTime"`
}

// PurchaseRequest asks a provider to sell what a transaction holds.
type PurchaseRequest struct {
	LiqoCredentials          *LiqoCredentials `json:"liqoCredentials,omitempty"`
	IngressTelemetryEndpoint *TelemetryServer `json:"ingressTelemetryEndpoint,omitempty"`
}

// LiqoCredentials are peering credentials. ClusterName, Endpoint and Token
// are edgekit's additions (a reference node ignores them).
type LiqoCredentials struct {
	ClusterID   string `json:"clusterID"`
	Kubeconfig  string `json:"kubeconfig"`
	ClusterName string `json:"clusterName,omitempty"`
	Endpoint    string `json:"endpoint,omitempty"`
	Token       string `json:"token,omitempty"`
}

// TelemetryServer is where telemetry goes.
type TelemetryServer struct {
	Endpoint string   `json:"endpoint"`
	Intents  []string `json:"intents"`
}

// Contract is a provider's answer to a purchase.
type Contract struct {
	ContractID               string            `json:"contractID"`
	TransactionID            string            `json:"transactionID"`
	Flavor                   Flavor            `json:"flavor"`
	Buyer                    NodeIdentity      `json:"buyerID"`
	BuyerClusterID           string            `json:"buyerClusterID"`
	Seller                   NodeIdentity      `json:"seller"`
	PeeringTargetCredentials LiqoCredentials   `json:"peeringTargetCredentials"`
	ExpirationTime           string            `json:"expirationTime,omitempty"`
	ExtraInformation         map[string]string `json:"extraInformation,omitempty"`
	Configuration            *Configuration    `json:"configuration,omitempty"`
	NetworkRequests          string            `json:"networkAuthorizations,omitempty"`
	IngressTelemetryEndpoint *TelemetryServer  `json:"ingressTelemetryEndpoint,omitempty"`
}
