package fluidoscmd_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/hosts/fluidos/node"
	"github.com/edgekit/edgekit/hosts/fluidos/nodetest"
	"github.com/edgekit/edgekit/hosts/fluidos/provider"
	"github.com/edgekit/edgekit/internal/kvservice"
	"github.com/edgekit/edgekit/platforms/fake"
)

// TestOnlyShowCredentialsShowsSecrets buys a service (its password a
// parameter) and a K8Slice (a token, an instance with a secret in its
// environment), then runs every show kind, and the watches, on the buyer
// and on the seller, in every output format: none prints the planted
// secrets or a credential the seller handed over; "show credentials"
// prints them, on the buyer only.
func TestOnlyShowCredentialsShowsSecrets(t *testing.T) {
	t.Parallel()
	const password, envSecret = "Cli-Planted-Pass-3310", "Cli-Planted-Env-7702"
	nw := nodetest.NewNetwork(t)
	capacity := nodetest.Capacity(provider.Capacity{Architecture: "amd64", CPU: 4000, Memory: 8 << 30, Pods: 40, Storage: 10 << 30})
	bob := nw.Start(node.Options{NodeID: "bob", Capacity: capacity, Blueprints: []*fluidos.ServiceBlueprint{kvservice.Blueprint("kv", 1)}})
	alice := nw.Start(node.Options{NodeID: "alice", Capacity: capacity, Peers: []string{bob.RearAddr()}})

	if out, _, err := run(t, nw, alice, "create", "solver", "kv-1", "--type", "service", "--filter", "tags=kv", "--param", "password="+password, "--allocate", "--watch"); err != nil {
		t.Fatalf("create solver kv-1: %v\n%s", err, out)
	}
	if out, _, err := run(t, nw, alice, "create", "solver", "slice-1", "--type", "k8slice", "--cpu", "1", "--memory", "1Gi", "--pods", "2", "--allocate", "--watch"); err != nil {
		t.Fatalf("create solver slice-1: %v\n%s", err, out)
	}
	if out, _, err := run(t, nw, alice, "create", "instance", "web", "--contract", "slice-1", "--image", "kv", "--cpu", "250m", "--memory", "32Mi",
		"--env", "KV_PASSWORD="+envSecret); err != nil {
		t.Fatalf("create instance: %v\n%s", err, out)
	}

	// The environment secret reached the seller's platform: the checks
	// below that no show prints it are about redaction, not about a value
	// that never travelled.
	if !sellerGaveEnv(bob, "KV_PASSWORD", envSecret) {
		t.Fatalf("no instance on the seller's platform was given KV_PASSWORD; the instance's secret never reached it")
	}

	// The credentials command shows them, by solver, contract or
	// allocation; the secrets it shows are searched for everywhere else.
	secrets := []string{password, envSecret}
	contracts := map[string]string{}
	for _, solver := range []string{"kv-1", "slice-1"} {
		out, _, err := run(t, nw, alice, "show", "credentials", solver, "-o", "json")
		var cr map[string]string
		if err != nil || json.Unmarshal([]byte(out), &cr) != nil {
			t.Fatalf("show credentials %s (%v):\n%s", solver, err, out)
		}
		for _, k := range []string{"password", "token", "kubeconfig"} {
			if cr[k] != "" {
				secrets = append(secrets, cr[k])
			}
		}
		out, _, err = run(t, nw, alice, "show", "solver", solver, "-o", "json")
		var sv struct {
			Status struct {
				ContractID string `json:"contract_id"`
			}
		}
		if err != nil || json.Unmarshal([]byte(out), &sv) != nil || sv.Status.ContractID == "" {
			t.Fatalf("show solver %s (%v):\n%s", solver, err, out)
		}
		contracts[solver] = sv.Status.ContractID
	}
	kvContract, sliceContract := contracts["kv-1"], contracts["slice-1"]
	for _, id := range []string{kvContract, provider.AllocationID(kvContract)} {
		if out, _, err := run(t, nw, alice, "show", "credentials", id); err != nil || !strings.Contains(out, password) {
			t.Errorf("show credentials %s (%v): the password expected:\n%s", id, err, out)
		}
	}
	if out, _, err := run(t, nw, alice, "show", "credentials", "slice-1", "-o", "yaml"); err != nil || !strings.Contains(out, "token:") {
		t.Errorf("show credentials of the slice (%v): its token expected:\n%s", err, out)
	}
	// The seller knows the contracts by its own ids.
	soldKV, soldSlice := nodetest.SoldID(kvContract), nodetest.SoldID(sliceContract)
	if _, _, err := run(t, nw, bob, "show", "credentials", soldKV); err == nil || !strings.Contains(err.Error(), "PermissionDenied") {
		t.Errorf("the seller's show credentials: %v, want PermissionDenied", err)
	}

	shows := map[*nodetest.Node][][]string{
		alice: {
			{"show", "solvers"}, {"show", "solver", "kv-1"}, {"show", "solver", "slice-1"},
			{"show", "contracts"}, {"show", "contract", kvContract}, {"show", "contract", sliceContract},
			{"show", "allocations"}, {"show", "allocation", kvContract}, {"show", "allocation", sliceContract},
			{"show", "discovery", "kv-1"}, {"show", "discovery", "slice-1"},
			{"show", "instances", "--contract", sliceContract}, {"show", "instances", "web", "--contract", sliceContract},
			{"show", "flavors"}, {"show", "flavors", "--peers"}, {"show", "blueprints"}, {"show", "peers"}, {"show", "node"},
			{"watch", "solver", "kv-1"}, {"watch", "solver", "slice-1"}, {"watch", "allocation", kvContract, "--timeout", "2s"},
		},
		bob: {
			{"show", "contracts"}, {"show", "contract", soldKV}, {"show", "contract", soldSlice},
			{"show", "allocations"}, {"show", "allocation", soldKV}, {"show", "allocation", soldSlice},
			{"show", "flavors"}, {"show", "blueprints"}, {"show", "blueprint", "kv"}, {"show", "solvers"}, {"show", "node"},
			{"watch", "allocation", soldSlice, "--timeout", "2s"},
		},
	}
	for n, cmds := range shows {
		for _, args := range cmds {
			for _, format := range []string{"table", "json", "yaml"} {
				out, notes, err := run(t, nw, n, append(args, "-o", format)...)
				if err != nil && !strings.Contains(err.Error(), "DeadlineExceeded") && !strings.Contains(err.Error(), "deadline exceeded") {
					t.Errorf("%s %q -o %s: %v", n.ID(), args, format, err)
				}
				if strings.TrimSpace(out) == "" {
					t.Errorf("%s %q -o %s printed nothing", n.ID(), args, format)
				}
				for _, s := range secrets {
					if strings.Contains(out, s) || strings.Contains(notes, s) {
						t.Errorf("%s %q -o %s shows the secret %q:\n%s", n.ID(), args, format, s, out)
					}
				}
			}
		}
	}
}

// sellerGaveEnv reports whether an instance on n's (fake) platform was
// given the environment variable name with value.
func sellerGaveEnv(n *nodetest.Node, name, value string) bool {
	p := n.Options().Platform.(*fake.Platform)
	for _, key := range p.AppInstKeys() {
		if st, ok := p.AppInst(key); ok && st.Env[name] == value {
			return true
		}
	}
	return false
}
