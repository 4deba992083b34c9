package nodetest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/edgekit/edgekit/fluidos"
)

// KVApp and KVCredentials are the templates of KVBlueprint: the image
// "kv" (cmd/edgekit-kv) run with the buyer's user name and password, and
// credentials of its endpoint with them.
const (
	KVApp = `command: {{ image "kv" | json }}
env_vars:
- name: KV_USERNAME
  value: {{ .Config.username | json }}
- name: KV_PASSWORD
  secret_value: {{ .Config.password | json }}
ports:
- proto: PORT_PROTOCOL_HTTP
  internal_port: 8080
health_check: HEALTH_CHECK_HTTP
health_check_path: /healthz
`
	KVCredentials = `endpoint: {{ printf "http://%s" .Endpoint | json }}
username: {{ .Config.username | json }}
password: {{ .Config.password | json }}
`
)

// KVBlueprint is a blueprint of a key-value service (category
// "database", tag "kv") selling at most max instances (0: no limit),
// whose buyer chooses a password (8 or more of a-z 0-9 -) and a user name
// (default "admin").
func KVBlueprint(id string, max uint32) *fluidos.ServiceBlueprint {
	return &fluidos.ServiceBlueprint{
		Id: id, Name: id, Category: "database", Tags: []string{"kv", "cache"}, MaxInstances: max,
		HostingPolicies: []fluidos.HostingPolicy{fluidos.HostingPolicy_HOSTING_POLICY_PROVIDER, fluidos.HostingPolicy_HOSTING_POLICY_SHARED},
		Price:           &fluidos.Price{Amount: "0.10", Currency: "EUR", Period: "hourly"},
		ConfigurationSchema: &fluidos.ConfigurationSchema{Parameters: []*fluidos.ConfigParameter{
			{Name: "username", Type: fluidos.ParameterType_PARAMETER_TYPE_STRING, DefaultValue: "admin", Pattern: "[a-z][a-z0-9]{0,31}"},
			{Name: "password", Type: fluidos.ParameterType_PARAMETER_TYPE_STRING, Required: true, Pattern: "[a-z0-9-]{8,64}"},
		}},
		Templates: []*fluidos.ServiceTemplate{{Name: "app", Body: KVApp}, {Name: "credentials", Body: KVCredentials}},
	}
}

// BuildKV builds cmd/edgekit-kv into dir and returns the binary's path:
// the image "kv" that blueprints and slices run on the local platform
// (for a TestMain, once per test binary).
func BuildKV(dir string) (string, error) {
	path := filepath.Join(dir, "edgekit-kv")
	out, err := exec.Command("go", "build", "-o", path, "github.com/edgekit/edgekit/cmd/edgekit-kv").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("building edgekit-kv: %w\n%s", err, out)
	}
	return path, nil
}

// RunWithKV is the body of a TestMain whose tests run the image "kv": it
// builds it into a temporary directory, sets *path, runs the tests and
// removes the directory, and returns the exit code.
func RunWithKV(m *testing.M, path *string) int {
	dir, err := os.MkdirTemp("", "edgekit-kv-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if *path, err = BuildKV(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}
