package node

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/hosts/fluidos/allocator"
)

func TestReadBlueprints(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	one := filepath.Join(dir, "one.json")
	many := filepath.Join(dir, "many.json")
	bad := filepath.Join(dir, "bad.json")
	yml := filepath.Join(dir, "bps.yaml")
	ref := filepath.Join(dir, "ref.yaml")
	resource := filepath.Join(dir, "resource.yaml")
	badResource := filepath.Join(dir, "bad-resource.yaml")
	for path, body := range map[string]string{
		one:  `{"id":"kv","name":"kv","maxInstances":2,"configurationSchema":{"parameters":[{"name":"password","type":"PARAMETER_TYPE_STRING","required":true}]}}`,
		many: `[{"id":"a"},{"id":"b","hostingPolicies":["HOSTING_POLICY_PROVIDER"]}]`,
		bad:  `[{"id":"a","nope":1}]`,
		yml:  "- id: kv\n  templates:\n  - name: app\n    body: |\n      command: x\n",
		resource: "apiVersion: nodecore.fluidos.eu/v1alpha1\nkind: ServiceBlueprint\nmetadata: {name: db}\nspec:\n  category: database\n  hostingPolicies: [Provider]\n" +
			"  templates:\n  - name: db\n    serviceData:\n      apiVersion: v1\n      kind: Secret\n      metadata: {name: s}\n      stringData: {password: \"{{ .password }}\"}\n",
		badResource: "apiVersion: nodecore.fluidos.eu/v1alpha1\nkind: ServiceBlueprint\nmetadata: {name: db}\nspec:\n  hostingPolicies: [Somewhere]\n",
		ref:         "id: db\ncategory: database\ntemplates:\n- name: db\n  description: the database\n  serviceData: |\n    apiVersion: v1\n    kind: Secret\n    metadata: {name: s}\n    stringData: {password: \"{{ .password }}\"}\n",
	} {
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	bps, err := readBlueprints(one)
	if err != nil || len(bps) != 1 || bps[0].GetMaxInstances() != 2 || bps[0].GetConfigurationSchema().GetParameters()[0].GetName() != "password" {
		t.Errorf("one: %v, %v", bps, err)
	}
	if bps, err := readBlueprints(many); err != nil || len(bps) != 2 || bps[1].GetHostingPolicies()[0] != fluidos.HostingPolicy_HOSTING_POLICY_PROVIDER {
		t.Errorf("many: %v, %v", bps, err)
	}
	if bps, err := readBlueprints(yml); err != nil || len(bps) != 1 || bps[0].GetTemplates()[0].GetBody() != "command: x\n" {
		t.Errorf("yaml: %v, %v", bps, err)
	}
	// The reference's format: templates of manifests in serviceData.
	if bps, err := readBlueprints(ref); err != nil || len(bps) != 1 || !strings.HasPrefix(bps[0].GetTemplates()[0].GetServiceData(), "apiVersion: v1\nkind: Secret\n") ||
		bps[0].GetTemplates()[0].GetDescription() != "the database" || !allocator.IsManifestBlueprint(bps[0]) {
		t.Errorf("reference format: %v, %v", bps, err)
	}
	// The reference's ServiceBlueprint resource: a spec around the fields.
	if bps, err := readBlueprints(resource); err != nil || len(bps) != 1 || bps[0].GetId() != "db" || bps[0].GetCategory() != "database" ||
		!strings.HasPrefix(bps[0].GetTemplates()[0].GetServiceData(), "apiVersion: v1\nkind: Secret\n") ||
		bps[0].GetConfigurationSchema().GetParameters()[0].GetName() != "password" || allocator.CheckManifestTemplates(bps[0]) != nil {
		t.Errorf("reference resource: %v, %v", bps, err)
	}
	if _, err := readBlueprints(badResource); err == nil || !strings.Contains(err.Error(), `spec.hostingPolicies[0] "Somewhere"`) || !strings.Contains(err.Error(), badResource) {
		t.Errorf("bad reference resource: %v", err)
	}
	if _, err := readBlueprints(bad); err == nil || !strings.Contains(err.Error(), "blueprint 0") {
		t.Errorf("bad: %v", err)
	}
}

// TestKubeconfigFlag: --kubeconfig goes with --platform kubernetes and
// becomes its KUBECONFIG access variable; a missing, empty or unusable
// file fails naming the file, never quoting it.
func TestKubeconfigFlag(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	bad := filepath.Join(dir, "bad")
	empty := filepath.Join(dir, "empty")
	const kc = "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:6443\nusers:\n- name: u\n  user:\n    token: s3cret-token\ncontexts:\n- name: x\n  context:\n    cluster: c\n    user: u\ncurrent-context: x\n"
	for path, body := range map[string]string{good: kc, bad: "token: s3cret-never-shown\n[not yaml", empty: " \n"} {
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	o := Options{PlatformType: "kubernetes"}
	if err := kubeconfigFlag(&o, good); err != nil || o.PlatformAccessVars["KUBECONFIG"] != kc {
		t.Fatalf("a good kubeconfig: %v, access vars set %v", err, o.PlatformAccessVars["KUBECONFIG"] == kc)
	}
	if err := kubeconfigFlag(&Options{PlatformType: "local"}, good); err == nil || !strings.Contains(err.Error(), "--platform kubernetes") {
		t.Errorf("--kubeconfig with --platform local: %v, want an error naming --platform kubernetes", err)
	}
	for _, path := range []string{bad, empty, filepath.Join(dir, "missing")} {
		err := kubeconfigFlag(&Options{PlatformType: "kubernetes"}, path)
		if err == nil || !strings.Contains(err.Error(), path) || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("--kubeconfig %s: %v, want an error naming the file and quoting nothing of it", path, err)
		}
	}
	if err := kubeconfigFlag(&Options{PlatformType: "local"}, ""); err != nil {
		t.Errorf("no --kubeconfig: %v", err)
	}
}

// TestBrokenReferenceBlueprintRefusedAtStart: a blueprint in the
// reference's format given at start (--blueprints) is checked like one
// given through the API: a broken one stops the node, naming the
// template and the document.
func TestBrokenReferenceBlueprintRefusedAtStart(t *testing.T) {
	t.Parallel()
	bp := &fluidos.ServiceBlueprint{Id: "db", Templates: []*fluidos.ServiceTemplate{{Name: "db",
		ServiceData: "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\n---\napiVersion: v1\nmetadata: {name: t}\n"}}}
	o := Options{NodeID: "n", DataDir: t.TempDir(), InsecureREAR: true, Blueprints: []*fluidos.ServiceBlueprint{bp}}
	if err := o.check(); err == nil || !strings.Contains(err.Error(), `template "db": document 2: no kind`) {
		t.Errorf("a broken reference blueprint at start: %v", err)
	}
	bp.Templates[0].ServiceData = "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\n"
	if err := o.check(); err != nil {
		t.Errorf("a good one: %v", err)
	}
}
