package region

import (
	_ "embed" // the Kubernetes provider's blueprint
	"fmt"

	"google.golang.org/protobuf/encoding/protojson"
	"sigs.k8s.io/yaml"

	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/platforms/kubernetes"
)

// mysqlBlueprintYAML is KubernetesBlueprint, as a node operator writes it.
//
//go:embed mysql-blueprint.yaml
var mysqlBlueprintYAML []byte

// k8sSlicePrice is the price of KubernetesProvider's K8Slice flavor: below
// the provider's (node.DefaultPrice), so that a buyer that ranks
// candidates by price, as the consumer does, buys a slice of the
// Kubernetes cluster.
const k8sSlicePrice = "0.50 EUR hourly"

// k8sBlueprint is the Service KubernetesProvider sells (mysql-blueprint.yaml).
func k8sBlueprint() *fluidos.ServiceBlueprint {
	js, err := yaml.YAMLToJSON(mysqlBlueprintYAML)
	if err != nil {
		panic(fmt.Sprintf("region: mysql-blueprint.yaml: %v", err)) // embedded, checked by the tests
	}
	bp := &fluidos.ServiceBlueprint{}
	if err := protojson.Unmarshal(js, bp); err != nil {
		panic(fmt.Sprintf("region: mysql-blueprint.yaml: %v", err))
	}
	return bp
}

// k8sProviderArgs are the arguments of KubernetesProvider's fluidos-node
// beyond its identity and listeners: the platform is the cluster of the
// kubeconfig file (which the node reads itself: its content is never on
// a command line), the blueprint is k8sBlueprint.
func k8sProviderArgs(l layout, kubeconfigFile string) []string {
	return []string{"--platform", kubernetes.PlatformType, "--kubeconfig", kubeconfigFile,
		"--blueprints", l.k8sBlueprints(), "--price", k8sSlicePrice}
}

// nodeIDs are the region's FLUIDOS nodes: the provider and the consumer,
// and KubernetesProvider when a kubeconfig was given.
func (u *upRun) nodeIDs() []string {
	if len(u.kubeconfig) == 0 {
		return []string{Provider, Consumer}
	}
	return []string{Provider, KubernetesProvider, Consumer}
}

// nodeAPIs are the API addresses of the nodes of nodeIDs.
func (u *upRun) nodeAPIs() []string {
	var out []string
	for _, id := range u.nodeIDs() {
		out = append(out, u.ports.nodes[id].api)
	}
	return out
}
