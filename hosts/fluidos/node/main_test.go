package node

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/edgekit/edgekit/fluidos"
)

func TestReadBlueprints(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	one := filepath.Join(dir, "one.json")
	many := filepath.Join(dir, "many.json")
	bad := filepath.Join(dir, "bad.json")
	yml := filepath.Join(dir, "bps.yaml")
	for path, body := range map[string]string{
		one:  `{"id":"kv","name":"kv","maxInstances":2,"configurationSchema":{"parameters":[{"name":"password","type":"PARAMETER_TYPE_STRING","required":true}]}}`,
		many: `[{"id":"a"},{"id":"b","hostingPolicies":["HOSTING_POLICY_PROVIDER"]}]`,
		bad:  `[{"id":"a","nope":1}]`,
		yml:  "- id: kv\n  templates:\n  - name: app\n    body: |\n      command: x\n",
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
	if _, err := readBlueprints(bad); err == nil || !strings.Contains(err.Error(), "blueprint 0") {
		t.Errorf("bad: %v", err)
	}
}
