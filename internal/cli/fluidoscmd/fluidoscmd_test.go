package fluidoscmd_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/hosts/fluidos/node"
	"github.com/edgekit/edgekit/hosts/fluidos/nodetest"
	"github.com/edgekit/edgekit/hosts/fluidos/provider"
	"github.com/edgekit/edgekit/internal/cli/edgectl"
	"github.com/edgekit/edgekit/internal/cli/fluidoscmd"
	"github.com/edgekit/edgekit/internal/kvservice"
)

// two starts bob, selling, and alice, buying from bob.
func two(t *testing.T) (nw *nodetest.Network, alice, bob *nodetest.Node) {
	t.Helper()
	nw = nodetest.NewNetwork(t)
	capacity := nodetest.Capacity(provider.Capacity{Architecture: "amd64", CPU: 4000, Memory: 8 << 30, Pods: 40, Storage: 10 << 30})
	bob = nw.Start(node.Options{NodeID: "bob", Capacity: capacity})
	alice = nw.Start(node.Options{NodeID: "alice", Capacity: capacity, Peers: []string{bob.RearAddr()}})
	return nw, alice, bob
}

// run runs the command with args against n as admin and returns its
// output, its notes and its error.
func run(t *testing.T, nw *nodetest.Network, n *nodetest.Node, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := fluidoscmd.NewCommand(fluidoscmd.Options{Out: &out, ErrOut: &errOut})
	cmd.SetArgs(append([]string{"--node", n.Options().APIListen, "--dev-tls", nw.CADir(), "--timeout", "60s"}, args...))
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	err := cmd.ExecuteContext(ctx)
	return out.String(), errOut.String(), err
}

func TestBuyAK8SliceAndLookAtIt(t *testing.T) {
	t.Parallel()
	nw, alice, bob := two(t)

	out, _, err := run(t, nw, alice, "show", "flavors", "--peers", "--type", "k8slice", "--filter", "cpu>=2", "--filter", "architecture~amd.*")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "bob-k8slice") || !strings.Contains(out, "4 cpu, 8Gi memory, 40 pods") || !strings.Contains(out, bob.RearAddr()) {
		t.Errorf("show flavors --peers:\n%s", out)
	}

	out, _, err = run(t, nw, alice, "create", "solver", "buy-1", "--type", "k8slice", "--filter", "cpu>=1", "--cpu", "2", "--memory", "4Gi", "--pods", "10", "--watch")
	if err != nil {
		t.Fatalf("create solver --watch: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 3 || !strings.HasPrefix(lines[0], "NAME") || !strings.Contains(lines[len(lines)-1], "SOLVED") {
		t.Errorf("watched phases:\n%s", out)
	}

	out, _, err = run(t, nw, alice, "show", "contracts", "--role", "bought", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var contracts []map[string]any
	if err := json.Unmarshal([]byte(out), &contracts); err != nil || len(contracts) != 1 {
		t.Fatalf("show contracts -o json: %v\n%s", err, out)
	}
	if c := contracts[0]["contract"].(map[string]any); c["seller"].(map[string]any)["node_id"] != "bob" || contracts[0]["role"] != "CONTRACT_ROLE_BOUGHT" {
		t.Errorf("contract %v", contracts[0])
	}

	out, _, err = run(t, nw, bob, "show", "contracts", "-o", "yaml")
	if err != nil || !strings.Contains(out, "role: CONTRACT_ROLE_SOLD") || strings.Contains(out, "peering_target_credentials") {
		t.Errorf("bob's contracts (%v): the sold contract without credentials expected:\n%s", err, out)
	}
	out, _, err = run(t, nw, alice, "show", "discovery", "buy-1")
	if err != nil || !strings.Contains(out, bob.RearAddr()) || !strings.Contains(out, "SOLVED") {
		t.Errorf("show discovery (%v):\n%s", err, out)
	}
	out, _, err = run(t, nw, alice, "show", "solver", "buy-1")
	if err != nil || !strings.Contains(out, "buy-1") || !strings.Contains(out, "c-t-") {
		t.Errorf("show solver (%v):\n%s", err, out)
	}
	out, _, err = run(t, nw, bob, "show", "flavors", "--type", "k8slice")
	if err != nil || !strings.Contains(out, "2 cpu, 4Gi memory, 30 pods") {
		t.Errorf("bob's flavors after the sale (%v):\n%s", err, out)
	}
	if _, notes, err := run(t, nw, alice, "delete", "solver", "buy-1"); err != nil || !strings.Contains(notes, "deleted") {
		t.Errorf("delete solver: %v %s", err, notes)
	}
	if _, _, err := run(t, nw, alice, "show", "solver", "buy-1"); err == nil || !strings.Contains(err.Error(), "NotFound") {
		t.Errorf("show of a deleted solver: %v", err)
	}
}

func TestWatchedSolverThatFailsIsAnError(t *testing.T) {
	t.Parallel()
	nw, alice, _ := two(t)
	out, _, err := run(t, nw, alice, "create", "solver", "--type", "k8slice", "--filter", "cpu>=64", "--watch")
	if err == nil || !strings.Contains(err.Error(), "FAILED") || !strings.Contains(out, "FAILED") {
		t.Errorf("a failing solver: %v\n%s", err, out)
	}
}

func TestBlueprintsPeersAndNode(t *testing.T) {
	t.Parallel()
	nw, alice, bob := two(t)
	file := filepath.Join(t.TempDir(), "kv.json")
	bp := `{"id":"kv","name":"key-value store","category":"database","tags":["kv"],"maxInstances":2,
	  "hostingPolicies":["HOSTING_POLICY_PROVIDER"],
	  "configurationSchema":{"parameters":[{"name":"password","type":"PARAMETER_TYPE_STRING","required":true}]}}`
	if err := os.WriteFile(file, []byte(bp), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, _, err := run(t, nw, bob, "create", "blueprint", "-f", file); err != nil || !strings.Contains(out, "password") {
		t.Fatalf("create blueprint (%v):\n%s", err, out)
	}
	out, _, err := run(t, nw, alice, "show", "flavors", "--peers", "--type", "service", "--filter", "tags=kv")
	if err != nil || !strings.Contains(out, "bob-service-kv") || !strings.Contains(out, "0 of 2 sold") {
		t.Errorf("the blueprint's flavor from alice (%v):\n%s", err, out)
	}
	if _, _, err := run(t, nw, bob, "delete", "blueprint", "kv"); err != nil {
		t.Fatal(err)
	}
	if out, _, err := run(t, nw, bob, "show", "blueprints", "-o", "json"); err != nil || strings.TrimSpace(out) != "[]" {
		t.Errorf("blueprints after delete (%v): %s", err, out)
	}
	if _, _, err := run(t, nw, alice, "create", "peer", "127.0.0.1:9"); err != nil {
		t.Fatal(err)
	}
	out, _, err = run(t, nw, alice, "show", "peers")
	if err != nil || !strings.Contains(out, bob.RearAddr()+"  true") || !strings.Contains(out, "127.0.0.1:9") {
		t.Errorf("show peers (%v):\n%s", err, out)
	}
	out, _, err = run(t, nw, alice, "show", "node", "-o", "json")
	var n map[string]map[string]any
	if err != nil || json.Unmarshal([]byte(out), &n) != nil || n["node"]["node_id"] != "alice" || n["node"]["ip"] != alice.RearAddr() {
		t.Errorf("show node (%v): %s", err, out)
	}
	if out, _, err := run(t, nw, alice, "show", "allocations"); err != nil || !strings.HasPrefix(out, "ID") {
		t.Errorf("show allocations (%v): %s", err, out)
	}
}

func TestCommandErrors(t *testing.T) {
	t.Parallel()
	nw, alice, _ := two(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"show", "spaceships"}, "unknown kind"},
		{[]string{"create"}, "needs a kind"},
		{[]string{"create", "solver"}, "--type is required"},
		{[]string{"create", "solver", "--type", "k8slice", "--filter", "color=red"}, "color"},
		{[]string{"create", "solver", "--type", "k8slice", "--filter", "cpu"}, "KEY=VALUE"},
		{[]string{"create", "solver", "--type", "k8slice", "--cpu", "2"}, "--memory"},
		{[]string{"create", "solver", "--type", "k8slice", "--param", "a=b"}, "--type service"},
		{[]string{"create", "solver", "--type", "service", "--param", "novalue"}, "NAME=VALUE"},
		{[]string{"create", "solver", "--type", "boat"}, "--type"},
		{[]string{"show", "flavors", "--filter", "cpu=1"}, "needs --type"},
		{[]string{"show", "contracts", "--role", "stolen"}, "--role"},
		{[]string{"show", "solvers", "-o", "xml"}, "output format"},
		{[]string{"create", "blueprint"}, "-f FILE"},
		{[]string{"show", "node", "--as", "stranger"}, "PermissionDenied"},
		{[]string{"show", "node", "--insecure"}, "excludes"},
	} {
		_, _, err := run(t, nw, alice, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want an error with %q", c.args, err, c.want)
		}
	}
	// Without any TLS setting the command says what it needs.
	var out bytes.Buffer
	cmd := fluidoscmd.NewCommand(fluidoscmd.Options{Out: &out, ErrOut: &out})
	cmd.SetArgs([]string{"--node", alice.Options().APIListen, "show", "node"})
	if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), "--dev-tls") {
		t.Errorf("no TLS settings: %v", err)
	}
}

// TestUnderEdgectl wires the command under edgectl's root, as edgectl
// does, and runs it: its flags (-o, --timeout, the TLS files, --insecure)
// live beside the root's without clashing.
func TestUnderEdgectl(t *testing.T) {
	t.Parallel()
	nw, alice, _ := two(t)
	var out, errOut bytes.Buffer
	root := edgectl.NewRootCommand(edgectl.Options{Out: &out, ErrOut: &errOut})
	root.AddCommand(fluidoscmd.NewCommand(fluidoscmd.Options{Out: &out, ErrOut: &errOut}))
	root.SetArgs([]string{"fluidos", "--node", alice.Options().APIListen, "--dev-tls", nw.CADir(), "show", "node", "-o", "json", "--timeout", "30s"})
	if err := root.Execute(); err != nil {
		t.Fatalf("edgectl fluidos show node: %v\n%s", err, errOut.String())
	}
	if !strings.Contains(out.String(), `"node_id": "alice"`) {
		t.Errorf("output:\n%s", out.String())
	}
}

// boughtAllocation is the id of the one allocation alice bought.
func boughtAllocation(t *testing.T, nw *nodetest.Network, alice *nodetest.Node) (id, contract string) {
	t.Helper()
	out, _, err := run(t, nw, alice, "show", "allocations", "--role", "bought", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var as []map[string]any
	if err := json.Unmarshal([]byte(out), &as); err != nil || len(as) != 1 {
		t.Fatalf("show allocations -o json: %v\n%s", err, out)
	}
	a := as[0]["allocation"].(map[string]any)
	return a["id"].(string), a["contract_id"].(string)
}

func TestBuyAServiceUseItsCredentialsAndReleaseIt(t *testing.T) {
	t.Parallel()
	nw := nodetest.NewNetwork(t)
	capacity := nodetest.Capacity(provider.Capacity{Architecture: "amd64", CPU: 4000, Memory: 8 << 30, Pods: 40, Storage: 10 << 30})
	bob := nw.Start(node.Options{NodeID: "bob", Capacity: capacity, Blueprints: []*fluidos.ServiceBlueprint{kvservice.Blueprint("kv", 1)}})
	alice := nw.Start(node.Options{NodeID: "alice", Capacity: capacity, Peers: []string{bob.RearAddr()}})

	out, _, err := run(t, nw, alice, "create", "solver", "kv-1", "--type", "service", "--filter", "tags=kv", "--param", "password=cli-pass-123", "--allocate", "--watch")
	if err != nil {
		t.Fatalf("create solver --allocate --watch: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if last := lines[len(lines)-1]; !strings.Contains(lines[0], "ALLOCATION") || !strings.Contains(last, "SOLVED") || !strings.Contains(last, "ACTIVE") {
		t.Errorf("watched phases:\n%s", out)
	}
	id, contract := boughtAllocation(t, nw, alice)
	out, _, err = run(t, nw, alice, "show", "credentials", contract)
	if err != nil || !strings.Contains(out, "cli-pass-123") || !strings.Contains(out, "admin") || !strings.Contains(out, "http://") {
		t.Errorf("show credentials (%v):\n%s", err, out)
	}
	// A service comes with no kubeconfig: --kubeconfig says so and writes
	// nothing.
	file := filepath.Join(t.TempDir(), "kubeconfig")
	if _, _, err := run(t, nw, alice, "show", "credentials", contract, "--kubeconfig", file); err == nil || !strings.Contains(err.Error(), "carries no kubeconfig") {
		t.Errorf("show credentials --kubeconfig of a service: %v, want an error saying it carries no kubeconfig", err)
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Errorf("show credentials --kubeconfig of a service made %s: %v", file, err)
	}
	out, _, err = run(t, nw, bob, "show", "allocations", "-o", "yaml")
	if err != nil || !strings.Contains(out, "ALLOCATION_STATE_ACTIVE") || strings.Contains(out, "cli-pass-123") {
		t.Errorf("bob's allocations (%v): active, without the buyer's password, expected:\n%s", err, out)
	}
	if _, _, err := run(t, nw, bob, "show", "credentials", id); err == nil {
		t.Error("the seller showed the buyer's credentials")
	}
	out, notes, err := run(t, nw, alice, "release", "contract", contract, "--reason", "done")
	if err != nil || !strings.Contains(notes, "release asked") {
		t.Fatalf("release contract: %v %s\n%s", err, notes, out)
	}
	out, _, err = run(t, nw, alice, "watch", "allocation", id)
	if err != nil || !strings.Contains(out, "RELEASED") {
		t.Errorf("watch allocation (%v):\n%s", err, out)
	}
}

func TestRunAnInstanceOnABoughtSlice(t *testing.T) {
	t.Parallel()
	nw, alice, _ := two(t)
	if out, _, err := run(t, nw, alice, "create", "solver", "--type", "k8slice", "--cpu", "1", "--memory", "1Gi", "--pods", "2", "--allocate", "--watch"); err != nil {
		t.Fatalf("create solver: %v\n%s", err, out)
	}
	_, contract := boughtAllocation(t, nw, alice)
	out, _, err := run(t, nw, alice, "create", "instance", "web", "--contract", contract, "--image", "kv", "--cpu", "500m", "--memory", "64Mi",
		"--port", "8080/http", "--env", "KV_PASSWORD=slice-pass-1", "--health-path", "/healthz")
	if err != nil || !strings.Contains(out, "READY") || !strings.Contains(out, "8080/http->") {
		t.Fatalf("create instance (%v):\n%s", err, out)
	}
	if out, _, err = run(t, nw, alice, "show", "instances", "--contract", contract); err != nil || !strings.Contains(out, "web") {
		t.Errorf("show instances (%v):\n%s", err, out)
	}
	if _, _, err := run(t, nw, alice, "create", "instance", "x", "--contract", contract, "--image", "nope", "--cpu", "1", "--memory", "1Mi"); err == nil ||
		!strings.Contains(err.Error(), "catalog") {
		t.Errorf("an image outside the seller's catalog: %v", err)
	}
	if _, notes, err := run(t, nw, alice, "delete", "instance", "web", "--contract", contract); err != nil || !strings.Contains(notes, "DELETE_DONE") {
		t.Errorf("delete instance: %v %s", err, notes)
	}
}
