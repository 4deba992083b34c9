package k8s_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/hosts/fluidos/node"
	"github.com/edgekit/edgekit/hosts/fluidos/nodetest"
	"github.com/edgekit/edgekit/internal/cli/fluidoscmd"
)

// refResource is RefDatabaseBlueprint's manifests as the FLUIDOS
// reference writes a blueprint: a ServiceBlueprint resource whose spec
// wraps the fields, with no configuration schema.
func refResource(id string) string {
	indented := "        " + strings.ReplaceAll(strings.TrimSuffix(nodetest.RefDatabaseManifests, "\n"), "\n", "\n        ")
	return `apiVersion: nodecore.fluidos.eu/v1alpha1
kind: ServiceBlueprint
metadata:
  name: ` + id + `
spec:
  name: MySQL
  category: database
  tags: [mysql]
  hostingPolicies: [Provider]
  maxInstances: 1
  templates:
    - name: mysql
      serviceData: |
` + indented + "\n"
}

// TestReferenceServiceHealthAfterActive: bob's cloudlet is a Kubernetes
// cluster; its database-like blueprint is given as the reference's
// ServiceBlueprint resource through edgectl. alice buys it; once ACTIVE,
// its Deployment is scaled to 0, then deleted, behind bob's back: each
// time bob's health check sees it, restarts it (the manifests applied
// again) and the service is ACTIVE again with its Deployment available.
// bob restarts while the service is ACTIVE: it stays ACTIVE, not
// restarted, with the same objects and alice's credentials, and later
// health checks keep finding it healthy.
func TestReferenceServiceHealthAfterActive(t *testing.T) {
	env := testEnv(t)
	ctx := ctxT(t)
	admin, err := k8sAdmin(env)
	if err != nil {
		t.Fatal(err)
	}
	nw := nodetest.NewNetwork(t)
	bob := startSeller(t, env, nw, node.Options{NodeID: "bob", HealthInterval: 300 * time.Millisecond})
	alice := nw.Start(node.Options{NodeID: "alice", Peers: []string{bob.RearAddr()}})

	file := filepath.Join(t.TempDir(), "blueprint.yaml")
	if err := os.WriteFile(file, []byte(refResource("mysql-ref")), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, notes bytes.Buffer
	cmd := fluidoscmd.NewCommand(fluidoscmd.Options{Out: &out, ErrOut: &notes})
	cmd.SetArgs([]string{"--node", bob.Options().APIListen, "--dev-tls", nw.CADir(), "--timeout", "60s",
		"create", "blueprint", "-f", file})
	if err := cmd.ExecuteContext(ctx); err != nil {
		t.Fatalf("edgectl fluidos create blueprint -f (a reference resource): %v\n%s", err, notes.String())
	}
	if f := serviceFlavor(t, ctx, bob, "mysql-ref"); !f.GetAvailability() {
		t.Fatalf("bob's flavor of the reference resource: %v", f)
	}

	db := buyDatabase(t, ctx, alice, "alice")
	sold := nodetest.SoldID(db.aid)
	bob.WaitAllocation(sold, fluidos.ContractRole_CONTRACT_ROLE_SOLD, time.Minute, "ACTIVE",
		nodetest.InState(fluidos.AllocationState_ALLOCATION_STATE_ACTIVE))
	got, err := alice.Allocations().GetCredentials(ctx, &fluidos.GetCredentialsRequest{Id: db.aid})
	if err != nil {
		t.Fatal(err)
	}
	endpoints := got.GetCredentials().GetEndpoints()
	host, _, _ := strings.Cut(endpoints, ":")
	_, ns, _ := strings.Cut(host, ".")
	ns, _, _ = strings.Cut(ns, ".")
	if ns == "" || !strings.HasPrefix(endpoints, "db-service.") {
		t.Fatalf("alice's endpoints %q", endpoints)
	}

	// restartedAgain waits until bob has restarted the service n times in
	// all and it is ACTIVE again, its Deployment available.
	restartedAgain := func(what string, n uint32) {
		t.Helper()
		bob.WaitAllocation(sold, fluidos.ContractRole_CONTRACT_ROLE_SOLD, time.Minute, what+": restarted and ACTIVE again",
			func(a *fluidos.Allocation) bool {
				s := a.GetStatus()
				if s.GetState() == fluidos.AllocationState_ALLOCATION_STATE_ERROR {
					t.Fatalf("%s: the service failed: %v", what, s)
				}
				return s.GetRestarts() >= n && s.GetState() == fluidos.AllocationState_ALLOCATION_STATE_ACTIVE
			})
		d, err := admin.AppsV1().Deployments(ns).Get(ctx, "db", metav1.GetOptions{})
		if err != nil || d.Spec.Replicas == nil || *d.Spec.Replicas != 1 || d.Status.AvailableReplicas != 1 {
			t.Fatalf("%s: the Deployment after the restart: %v, %v", what, d.Status, err)
		}
	}
	if _, err := admin.AppsV1().Deployments(ns).Patch(ctx, "db", types.MergePatchType, []byte(`{"spec":{"replicas":0}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	restartedAgain("scaled to 0", 1)
	if err := admin.AppsV1().Deployments(ns).Delete(ctx, "db", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	restartedAgain("deleted", 2)

	// bob restarts while the service is ACTIVE: it keeps it.
	before, err := admin.AppsV1().Deployments(ns).Get(ctx, "db", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bob.Restart()
	restartedAt := time.Now()
	bob.WaitAllocation(sold, fluidos.ContractRole_CONTRACT_ROLE_SOLD, time.Minute, "found healthy after bob's restart",
		func(a *fluidos.Allocation) bool {
			s := a.GetStatus()
			if s.GetRestarts() != 2 || s.GetState() != fluidos.AllocationState_ALLOCATION_STATE_ACTIVE {
				t.Fatalf("the service after bob's restart: %v", s)
			}
			return s.GetLastHealthyTime().AsTime().After(restartedAt)
		})
	d, err := admin.AppsV1().Deployments(ns).Get(ctx, "db", metav1.GetOptions{})
	if err != nil || d.UID != before.UID || d.Status.AvailableReplicas != 1 {
		t.Fatalf("the Deployment after bob's restart: same %v, %v, %v", err == nil && d.UID == before.UID, d.Status, err)
	}
	got, err = alice.Allocations().GetCredentials(ctx, &fluidos.GetCredentialsRequest{Id: db.aid})
	if err != nil || got.GetCredentials().GetEndpoints() != endpoints || got.GetCredentials().GetPassword() != "alice-s3cr&t" {
		t.Fatalf("alice's credentials after bob's restart: endpoints %q, %v", got.GetCredentials().GetEndpoints(), err)
	}

	if _, err := alice.Contracts().ReleaseContract(ctx, &fluidos.ReleaseContractRequest{Id: db.contract}); err != nil {
		t.Fatal(err)
	}
	bob.WaitAllocation(sold, fluidos.ContractRole_CONTRACT_ROLE_SOLD, time.Minute, "RELEASED",
		nodetest.InState(fluidos.AllocationState_ALLOCATION_STATE_RELEASED))
	if _, err := admin.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the service's namespace after the release: %v, want not found", err)
	}
}
