package node_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/fluidos/rear"
	"github.com/edgekit/edgekit/hosts/fluidos/node"
	"github.com/edgekit/edgekit/hosts/fluidos/nodetest"
	"github.com/edgekit/edgekit/hosts/fluidos/provider"
)

const payloads = "../../../fluidos/rear/testdata/reference/"

func payload(t *testing.T, name string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(payloads + name)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestEdgekitNodeBuysFromAReferenceNode: over plain HTTP, an edgekit
// solver discovers (falling back to the filters a reference node knows
// when it refuses a regex, and filtering the answer itself), reserves and
// buys from a reference-shaped provider.
func TestEdgekitNodeBuysFromAReferenceNode(t *testing.T) {
	t.Parallel()
	nw := nodetest.NewNetwork(t)
	ref, refused := referenceProvider(t)
	alice := nw.Start(node.Options{NodeID: "alice", Capacity: capacity("amd64"), InsecureREAR: true, Peers: []string{ref}})
	ctx := ctxT(t)
	sel := &fluidos.Selector{Filter: &fluidos.Selector_K8Slice{K8Slice: &fluidos.K8SliceSelector{
		Architecture: &fluidos.StringFilter{Filter: &fluidos.StringFilter_Regex{Regex: "amd.*"}},
		Cpu:          cpuAtLeast(1000).GetK8Slice().GetCpu(),
	}}}
	created, err := alice.Solvers().CreateSolver(ctx, &fluidos.CreateSolverRequest{Solver: buy(sel, partition(2000, 4<<30, 20))})
	if err != nil {
		t.Fatal(err)
	}
	s := alice.WaitSolver(created.GetSolver().GetId(), 30*time.Second)
	if s.GetStatus().GetSolverPhase() != fluidos.Phase_PHASE_SOLVED {
		t.Fatalf("solver against a reference node ended %v", s.GetStatus())
	}
	if refused.Load() == 0 {
		t.Error("the reference provider never refused the regex: the fallback was not exercised")
	}
	got, err := alice.Contracts().GetContract(ctx, &fluidos.GetContractRequest{Id: s.GetStatus().GetContractId()})
	if err != nil {
		t.Fatal(err)
	}
	c := got.GetContract()
	if c.GetSeller().GetNodeId() != "provider-9f2c" || !strings.Contains(credentials(t, alice, c.GetId()).GetKubeconfig(), "kind: Config") ||
		c.GetExtraInformation()["tier"] != "gold" || c.GetNetworkRequestsText() == "" {
		t.Errorf("the reference contract was not kept whole: %v", c)
	}
}

// TestReferenceNodeBuysFromAnEdgekitNode sends a reference consumer's
// requests (the recorded payloads) to an edgekit node on plain HTTP and
// reads its answers with the reference's JSON names only.
func TestReferenceNodeBuysFromAnEdgekitNode(t *testing.T) {
	t.Parallel()
	nw := nodetest.NewNetwork(t)
	bob := nw.Start(node.Options{NodeID: "bob", Capacity: capacity("amd64"), InsecureREAR: true})
	base := "http://" + bob.RearAddr()
	strict := func(r io.Reader, into any) error {
		dec := json.NewDecoder(r)
		dec.DisallowUnknownFields()
		return dec.Decode(into)
	}

	// The reference consumer's discovery, including its storage filter sent
	// without the "filter" prefix.
	resp, err := http.Get(base + "/api/v2/flavors/k8slice?filter%5Bcpu%5D%5Brange%5D%5Bmin%5D=1000m&%5Bstorage%5D%5Brange%5D%5Bmin%5D=1Gi")
	if err != nil {
		t.Fatal(err)
	}
	var flavors []rear.Flavor
	err = strict(resp.Body, &flavors)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || len(flavors) != 1 || flavors[0].FlavorID != provider.K8SliceFlavorID("bob") {
		t.Fatalf("discovery: %d %v %v", resp.StatusCode, err, flavors)
	}
	var data rear.K8Slice
	if err := strict(bytes.NewReader(flavors[0].Type.Data), &data); err != nil || data.Characteristics.CPU != "4" {
		t.Fatalf("k8slice data with reference names only: %v %v", err, data)
	}

	req := payload(t, "reserve_request_k8slice.json")
	req["flavorID"] = flavors[0].FlavorID
	delete(req["configuration"].(map[string]any)["data"].(map[string]any), "gpu") // bob has no GPU
	body, _ := json.Marshal(req)
	resp, err = http.Post(base+"/api/v2/reservations", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var tx rear.Transaction
	err = strict(resp.Body, &tx)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || tx.TransactionID == "" || tx.Buyer.NodeID != "consumer-41aa" || tx.ClusterID != "41aa-liqo" {
		t.Fatalf("reservation: %d %v %+v", resp.StatusCode, err, tx)
	}
	if _, err := time.Parse(time.RFC3339, tx.ExpirationTime); err != nil {
		t.Errorf("expirationTime %q: %v", tx.ExpirationTime, err)
	}
	body, _ = json.Marshal(payload(t, "purchase_request.json"))
	resp, err = http.Post(base+"/api/v2/transactions/"+tx.TransactionID+"/purchase", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var c rear.Contract
	err = strict(resp.Body, &c)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || c.TransactionID != tx.TransactionID || c.Buyer.NodeID != "consumer-41aa" || c.Seller.NodeID != "bob" {
		t.Fatalf("purchase: %d %v %+v", resp.StatusCode, err, c)
	}
	// The reference answers a missing flavor with 500; edgekit with 404.
	body, _ = json.Marshal(map[string]any{"flavorID": "nope", "buyerID": req["buyerID"]})
	resp, err = http.Post(base+"/api/v2/reservations", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("a missing flavor: %d, want 404", resp.StatusCode)
	}
}
