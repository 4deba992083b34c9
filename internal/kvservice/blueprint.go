package kvservice

import (
	_ "embed" // the blueprint
	"fmt"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"sigs.k8s.io/yaml"

	"github.com/edgekit/edgekit/fluidos"
)

// blueprintYAML is the service's blueprint, as a node operator writes it
// (fluidos-node --blueprints internal/kvservice/blueprint.yaml).
//
//go:embed blueprint.yaml
var blueprintYAML []byte

// documented is blueprintYAML, parsed once.
var documented = mustParse(blueprintYAML)

func mustParse(b []byte) *fluidos.ServiceBlueprint {
	js, err := yaml.YAMLToJSON(b)
	if err != nil {
		panic(fmt.Sprintf("kvservice: blueprint.yaml: %v", err))
	}
	bp := &fluidos.ServiceBlueprint{}
	if err := protojson.Unmarshal(js, bp); err != nil {
		panic(fmt.Sprintf("kvservice: blueprint.yaml: %v", err))
	}
	return bp
}

// Blueprint is the service's blueprint (blueprint.yaml: category
// "database", tag "kv", an "app" template running the image "kv" with the
// buyer's user name and password, a "credentials" template of its
// endpoint) under id, selling at most max instances (0: no limit).
func Blueprint(id string, max uint32) *fluidos.ServiceBlueprint {
	bp := proto.Clone(documented).(*fluidos.ServiceBlueprint)
	bp.Id, bp.Name, bp.MaxInstances = id, id, max
	return bp
}
