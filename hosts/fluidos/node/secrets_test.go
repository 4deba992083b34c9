package node_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/hosts/fluidos/node"
	"github.com/edgekit/edgekit/hosts/fluidos/nodetest"
	"github.com/edgekit/edgekit/hosts/fluidos/provider"
	"github.com/edgekit/edgekit/internal/kvservice"
)

// storedSecrets returns, for every record of n's etcd that holds one of
// secrets, its key and the secrets found: in the raw value as stored, and
// in every string of the value decoded as JSON (an escaped secret too).
func storedSecrets(t *testing.T, n *nodetest.Node, secrets []string) map[string][]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st := n.Running().Node.Store
	resp, err := st.Client().Get(ctx, "", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	found := map[string][]string{}
	for _, kv := range resp.Kvs {
		// Records are sealed at rest: read them as the node does.
		value, err := st.Plaintext(string(kv.Key), kv.Value)
		if err != nil {
			t.Fatal(err)
		}
		text := string(value)
		var doc any
		if json.Unmarshal(value, &doc) == nil {
			text += "\n" + strings.Join(jsonStrings(doc, nil), "\n")
		}
		for _, s := range secrets {
			if strings.Contains(text, s) {
				found[string(kv.Key)] = append(found[string(kv.Key)], s)
			}
		}
	}
	return found
}

// jsonStrings appends every string of a decoded JSON value, keys too.
func jsonStrings(v any, out []string) []string {
	switch x := v.(type) {
	case string:
		out = append(out, x)
	case []any:
		for _, e := range x {
			out = jsonStrings(e, out)
		}
	case map[string]any:
		for k, e := range x {
			out = jsonStrings(e, append(out, k))
		}
	}
	return out
}

// credentials are what n's API hands over for the allocation or
// contract id n bought.
func credentials(t *testing.T, n *nodetest.Node, id string) *fluidos.PeeringTargetCredentials {
	t.Helper()
	resp, err := n.Allocations().GetCredentials(ctxT(t), &fluidos.GetCredentialsRequest{Id: id})
	if err != nil {
		t.Fatalf("credentials of %s from %s: %v", id, n.ID(), err)
	}
	return resp.GetCredentials()
}

// secretsOf are the secrets in credentials a seller handed over.
func secretsOf(cr *fluidos.PeeringTargetCredentials) []string {
	var out []string
	for _, s := range []string{cr.GetPassword(), cr.GetToken(), cr.GetKubeconfig()} {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// TestReleasedContractsLeaveNoSecretInEitherStore trades a service (its
// password a configuration parameter) and a K8Slice (a token) between two
// nodes, releases the first by its buyer and the second by its seller,
// and then reads every record of both nodes' etcd: none holds the planted
// password or a credential the seller handed over, while the records that
// accounting needs remain.
func TestReleasedContractsLeaveNoSecretInEitherStore(t *testing.T) {
	t.Parallel()
	const password = "Planted-Pass-5521"
	nw := nodetest.NewNetwork(t)
	bob := nw.Start(node.Options{NodeID: "bob", Capacity: capacity("amd64"), Blueprints: []*fluidos.ServiceBlueprint{kvservice.Blueprint("kv", 1)}})
	alice := nw.Start(node.Options{NodeID: "alice", Capacity: capacity("amd64"), Peers: []string{bob.RearAddr()}})
	ctx := ctxT(t)

	svc := solve(t, alice, allocate(kvSelector(), kvConfig(map[string]string{"username": "alice", "password": password})))
	slice := solve(t, alice, allocate(cpuAtLeast(1000), &fluidos.Configuration{Spec: &fluidos.Configuration_K8Slice{
		K8Slice: &fluidos.K8SliceConfiguration{Cpu: 1000, Memory: 1 << 30, Pods: 5}}}))
	secrets := []string{password}
	var contracts []string
	for _, s := range []*fluidos.Solver{svc, slice} {
		st := s.GetStatus()
		if st.GetSolverPhase() != fluidos.Phase_PHASE_SOLVED {
			t.Fatalf("solver %s ended %v", s.GetId(), st)
		}
		alice.WaitAllocation(st.GetAllocationId(), bought, 20*time.Second, "ACTIVE", nodetest.InState(fluidos.AllocationState_ALLOCATION_STATE_ACTIVE))
		// What the buyer got, asked of its API.
		got := secretsOf(credentials(t, alice, st.GetAllocationId()))
		if len(got) == 0 {
			t.Fatalf("the buyer got no credentials for %s", st.GetContractId())
		}
		// The seller's API hands over none of its buyer's credentials.
		if _, err := bob.Allocations().GetCredentials(ctx, &fluidos.GetCredentialsRequest{Id: nodetest.SoldID(st.GetContractId())}); status.Code(err) != codes.PermissionDenied {
			t.Errorf("the seller asked for its buyer's credentials: %v, want PermissionDenied", err)
		}
		secrets = append(secrets, got...)
		contracts = append(contracts, st.GetContractId())
	}
	// The scan finds the secrets while the contracts run, on both sides.
	for _, n := range []*nodetest.Node{alice, bob} {
		if found := storedSecrets(t, n, secrets); len(found) == 0 {
			t.Fatalf("%s's store holds none of the secrets before the release: the scan finds nothing", n.ID())
		}
	}

	if _, err := alice.Contracts().ReleaseContract(ctx, &fluidos.ReleaseContractRequest{Id: contracts[0], Role: bought}); err != nil {
		t.Fatal(err)
	}
	if _, err := bob.Contracts().ReleaseContract(ctx, &fluidos.ReleaseContractRequest{Id: nodetest.SoldID(contracts[1]), Role: sold, Reason: "taken back"}); err != nil {
		t.Fatal(err)
	}
	released := nodetest.InState(fluidos.AllocationState_ALLOCATION_STATE_RELEASED)
	for _, c := range contracts {
		aid := provider.AllocationID(c)
		bob.WaitAllocation(nodetest.SoldID(aid), sold, 30*time.Second, "RELEASED", released)
		alice.WaitAllocation(aid, bought, 30*time.Second, "RELEASED", released)
	}
	// The buyer forgets once it hears of the end: wait for its records to
	// settle (a bounded poll), then look at both stores.
	deadline := time.Now().Add(20 * time.Second)
	for len(storedSecrets(t, alice, secrets)) > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	for _, n := range []*nodetest.Node{alice, bob} {
		for key, found := range storedSecrets(t, n, secrets) {
			t.Errorf("%s keeps %q after the release in %s", n.ID(), found, key)
		}
	}

	// The buyer's API says the credentials are gone.
	for _, c := range contracts {
		if _, err := alice.Allocations().GetCredentials(ctx, &fluidos.GetCredentialsRequest{Id: c}); status.Code(err) != codes.FailedPrecondition ||
			!strings.Contains(err.Error(), "dropped") {
			t.Errorf("credentials of the released %s: %v, want FailedPrecondition saying they were dropped", c, err)
		}
	}

	// Accounting keeps its records: both contracts, released, with their
	// parties, flavor and price, on both sides.
	for _, n := range []*nodetest.Node{alice, bob} {
		for _, c := range contracts {
			if n == bob {
				c = nodetest.SoldID(c)
			}
			got, err := n.Contracts().GetContract(ctx, &fluidos.GetContractRequest{Id: c})
			if err != nil {
				t.Fatal(err)
			}
			k := got.GetContract()
			if k.GetState() != fluidos.ContractState_CONTRACT_STATE_RELEASED || k.GetBuyer().GetNodeId() != "alice" ||
				k.GetSeller().GetNodeId() != "bob" || k.GetFlavor().GetId() == "" || k.GetFlavor().GetPrice() == nil ||
				k.GetCreatedAt() == nil || k.GetReleasedAt() == nil || k.GetTransactionId() == "" {
				t.Errorf("%s's record of contract %s lost what accounting needs: %v", n.ID(), c, k)
			}
		}
	}
}

// TestRefusedSolverLeavesNoSecret has a seller refuse a service (a hosting
// policy it does not offer): the failed solver and its reservation keep
// no password on the buyer's side, and the seller keeps none.
func TestRefusedSolverLeavesNoSecret(t *testing.T) {
	t.Parallel()
	const password = "Refused-Pass-8830"
	nw := nodetest.NewNetwork(t)
	bob := nw.Start(node.Options{NodeID: "bob", Capacity: capacity("amd64"), Blueprints: []*fluidos.ServiceBlueprint{kvservice.Blueprint("kv", 0)}})
	alice := nw.Start(node.Options{NodeID: "alice", Capacity: capacity("amd64"), Peers: []string{bob.RearAddr()}})
	cfg := &fluidos.Configuration{Spec: &fluidos.Configuration_Service{Service: &fluidos.ServiceConfiguration{
		Parameters: map[string]string{"password": password}, HostingPolicy: fluidos.HostingPolicy_HOSTING_POLICY_CONSUMER}}}
	s := solve(t, alice, allocate(kvSelector(), cfg))
	if st := s.GetStatus(); st.GetSolverPhase() != fluidos.Phase_PHASE_FAILED || st.GetReservationPhase() != fluidos.Phase_PHASE_FAILED || st.GetReservationId() == "" {
		t.Fatalf("solver ended %v, want its reservation refused", st)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(storedSecrets(t, alice, []string{password})) > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	for _, n := range []*nodetest.Node{alice, bob} {
		for key, found := range storedSecrets(t, n, []string{password}) {
			t.Errorf("%s keeps %q after the refusal in %s", n.ID(), found, key)
		}
	}
	// The failed solver is still there to be looked at, with its selector.
	got, err := alice.Solvers().GetSolver(ctxT(t), &fluidos.GetSolverRequest{Id: s.GetId()})
	if err != nil || got.GetSolver().GetSelector().GetService() == nil || got.GetSolver().GetStatus().GetSolverPhase() != fluidos.Phase_PHASE_FAILED {
		t.Errorf("the failed solver (%v): %v", err, got.GetSolver())
	}
}
