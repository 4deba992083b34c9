package node_test

import (
	"bytes"
	"path/filepath"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/edgekit/edgekit/atrest"
	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/hosts/fluidos/node"
	"github.com/edgekit/edgekit/hosts/fluidos/nodetest"
	"github.com/edgekit/edgekit/internal/kvservice"
	"github.com/edgekit/edgekit/internal/store"
)

// A service bought with a planted password leaves the password and the
// contract's credentials in no raw value of either node's etcd, yet each
// node's store reads them back with the node's key file.
func TestNodesStoreSecretsEncrypted(t *testing.T) {
	t.Parallel()
	nw := nodetest.NewNetwork(t)
	kv := kvservice.Blueprint("kv", 1)
	bob := nw.Start(node.Options{NodeID: "bob", Capacity: capacity("amd64"), Blueprints: []*fluidos.ServiceBlueprint{kv}})
	alice := nw.Start(node.Options{NodeID: "alice", Capacity: capacity("amd64"), Peers: []string{bob.RearAddr()}})
	ctx := ctxT(t)
	const password = "PlantedSecretPassword77"
	sel := &fluidos.Selector{Filter: &fluidos.Selector_Service{Service: &fluidos.ServiceSelector{Category: &fluidos.StringFilter{Filter: &fluidos.StringFilter_Exact{Exact: "database"}}}}}
	cfg := &fluidos.Configuration{Spec: &fluidos.Configuration_Service{Service: &fluidos.ServiceConfiguration{Parameters: map[string]string{"password": password}}}}
	created, err := alice.Solvers().CreateSolver(ctx, &fluidos.CreateSolverRequest{Solver: buy(sel, cfg)})
	if err != nil {
		t.Fatal(err)
	}
	s := alice.WaitSolver(created.GetSolver().GetId(), 30*time.Second)
	if s.GetStatus().GetSolverPhase() != fluidos.Phase_PHASE_SOLVED {
		t.Fatalf("solver ended %v", s.GetStatus())
	}
	got, err := alice.Contracts().GetContract(ctx, &fluidos.GetContractRequest{Id: s.GetStatus().GetContractId()})
	if err != nil {
		t.Fatal(err)
	}
	secrets := []string{password}
	if c := got.GetContract().GetPeeringTargetCredentials(); c.GetKubeconfig() != "" {
		secrets = append(secrets, c.GetKubeconfig())
	}
	if c := got.GetContract().GetPeeringTargetCredentials(); c.GetToken() != "" {
		secrets = append(secrets, c.GetToken())
	}

	for _, n := range []*nodeHandle{{"alice", alice.Running().Node.Store.Client(), alice.Options().DataDir}, {"bob", bob.Running().Node.Store.Client(), bob.Options().DataDir}} {
		// The node's own etcd client: its etcd authenticates the node.
		cli := n.client
		resp, err := cli.Get(ctx, store.Root, clientv3.WithPrefix())
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Kvs) == 0 {
			t.Fatalf("%s's etcd holds nothing under %s", n.id, store.Root)
		}
		sealed := 0
		for _, kv := range resp.Kvs {
			if atrest.IsSealed(kv.Value) {
				sealed++
			}
			for _, sec := range secrets {
				if bytes.Contains(kv.Value, []byte(sec)) {
					t.Errorf("%s's etcd value of %s holds a secret in clear", n.id, kv.Key)
				}
			}
		}
		if sealed == 0 {
			t.Errorf("%s's etcd holds no sealed value", n.id)
		}
		// The node's store reads them with the node's key file.
		kr, err := atrest.OpenKeyFile(filepath.Join(n.dataDir, atrest.DefaultKeyFileName))
		if err != nil {
			t.Fatal(err)
		}
		st, err := store.New(cli, n.id, store.WithEncryption(atrest.NewEnvelope(kr)))
		if err != nil {
			t.Fatal(err)
		}
		if n.id == "alice" {
			solvers, _, err := store.NewKind[*fluidos.Solver](st).List(ctx)
			if err != nil || len(solvers) != 1 || solvers[0].GetConfiguration().GetService().GetParameters()["password"] != password {
				t.Errorf("alice's solvers read back: %v, %v", solvers, err)
			}
		} else {
			contracts, _, err := store.NewKind[*fluidos.Contract](st).List(ctx)
			if err != nil || len(contracts) != 1 || contracts[0].GetConfiguration().GetService().GetParameters()["password"] != password {
				t.Errorf("bob's contracts read back: %v, %v", contracts, err)
			}
		}
	}
}

type nodeHandle struct {
	id      string
	client  *clientv3.Client
	dataDir string
}
