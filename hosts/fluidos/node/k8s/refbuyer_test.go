package k8s_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/hosts/fluidos/node"
	"github.com/edgekit/edgekit/hosts/fluidos/nodetest"
	"github.com/edgekit/edgekit/hosts/fluidos/provider"
	"github.com/edgekit/edgekit/platforms/kubernetes/slicetest"
)

// TestReferenceBuyerAllocatesWithTheContractsKubeconfig: carol buys a
// K8Slice of dave the way a reference buyer does (REAR JSON, no edgekit
// route after the purchase) and reads the kubeconfig from the purchase
// answer's peeringTargetCredentials.kubeconfig: with it she runs a
// Deployment in the slice, is confined to it, and the slice is isolated
// from other tenants. When dave ends the contract her kubeconfig stops
// working.
func TestReferenceBuyerAllocatesWithTheContractsKubeconfig(t *testing.T) {
	env := testEnv(t)
	ctx := ctxT(t)
	nw := nodetest.NewNetwork(t)
	dave := startSeller(t, env, nw, node.Options{NodeID: "dave"})
	tr := &http.Transport{TLSClientConfig: buyerTLS(t, nw, "carol")}
	t.Cleanup(tr.CloseIdleConnections)
	hc := &http.Client{Transport: tr, Timeout: 90 * time.Second}
	post := func(path string, body any, into any) {
		t.Helper()
		raw, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := hc.Post("https://"+dave.RearAddr()+path, "application/json", bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		got, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("POST %s: %d %s", path, resp.StatusCode, got)
		}
		if err := json.Unmarshal(got, into); err != nil {
			t.Fatalf("POST %s: %v", path, err)
		}
	}
	var txn struct {
		TransactionID string `json:"transactionID"`
	}
	post("/api/v2/reservations", map[string]any{
		"flavorID": provider.K8SliceFlavorID("dave"),
		"buyerID":  map[string]any{"ID": "carol", "IP": "127.0.0.1:1", "domain": "test", "additionalInformation": map[string]any{"liqoID": "carol-cluster"}},
		"configuration": map[string]any{"type": "k8slice", "data": map[string]any{
			"cpu": "1000m", "memory": "1Gi", "pods": "3"}},
	}, &txn)
	var contract struct {
		ContractID               string `json:"contractID"`
		PeeringTargetCredentials struct {
			ClusterID  string `json:"clusterID"`
			Kubeconfig string `json:"kubeconfig"`
		} `json:"peeringTargetCredentials"`
	}
	post(fmt.Sprintf("/api/v2/transactions/%s/purchase", txn.TransactionID), map[string]any{
		"liqoCredentials": map[string]any{"clusterID": "carol-cluster", "kubeconfig": ""},
	}, &contract)
	kubeconfig := contract.PeeringTargetCredentials.Kubeconfig
	if kubeconfig == "" {
		t.Fatalf("the purchase answer of contract %q carries no kubeconfig", contract.ContractID)
	}
	tenant, ns := slicetest.Client(t, []byte(kubeconfig))
	if err := slicetest.RunDeployment(ctx, tenant, ns, slicetest.Deployment("web", 2, "250m", "128Mi")); err != nil {
		t.Fatalf("carol's deployment in her slice: %v", err)
	}
	if _, err := slicetest.QuotaRefusal(ctx, tenant, ns, slicetest.Deployment("big", 1, "900m", "128Mi")); err != nil {
		t.Fatalf("a deployment beyond the slice: %v", err)
	}
	slicetest.CheckConfined(t, ctx, tenant, ns, "default")
	admin, err := k8sAdmin(env)
	if err != nil {
		t.Fatal(err)
	}
	checkIsolated(t, ctx, admin, ns)

	// The reference has no release route: the seller ends the contract
	// (as its lapse would).
	aid := provider.AllocationID(contract.ContractID)
	if _, err := dave.Running().Node.Provider.RequestRelease(ctx, aid, "the test is over"); err != nil {
		t.Fatal(err)
	}
	dave.WaitAllocation(aid, fluidos.ContractRole_CONTRACT_ROLE_SOLD, time.Minute, "RELEASED",
		nodetest.InState(fluidos.AllocationState_ALLOCATION_STATE_RELEASED))
	if err := slicetest.WaitUnauthorized(ctx, tenant, ns); err != nil {
		t.Fatalf("carol's kubeconfig after the release: %v", err)
	}
}
