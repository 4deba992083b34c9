package region

import (
	"fmt"
	"github.com/edgekit/edgekit/atrest"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// The region's fixed shape: its name, organization, flavor, cloudlets and
// FLUIDOS nodes.
const (
	// RegionName is the controller's region.
	RegionName = "local"
	// Operator is the organization that owns the cloudlets.
	Operator = "operator"
	// Flavor is the flavor created for clusters.
	Flavor = "local.small"
	// EdgeCloudlet is served by a CRM on the local platform.
	EdgeCloudlet = "edge1"
	// OffsiteCloudlet is served by the CCRM replicas on the local platform.
	OffsiteCloudlet = "offsite1"
	// KubernetesCloudlet is served by the CCRM replicas on the Kubernetes
	// cluster of Options.KubeconfigFile, when one is given.
	KubernetesCloudlet = "k8s1"
	// Provider and Consumer are the FLUIDOS nodes' identities.
	Provider = "provider"
	Consumer = "consumer"
	// KubernetesProvider is the FLUIDOS node on the Kubernetes cluster of
	// Options.KubeconfigFile, when one is given: its platform is that
	// cluster, and it sells slices of it (namespaces with their own
	// kubeconfig) and the Service of KubernetesBlueprint.
	KubernetesProvider = "provider-k8s"
	// ServiceBlueprint is the blueprint the provider sells a Service of.
	ServiceBlueprint = "kv"
	// KubernetesBlueprint is the blueprint KubernetesProvider sells a
	// Service of: a MySQL database written in the FLUIDOS reference's
	// format (Kubernetes manifests).
	KubernetesBlueprint = "mysql"
	// KVImageName is the name under which the region's binary is the
	// key-value service of ServiceBlueprint (image "kv" of the provider).
	KVImageName = "edgekit-kv"
)

// maxPortOffset is the highest offset from the base port a listener of
// the region takes (pickPorts).
const maxPortOffset = 43

// Port ranges the local platform hands the cloudlets' clusters: below the
// kernel's ephemeral ports, one range per cloudlet so that their
// instances do not compete (a busy port is skipped anyway).
var portRanges = map[string][2]int{EdgeCloudlet: {21000, 22999}, OffsiteCloudlet: {23000, 24999}, Provider: {25000, 25999}}

// layout names the files of a region under its state directory.
type layout struct{ dir string }

func (l layout) path(elem ...string) string {
	return filepath.Join(append([]string{l.dir}, elem...)...)
}

// bin is the copy of the multi-call binary every process of the region
// runs (and the tour's application), stable across runs of up.
func (l layout) bin() string                     { return l.path("bin", "edgekit") }
func (l layout) kvImage() string                 { return l.path("bin", KVImageName) }
func (l layout) controller() string              { return l.path("controller") }
func (l layout) controllerTLS() string           { return l.path("controller", "tls") }
func (l layout) controllerKeys() string          { return l.path("controller", atrest.DefaultKeyFileName) }
func (l layout) adminToken() string              { return l.path("controller", "admin.token") }
func (l layout) caFile() string                  { return l.path("controller", "tls", "ca.crt") }
func (l layout) crmState(cloudlet string) string { return l.path("crm", cloudlet) }
func (l layout) accessKey(cloudlet string) string {
	return l.path("crm", cloudlet+".key")
}
func (l layout) ccrmState() string          { return l.path("ccrm") }
func (l layout) node(id string) string      { return l.path("fluidos", id) }
func (l layout) fluidosTLS() string         { return l.path("fluidos", "tls") }
func (l layout) blueprints() string         { return l.path("fluidos", "blueprints.json") }
func (l layout) k8sBlueprints() string      { return l.path("fluidos", "blueprints-k8s.json") }
func (l layout) logFile(name string) string { return l.path("logs", name+".log") }
func (l layout) readyFile(name string) string {
	return l.path("run", name+".json")
}
func (l layout) info() string       { return l.path(InfoFile) }
func (l layout) lock() string       { return l.path("up.lock") }
func (l layout) poweredOff() string { return l.path("powered-off.json") }

// mkdirs creates the directories the processes write into.
func (l layout) mkdirs() error {
	for _, d := range []string{l.path("bin"), l.path("logs"), l.path("run"), l.path("crm"), l.ccrmState(), l.path("fluidos")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("region: %w", err)
		}
	}
	return nil
}

// ports are the listening addresses of the region's processes.
type ports struct {
	controllerAPI, controllerHTTP string
	crmMetrics                    string
	ccrmMetrics                   [2]string
	// nodes are the FLUIDOS nodes' addresses, by identity: Provider,
	// Consumer, and KubernetesProvider when the region has a Kubernetes
	// cluster.
	nodes map[string]nodePorts
}

// nodePorts are a FLUIDOS node's addresses.
type nodePorts struct{ rear, api, metrics string }

// pickPorts returns the addresses for base: base+1 and base+2 for the
// controller's API and HTTP server, base+3 for the CRM's metrics, base+11
// and base+12 for the CCRM replicas', base+21 to base+23 and base+31 to
// base+33 for the provider's and the consumer's REAR, API and metrics,
// and with k8s base+41 to base+43 for KubernetesProvider's. A base of 0 picks free loopback ports instead (different at each run),
// between 10000 and 19999: below the kernel's ephemeral ports, which any
// program's outgoing connections and port-0 listeners may take between
// the pick and the bind, and below the local platform's default ranges.
func pickPorts(base int, k8s bool) (ports, error) {
	if base < 0 || base > 65535-maxPortOffset {
		return ports{}, fmt.Errorf("region: base port %d: want 0 or 1-%d", base, 65535-maxPortOffset)
	}
	var errs []error
	taken := map[string]bool{}
	addr := func(off int) string {
		if base > 0 {
			return net.JoinHostPort("127.0.0.1", strconv.Itoa(base+off))
		}
		a, err := freeAddr(taken)
		errs = append(errs, err)
		taken[a] = true
		return a
	}
	p := ports{
		controllerAPI: addr(1), controllerHTTP: addr(2), crmMetrics: addr(3),
		ccrmMetrics: [2]string{addr(11), addr(12)},
		nodes: map[string]nodePorts{
			Provider: {rear: addr(21), api: addr(22), metrics: addr(23)},
			Consumer: {rear: addr(31), api: addr(32), metrics: addr(33)},
		},
	}
	if k8s {
		p.nodes[KubernetesProvider] = nodePorts{rear: addr(41), api: addr(42), metrics: addr(43)}
	}
	for _, err := range errs {
		if err != nil {
			return ports{}, fmt.Errorf("region: picking a free port: %w", err)
		}
	}
	return p, nil
}

// portUse is an address of the region and what listens on it.
type portUse struct{ addr, what string }

// uses lists every address of p with what listens on it, in start order.
func (p ports) uses() []portUse {
	out := []portUse{
		{p.nodes[Provider].rear, "the provider node's REAR server"},
		{p.nodes[Provider].api, "the provider node's API"},
		{p.nodes[Provider].metrics, "the provider node's metrics"},
		{p.nodes[Consumer].rear, "the consumer node's REAR server"},
		{p.nodes[Consumer].api, "the consumer node's API"},
		{p.nodes[Consumer].metrics, "the consumer node's metrics"},
	}
	if np, ok := p.nodes[KubernetesProvider]; ok {
		out = append(out, portUse{np.rear, "the Kubernetes provider node's REAR server"}, portUse{np.api, "the Kubernetes provider node's API"},
			portUse{np.metrics, "the Kubernetes provider node's metrics"})
	}
	out = append(out, portUse{p.controllerAPI, "the controller's API"}, portUse{p.controllerHTTP, "the controller's status page and metrics"})
	for i, a := range p.ccrmMetrics {
		out = append(out, portUse{a, "the metrics of CCRM replica ccrm-" + string(rune('a'+i))})
	}
	return append(out, portUse{p.crmMetrics, "the CRM's metrics"})
}

// checkPorts fails, in one line, when a port of p is taken, naming each
// taken port and what wanted it: before anything starts, so that a taken
// port stops nothing half-started and shows no log.
func checkPorts(p ports) error {
	var taken []string
	for _, u := range p.uses() {
		l, err := net.Listen("tcp", u.addr)
		if err != nil {
			_, port, _ := net.SplitHostPort(u.addr)
			taken = append(taken, fmt.Sprintf("port %s (%s)", port, u.what))
			continue
		}
		l.Close()
	}
	if len(taken) == 0 {
		return nil
	}
	verb := "is"
	if len(taken) > 1 {
		verb = "are"
	}
	return fmt.Errorf("region: %s %s taken by another program: stop it, or choose other ports with --base-port (0 picks free ones)",
		strings.Join(taken, ", "), verb)
}

// freeAddr returns a loopback address between 10000 and 19999, not in
// taken, whose port was free a moment ago.
func freeAddr(taken map[string]bool) (string, error) {
	var err error
	for range 200 {
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(10000+rand.IntN(10000)))
		if taken[addr] {
			continue
		}
		var l net.Listener
		if l, err = net.Listen("tcp", addr); err == nil {
			l.Close()
			return addr, nil
		}
	}
	return "", fmt.Errorf("no free port between 10000 and 19999 in 200 tries: %w", err)
}
