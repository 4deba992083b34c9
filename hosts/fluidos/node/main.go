package node

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"sigs.k8s.io/yaml"

	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/internal/cmdutil"
	"github.com/edgekit/edgekit/internal/devtls"
	"github.com/edgekit/edgekit/platforms/local"
)

// Main runs a node process from command-line arguments until ctx ends: the
// whole of cmd/fluidos-node, importable so that the multi-call edgekit
// binary shares its flags ("edgekit fluidos-node"). It returns
// flag.ErrHelp after -h, an error for bad arguments (after printing usage
// to stderr) and for a node that could not run.
func Main(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("fluidos-node", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o Options
	var etcdEndpoints, peers, apiClients, price, blueprints, flavors, portRange, tlsCert, tlsKey, tlsCA, kubeconfig string
	images := imageFlag{}
	var hf cmdutil.HostFlags
	fs.StringVar(&o.NodeID, "id", "", "node identifier, also its certificate's Common Name (required)")
	fs.StringVar(&o.Domain, "domain", "fluidos.local", "domain of the node")
	fs.StringVar(&o.DataDir, "data-dir", "", "directory of the embedded etcd; its disk is what the K8Slice flavor sells (required)")
	fs.StringVar(&o.RearListen, "rear-listen", "127.0.0.1:7443", "address of the REAR endpoint")
	fs.StringVar(&o.Advertise, "advertise", "", "host:port peers reach the REAR endpoint at (default: the listening address)")
	fs.StringVar(&o.APIListen, "api-listen", "127.0.0.1:7001", "address of the gRPC API (empty: none)")
	fs.StringVar(&o.MetricsListen, "metrics-listen", "127.0.0.1:7002", "address of /metrics (empty: none)")
	fs.StringVar(&etcdEndpoints, "etcd-endpoints", "", "comma-separated client URLs of an external etcd cluster (default: embedded etcd)")
	fs.StringVar(&o.EtcdCAFile, "etcd-ca-file", "", "CA of an external etcd cluster")
	fs.StringVar(&o.EtcdCertFile, "etcd-cert-file", "", "client certificate for an external etcd cluster")
	fs.StringVar(&o.EtcdKeyFile, "etcd-key-file", "", "client key for an external etcd cluster")
	fs.StringVar(&o.EncryptionKeyFile, "encryption-key-file", "",
		"key file of the keys that encrypt stored secrets (default: <data-dir>/encryption.keys, created 0600 on the first start); back it up apart from etcd")
	fs.DurationVar(&o.DevTLSValidity, "dev-tls-validity", devtls.DefaultLeafValidity, "with --dev-tls: validity of the node's certificate, renewed at two thirds of its life")
	fs.StringVar(&o.DevTLSDir, "dev-tls", "", "development authority directory, created when absent: the node gets a certificate named --id from it; nodes given the same directory trust each other")
	fs.StringVar(&tlsCert, "tls-cert-file", "", "the node's certificate (PEM; its Common Name must be --id)")
	fs.StringVar(&tlsKey, "tls-key-file", "", "key of --tls-cert-file (PEM, PKCS#8)")
	fs.StringVar(&tlsCA, "tls-ca-file", "", "authorities the node trusts for peers and API clients (PEM)")
	fs.BoolVar(&o.InsecureREAR, "insecure-rear", false, "speak REAR over plain HTTP, without authentication (to trade with reference nodes); the API then listens without TLS, on loopback only")
	fs.StringVar(&apiClients, "api-clients", "", "comma-separated certificate names allowed to use the API (default: admin and --id)")
	fs.StringVar(&peers, "peers", "", "comma-separated host:port of the peers' REAR endpoints")
	fs.DurationVar(&o.PeerTTL, "peer-ttl", 0, "how long a learned peer is kept without being seen (default 10m)")
	fs.DurationVar(&o.PeerTimeout, "peer-timeout", 0, "bound of each peer's answer to a discovery (default 5s)")
	fs.DurationVar(&o.ReservationTTL, "reservation-ttl", 0, "how long a reservation holds before it expires (default 1h)")
	fs.DurationVar(&o.DiscoveryTimeout, "discovery-timeout", 0, "default bound of a solver's discovery (default 30s)")
	fs.DurationVar(&o.ReservationTimeout, "reservation-timeout", 0, "default bound of a solver's reservation (default 30s)")
	fs.DurationVar(&o.PurchaseTimeout, "purchase-timeout", 0, "default bound of a solver's purchase (default 30s)")
	fs.DurationVar(&o.AllocationTimeout, "allocation-timeout", 0, "default bound of a solver's allocation: until what it bought is provisioned (default 2m)")
	fs.DurationVar(&o.ContractLease, "contract-lease", 0, "how long a contract this node sold lasts after each renewal by its buyer: once a buyer renewed, it must renew within every lease (default 10m)")
	fs.DurationVar(&o.ContractTerm, "contract-term", 0, "how long a contract this node sold lasts after its purchase while its buyer has not renewed it, its expirationTime: a reference buyer never renews (default 8760h)")
	fs.DurationVar(&o.RenewInterval, "renew-interval", 0, "how often this node renews the contracts it bought, and learns their health (default 10s)")
	fs.DurationVar(&o.HealthInterval, "health-interval", 0, "how often what this node sold is checked, and restarted when it stopped (default 10s)")
	fs.DurationVar(&o.OperationTimeout, "operation-timeout", 0, "bound of each provisioning operation (default 2m)")
	fs.StringVar(&o.PlatformType, "platform", "local", "platform that provisions what this node sells: local (real processes), kubernetes (a cluster: a K8Slice is a namespace with its own kubeconfig) or fake (in memory, for demos)")
	fs.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig file of the cluster of --platform kubernetes (default: the cluster the node runs in)")
	fs.StringVar(&o.PlatformDir, "platform-dir", "", "state directory of the platform (default: <data-dir>/platform)")
	fs.StringVar(&portRange, "port-range", "", `ports the local platform hands out, "MIN-MAX" (default 20000-29999)`)
	fs.Var(images, "image", "an executable buyers and blueprints may run, NAME=/absolute/path (repeatable)")
	fs.StringVar(&flavors, "flavors", "", "JSON or YAML file of VM and Sensor flavors to publish (one object or an array, protojson)")
	fs.Int64Var(&o.Pods, "pods", 0, "pods the K8Slice flavor offers (default 110)")
	fs.StringVar(&price, "price", "", `price of the K8Slice flavor, "<amount> <currency> <period>" (default "1.00 EUR hourly")`)
	fs.StringVar(&blueprints, "blueprints", "", "JSON or YAML file of service blueprints (one or an array; protojson names, or the FLUIDOS reference's ServiceBlueprint resources with their spec) created at start when absent")
	fs.DurationVar(&o.StopTimeout, "stop-timeout", 10*time.Second, "how long in-flight calls may run after a stop signal")
	hf.Register(fs)
	if err := cmdutil.Parse(fs, args); err != nil {
		return err
	}
	o.EtcdEndpoints = cmdutil.SplitList(etcdEndpoints)
	o.Peers = cmdutil.SplitList(peers)
	o.APIClients = cmdutil.SplitList(apiClients)
	var err error
	if o.Price, err = parsePrice(price); err != nil {
		return err
	}
	if blueprints != "" {
		if o.Blueprints, err = readBlueprints(blueprints); err != nil {
			return err
		}
	}
	if flavors != "" {
		if o.Flavors, err = readObjects(flavors, "--flavors", func() *fluidos.Flavor { return &fluidos.Flavor{} }); err != nil {
			return err
		}
	}
	o.Images = images
	if o.PlatformProperties, err = platformProperties(portRange); err != nil {
		return err
	}
	if err := kubeconfigFlag(&o, kubeconfig); err != nil {
		return err
	}
	if o.Logger, err = hf.Logger(stderr); err != nil {
		return err
	}
	defer hf.Done()
	if o.DevTLSValidity <= 0 {
		return fmt.Errorf("--dev-tls-validity %v: want a positive duration", o.DevTLSValidity)
	}
	switch {
	case tlsCert != "" || tlsKey != "" || tlsCA != "":
		if tlsCert == "" || tlsKey == "" || tlsCA == "" {
			return fmt.Errorf("--tls-cert-file, --tls-key-file and --tls-ca-file go together")
		}
		if o.DevTLSDir != "" {
			return fmt.Errorf("--dev-tls and --tls-cert-file exclude each other")
		}
		if o.TLS, err = devtls.LoadRenewingBundle(tlsCert, tlsKey, tlsCA, 0, o.Logger); err != nil {
			return err
		}
	case o.DevTLSDir == "" && !o.InsecureREAR:
		return fmt.Errorf("nodes talk over mutual TLS: give --dev-tls DIR or --tls-cert-file, --tls-key-file and --tls-ca-file (or --insecure-rear for plain HTTP)")
	}
	o.Ready = func(r *Running) {
		hf.Ready(o.Logger, cmdutil.Ready{Listeners: map[string]string{"rear": r.Advertised, "api": r.APIAddr, "metrics": r.MetricsAddr},
			Etcd: r.EtcdEndpoints})
	}
	return Run(ctx, o)
}

func parsePrice(s string) (*fluidos.Price, error) {
	if s == "" {
		return nil, nil
	}
	f := strings.Fields(s)
	if len(f) != 3 {
		return nil, fmt.Errorf("--price %q: want \"<amount> <currency> <period>\", for example \"0.50 EUR hourly\"", s)
	}
	return &fluidos.Price{Amount: f[0], Currency: f[1], Period: f[2]}, nil
}

// readBlueprints reads one blueprint or an array of them, in JSON or
// YAML, each in edgekit's form (protojson) or as the FLUIDOS reference's
// ServiceBlueprint resource (fluidos.DecodeServiceBlueprints).
func readBlueprints(path string) ([]*fluidos.ServiceBlueprint, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--blueprints: %w", err)
	}
	bps, err := fluidos.DecodeServiceBlueprints(b)
	if err != nil {
		return nil, fmt.Errorf("--blueprints %s: %w", path, err)
	}
	return bps, nil
}

// readObjects reads one object or an array of them from the file of flag
// (protojson, in JSON or YAML).
func readObjects[T proto.Message](path, flag string, fresh func() T) ([]T, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	if b, err = yaml.YAMLToJSON(b); err != nil {
		return nil, fmt.Errorf("%s %s: %w", flag, path, err)
	}
	var raws []json.RawMessage
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] == '[' {
		if err := json.Unmarshal(t, &raws); err != nil {
			return nil, fmt.Errorf("%s %s: %w", flag, path, err)
		}
	} else {
		raws = []json.RawMessage{b}
	}
	what := strings.TrimPrefix(flag, "--")
	what = strings.TrimSuffix(what, "s")
	out := make([]T, len(raws))
	for i, r := range raws {
		out[i] = fresh()
		if err := protojson.Unmarshal(r, out[i]); err != nil {
			return nil, fmt.Errorf("%s %s: %s %d: %w", flag, path, what, i, err)
		}
	}
	return out, nil
}

// imageFlag is --image NAME=PATH, repeatable.
type imageFlag map[string]string

func (f imageFlag) String() string {
	parts := make([]string, 0, len(f))
	for n, p := range f {
		parts = append(parts, n+"="+p)
	}
	slices.Sort(parts)
	return strings.Join(parts, ",")
}

func (f imageFlag) Set(v string) error {
	name, path, ok := strings.Cut(v, "=")
	if !ok || name == "" || path == "" {
		return fmt.Errorf("%q: want NAME=/absolute/path", v)
	}
	if _, dup := f[name]; dup {
		return fmt.Errorf("image %q given twice", name)
	}
	f[name] = path
	return nil
}

// platformProperties are the local platform's properties of --port-range.
func platformProperties(portRange string) (map[string]string, error) {
	if portRange == "" {
		return nil, nil
	}
	lo, hi, ok := strings.Cut(portRange, "-")
	a, errA := strconv.Atoi(lo)
	b, errB := strconv.Atoi(hi)
	if !ok || errA != nil || errB != nil || a < 1 || b > 65535 || a > b {
		return nil, fmt.Errorf("--port-range %q: want MIN-MAX, for example 20000-20999", portRange)
	}
	return map[string]string{local.PropPortMin: lo, local.PropPortMax: hi}, nil
}
