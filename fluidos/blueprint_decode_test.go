package fluidos_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/hosts/fluidos/allocator"
	"github.com/edgekit/edgekit/hosts/fluidos/nodetest"
)

// referenceDB is a database blueprint as the FLUIDOS reference writes it:
// a ServiceBlueprint resource whose spec wraps the fields, each
// template's serviceData a Kubernetes object.
const referenceDB = `apiVersion: nodecore.fluidos.eu/v1alpha1
kind: ServiceBlueprint
metadata:
  name: db-mysql
  namespace: fluidos
spec:
  name: db
  description: A database service blueprint
  category: database
  tags: [database, mysql]
  hostingPolicies: [Provider, Consumer]
  templates:
    - name: secret
      description: A secret containing the database credentials
      serviceData:
        apiVersion: v1
        kind: Secret
        metadata:
          name: db-credentials
        type: Opaque
        stringData:
          username: "{{ .username }}"
          password: "{{ .password }}"
          database: "{{ .database }}"
    - name: service
      serviceData:
        apiVersion: v1
        kind: Service
        metadata:
          name: db-service
          labels:
            nodecore.fluidos.eu/flavor-service-endpoint: "true"
        spec:
          selector: {app: db}
          ports:
            - port: 3306
    - name: deployment
      serviceData:
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          name: db
        spec:
          selector: {matchLabels: {app: db}}
          template:
            metadata: {labels: {app: db}}
            spec:
              containers:
                - name: db
                  image: mysql:5.7
status:
  serviceFlavors: []
`

// TestDecodeReferenceServiceBlueprint: the reference's resource decodes
// into a blueprint whose id is metadata.name, whose fields come from its
// spec, whose hosting policies are the reference's names, whose
// templates hold their objects as YAML, and whose configuration schema
// (the reference has none) is its placeholders, required strings. The
// node's own check of a reference-format blueprint accepts it.
func TestDecodeReferenceServiceBlueprint(t *testing.T) {
	bp, err := fluidos.DecodeServiceBlueprint([]byte(referenceDB))
	if err != nil {
		t.Fatal(err)
	}
	if bp.GetId() != "db-mysql" || bp.GetName() != "db" || bp.GetCategory() != "database" ||
		strings.Join(bp.GetTags(), ",") != "database,mysql" || bp.GetDescription() != "A database service blueprint" {
		t.Errorf("fields: %v", bp)
	}
	if hp := bp.GetHostingPolicies(); len(hp) != 2 || hp[0] != fluidos.HostingPolicy_HOSTING_POLICY_PROVIDER || hp[1] != fluidos.HostingPolicy_HOSTING_POLICY_CONSUMER {
		t.Errorf("hosting policies %v", hp)
	}
	ts := bp.GetTemplates()
	if len(ts) != 3 || ts[0].GetName() != "secret" || ts[0].GetDescription() != "A secret containing the database credentials" ||
		!strings.Contains(ts[0].GetServiceData(), "kind: Secret") || !strings.Contains(ts[0].GetServiceData(), "{{ .password }}") ||
		!strings.Contains(ts[2].GetServiceData(), "kind: Deployment") || ts[0].GetBody() != "" {
		t.Fatalf("templates %v", ts)
	}
	var names []string
	for _, p := range bp.GetConfigurationSchema().GetParameters() {
		if p.GetType() != fluidos.ParameterType_PARAMETER_TYPE_STRING || !p.GetRequired() {
			t.Errorf("parameter %v: want a required string", p)
		}
		names = append(names, p.GetName())
	}
	if strings.Join(names, ",") != "database,password,username" {
		t.Errorf("schema of the placeholders: %v", names)
	}
	if err := allocator.CheckManifestTemplates(bp); err != nil {
		t.Errorf("the node's check of the decoded blueprint: %v", err)
	}
}

// TestDecodeServiceBlueprintBothForms: edgekit's own form decodes as
// protojson; the same blueprint as a resource (serviceData as text,
// edgekit's configurationSchema and maxInstances in the spec) decodes to
// the same blueprint; an array may mix both forms.
func TestDecodeServiceBlueprintBothForms(t *testing.T) {
	want := nodetest.RefDatabaseBlueprint("mysql", 2)
	own, err := protojson.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	schema, err := protojson.Marshal(want.GetConfigurationSchema())
	if err != nil {
		t.Fatal(err)
	}
	resource := `{"apiVersion": "nodecore.fluidos.eu/v1alpha1", "kind": "ServiceBlueprint", "metadata": {"name": "mysql"},
	  "spec": {"name": "MySQL", "description": "a MySQL database", "category": "database", "tags": ["mysql"],
	    "hostingPolicies": ["Provider"], "maxInstances": 2, "configurationSchema": ` + string(schema) + `,
	    "templates": [{"name": "mysql", "description": "MySQL 5.7 with its credentials", "serviceData": ` + quote(nodetest.RefDatabaseManifests) + `}]}}`
	for name, data := range map[string]string{"edgekit's": string(own), "resource": resource} {
		got, err := fluidos.DecodeServiceBlueprint([]byte(data))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !proto.Equal(got, want) {
			t.Errorf("%s form:\n got %v\nwant %v", name, got, want)
		}
	}
	both, err := fluidos.DecodeServiceBlueprints([]byte("[" + string(own) + "," + resource + "]"))
	if err != nil || len(both) != 2 || !proto.Equal(both[0], both[1]) {
		t.Errorf("an array of both forms: %v, %v", both, err)
	}
}

// TestDecodeServiceBlueprintRefusals: a resource that is not a
// ServiceBlueprint, or whose spec holds what the format does not, is
// refused with an error that names the field and what is wrong.
func TestDecodeServiceBlueprintRefusals(t *testing.T) {
	for _, c := range []struct {
		name, edit string
		with       []string // replaced in referenceDB: old, new
		want       string
	}{
		{name: "kind", with: []string{"kind: ServiceBlueprint", "kind: Flavor"}, want: `kind "Flavor": want ServiceBlueprint`},
		{name: "group", with: []string{"apiVersion: nodecore.fluidos.eu/v1alpha1", "apiVersion: apps/v1"}, want: `apiVersion "apps/v1": want nodecore.fluidos.eu/<version>`},
		{name: "no id", with: []string{"  name: db-mysql\n", ""}, want: "metadata.name: empty"},
		{name: "unknown spec field", with: []string{"  category: database", "  categroy: database"}, want: "spec.categroy: unknown field"},
		{name: "policy", with: []string{"[Provider, Consumer]", "[Provider, Everywhere]"}, want: `spec.hostingPolicies[1] "Everywhere": want Provider, Consumer or Shared`},
		{name: "template field", with: []string{"    - name: service\n", "    - name: service\n      body: x\n"}, want: "spec.templates[1]: body: unknown field"},
		{name: "no serviceData", with: []string{"    - name: service\n      serviceData:", "    - name: service\n      other:"}, want: "spec.templates[1]: other: unknown field"},
		{name: "serviceData a number", with: []string{"    - name: deployment\n      serviceData:\n", "    - name: deployment\n      serviceData: 7\n      x:\n"}, want: "spec.templates[2]"},
		{name: "template without name", with: []string{"    - name: service\n", "    - description: service\n"}, want: "spec.templates[1]: name: empty"},
		{name: "bad placeholder", with: []string{`"{{ .username }}"`, `"{{ .username "`}, want: `template "secret"`},
		{name: "no spec", with: []string{"spec:\n", "specs:\n"}, want: "specs: unknown field of a ServiceBlueprint resource"},
	} {
		if !strings.Contains(referenceDB, c.with[0]) {
			t.Fatalf("%s: %q is not in the blueprint", c.name, c.with[0])
		}
		_, err := fluidos.DecodeServiceBlueprints([]byte(strings.Replace(referenceDB, c.with[0], c.with[1], 1)))
		if err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, fluidos.ErrInvalidBlueprintFile) {
			t.Errorf("%s: %v, want an invalid blueprint saying %q", c.name, err, c.want)
		}
	}
	if _, err := fluidos.DecodeServiceBlueprints([]byte(`[{"id":"a"}, {"kind":"ServiceBlueprint"}]`)); err == nil || !strings.Contains(err.Error(), "blueprint 1: ") {
		t.Errorf("an array's element: %v, want it named", err)
	}
	if _, err := fluidos.DecodeServiceBlueprints([]byte(`{"id":"a","nope":1}`)); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("edgekit's form with an unknown field: %v", err)
	}
	if _, err := fluidos.DecodeServiceBlueprint([]byte(`[]`)); err == nil || !strings.Contains(err.Error(), "0 blueprints where one is wanted") {
		t.Errorf("no blueprint where one is wanted: %v", err)
	}
}

// quote is s as a JSON string.
func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
