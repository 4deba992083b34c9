package node

import (
	"errors"
	"fmt"
	"github.com/edgekit/edgekit/atrest"
	"log/slog"
	"net"
	"time"

	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/hosts/fluidos/allocator"
	"github.com/edgekit/edgekit/hosts/fluidos/consumer"
	"github.com/edgekit/edgekit/hosts/fluidos/provider"
	"github.com/edgekit/edgekit/internal/devtls"
)

// Defaults of Options.
const (
	DefaultStopTimeout = 10 * time.Second
	DefaultAdminName   = "admin"
)

// DefaultPolicy is how the K8Slice flavor is split when Options.Policy is
// nil: partitions of at least 500m CPU, 512Mi and 1 pod, in steps of 250m
// CPU, 256Mi and 1 pod.
func DefaultPolicy() *fluidos.Partitionability {
	return &fluidos.Partitionability{CpuMin: 500, MemoryMin: 512 << 20, PodsMin: 1, CpuStep: 250, MemoryStep: 256 << 20, PodsStep: 1}
}

// DefaultPrice is the K8Slice flavor's price when Options.Price is nil.
func DefaultPrice() *fluidos.Price {
	return &fluidos.Price{Amount: "1.00", Currency: "EUR", Period: "hourly"}
}

// Options configure Run: a whole FLUIDOS node.
type Options struct {
	// NodeID names the node: to its peers, in its certificate's Common
	// Name, and as the region of its objects in etcd. Required: 1 to 63 of
	// A-Z a-z 0-9 . - _ (devtls.ValidName).
	NodeID string
	// Domain of the node.
	Domain string
	// DataDir holds the embedded etcd's data, and is the disk whose space
	// the K8Slice flavor sells. Required.
	DataDir string
	// EtcdEndpoints selects an external etcd cluster instead of the
	// embedded one; EtcdCAFile, EtcdCertFile and EtcdKeyFile are its client
	// TLS files.
	EtcdEndpoints                         []string
	EtcdCAFile, EtcdCertFile, EtcdKeyFile string
	// EncryptionKeyFile is the key file of the keys that encrypt the
	// node's stored secrets (credentials, passwords, kubeconfigs); ""
	// uses DataDir/encryption.keys, created (0600) on the first start.
	EncryptionKeyFile string
	// KeyProvider, when set, wraps the data keys instead of a key file:
	// an external KMS.
	KeyProvider atrest.KeyProvider
	// RearListen is the REAR endpoint's address (port 0 picks a free one).
	RearListen string
	// Advertise is the host:port peers reach the REAR endpoint at; default
	// the address RearListen got.
	Advertise string
	// APIListen is the gRPC API's address; "" serves none.
	APIListen string
	// MetricsListen serves /metrics; "" serves none.
	MetricsListen string
	// TLS is the node's certificate and the authorities it trusts, for
	// REAR (mutual TLS) and the API. Its Common Name must be NodeID.
	TLS *devtls.Bundle
	// DevTLSDir, when TLS is nil, opens (or creates) a development
	// authority in that directory and issues the node a certificate named
	// NodeID: nodes pointed at the same directory trust each other.
	DevTLSDir string
	// DevTLSValidity is the validity of the node's certificate from
	// DevTLSDir, renewed at two thirds of its life;
	// devtls.DefaultLeafValidity when zero.
	DevTLSValidity time.Duration
	// InsecureREAR serves REAR over plain HTTP and talks to peers over
	// plain HTTP (to trade with reference nodes, which have no TLS);
	// buyers are then whoever the requests name. The API is served
	// without TLS too, on loopback only.
	InsecureREAR bool
	// APIClients are the certificate names allowed to call the API;
	// default DefaultAdminName and NodeID.
	APIClients []string
	// Peers are the REAR endpoints (host:port) of the static peers.
	Peers []string
	// PeerTTL keeps learned peers (consumer.DefaultPeerTTL when 0);
	// PeerTimeout bounds each peer's answer to a discovery.
	PeerTTL, PeerTimeout time.Duration
	// ReservationTTL is how long this node holds what a buyer reserves.
	ReservationTTL time.Duration
	// ContractLease is how long a contract this node sold lasts after each
	// renewal by its buyer (provider.DefaultContractLease when 0).
	ContractLease time.Duration
	// ContractTerm is how long a contract this node sold lasts after its
	// purchase while its buyer has not renewed it, its expirationTime
	// (provider.DefaultContractTerm when 0): a reference buyer never
	// renews.
	ContractTerm time.Duration
	// Default phase timeouts of solvers.
	DiscoveryTimeout, ReservationTimeout, PurchaseTimeout, AllocationTimeout time.Duration
	// PollInterval and RenewInterval pace how this node follows what it
	// bought (consumer.DefaultPollInterval, consumer.DefaultRenewInterval
	// when 0).
	PollInterval, RenewInterval time.Duration
	// Platform provisions what the node sells; nil builds the platform
	// registered as PlatformType (default "local": real processes) over
	// PlatformDir (default DataDir/platform) with PlatformProperties and
	// PlatformAccessVars (secrets such as a Kubernetes platform's
	// KUBECONFIG, never logged), and closes it when the node stops.
	Platform           executor.Platform
	PlatformType       string
	PlatformDir        string
	PlatformProperties map[string]string
	PlatformAccessVars map[string]string
	// Images are the executables buyers and blueprints may run, by name
	// (allocator.Config.Images).
	Images map[string]string
	// HealthInterval, OperationTimeout and MaxRestarts pace the
	// provisioning (allocator defaults when 0).
	HealthInterval, OperationTimeout time.Duration
	MaxRestarts                      int
	// Flavors are published beside the K8Slice and Service flavors (VM
	// and Sensor flavors, which this node does not sell).
	Flavors []*fluidos.Flavor
	// Capacity is what the K8Slice flavor sells; default this host's
	// (provider.LocalCapacity of DataDir, with Pods pods).
	Capacity provider.CapacitySource
	// Pods the K8Slice flavor offers with the default capacity; default
	// provider.DefaultPods.
	Pods int64
	// Policy splits the K8Slice flavor; default DefaultPolicy.
	Policy *fluidos.Partitionability
	// Price of the K8Slice flavor; default DefaultPrice.
	Price *fluidos.Price
	// Location of the node's flavors.
	Location *fluidos.Location
	// Blueprints are created at start when no blueprint has their id.
	Blueprints []*fluidos.ServiceBlueprint
	// Contracts is told of each contract sold.
	Contracts provider.ContractHandler
	// Logger receives logs; nil discards.
	Logger *slog.Logger
	// StopTimeout bounds the graceful stop of the servers; default
	// DefaultStopTimeout.
	StopTimeout time.Duration
	// Ready, when set, is called once every endpoint listens.
	Ready func(r *Running)
}

func (o *Options) check() error {
	var errs []error
	if err := devtls.ValidName(o.NodeID); err != nil {
		errs = append(errs, fmt.Errorf("node ID: %w", err))
	}
	if o.DataDir == "" {
		errs = append(errs, errors.New("a data directory is required"))
	}
	if o.TLS == nil && o.DevTLSDir == "" && !o.InsecureREAR {
		errs = append(errs, errors.New("mutual TLS needs a certificate (TLS files or a dev TLS directory); insecure REAR must be asked for explicitly"))
	}
	if o.InsecureREAR && (o.TLS != nil || o.DevTLSDir != "") {
		errs = append(errs, errors.New("insecure REAR excludes TLS"))
	}
	if o.TLS != nil && o.TLS.Name() != o.NodeID {
		errs = append(errs, fmt.Errorf("the certificate names %q, the node is %q", o.TLS.Name(), o.NodeID))
	}
	if o.InsecureREAR && o.APIListen != "" && !loopback(o.APIListen) {
		errs = append(errs, fmt.Errorf("without TLS the API listens on loopback only, not %s", o.APIListen))
	}
	for _, p := range o.Peers {
		if err := consumer.CheckAddress(p); err != nil {
			errs = append(errs, err)
		}
	}
	if o.Advertise != "" {
		if err := consumer.CheckAddress(o.Advertise); err != nil {
			errs = append(errs, fmt.Errorf("advertise: %w", err))
		}
	}
	for _, f := range o.Flavors {
		if f.GetId() == "" || (f.GetVm() == nil && f.GetSensor() == nil) {
			errs = append(errs, fmt.Errorf("flavor %q: a published flavor needs an id and is a VM or a Sensor (K8Slice and Service flavors come from the capacity and the blueprints)", f.GetId()))
		}
	}
	for _, bp := range o.Blueprints {
		if allocator.IsManifestBlueprint(bp) {
			if err := allocator.CheckManifestTemplates(bp); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
