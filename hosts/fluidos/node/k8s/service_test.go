package k8s_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/hosts/fluidos/allocator"
	"github.com/edgekit/edgekit/hosts/fluidos/node"
	"github.com/edgekit/edgekit/hosts/fluidos/nodetest"
	"github.com/edgekit/edgekit/internal/testenv/logbuf"
)

// serviceFlavor is bob's Service flavor of blueprint id, as bob lists it.
func serviceFlavor(t *testing.T, ctx context.Context, bob *nodetest.Node, id string) *fluidos.Flavor {
	t.Helper()
	fs, err := bob.Flavors().ListFlavors(ctx, &fluidos.ListFlavorsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fs.GetFlavors() {
		if f.GetService().GetBlueprintId() == id {
			return f
		}
	}
	t.Fatalf("bob publishes no Service flavor of blueprint %s: %v", id, fs.GetFlavors())
	return nil
}

// TestReferenceFormatServiceOnKubernetes: bob's cloudlet is a Kubernetes
// cluster and bob is given a database-like blueprint written in the
// FLUIDOS reference's format; broken ones are refused at load, naming the
// template and the document. It is published as a Service flavor; alice
// buys it with a password holding '&' and '<'; its objects are applied
// into a namespace of the contract, labelled with the contract, with the
// password unchanged; the allocation is ACTIVE once its Deployment's pods
// run; alice's credentials name the endpoint Service by its cluster DNS
// name, and bob's API does not show them. The release removes the
// namespace and everything in it, and puts the service back on sale.
func TestReferenceFormatServiceOnKubernetes(t *testing.T) {
	env := testEnv(t)
	ctx := ctxT(t)
	admin, err := k8sAdmin(env)
	if err != nil {
		t.Fatal(err)
	}
	var bobLog logbuf.Buffer
	nw := nodetest.NewNetwork(t)
	bob := startSeller(t, env, nw, node.Options{NodeID: "bob", HealthInterval: 300 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(&bobLog, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	alice := nw.Start(node.Options{NodeID: "alice", Peers: []string{bob.RearAddr()}})
	blueprints := fluidos.NewServiceBlueprintServiceClient(bob.Conn())

	// Broken templates are refused at load, naming template and document.
	for _, c := range []struct {
		name  string
		edit  func(string) string
		wants []string
	}{
		{"unknown placeholder", func(s string) string { return strings.Replace(s, "{{ .password }}", "{{ .pasword }}", 1) },
			[]string{`template "mysql"`, "{{ .pasword }}"}},
		{"no kind", func(s string) string { return strings.Replace(s, "kind: Service\n", "", 1) },
			[]string{`template "mysql"`, "document 2", "no kind"}},
	} {
		bp := nodetest.RefDatabaseBlueprint("broken", 1)
		bp.Templates[0].ServiceData = c.edit(bp.Templates[0].ServiceData)
		_, err := blueprints.CreateServiceBlueprint(ctx, &fluidos.CreateServiceBlueprintRequest{Blueprint: bp})
		if status.Code(err) != codes.InvalidArgument {
			t.Fatalf("%s: %v, want InvalidArgument", c.name, err)
		}
		for _, w := range c.wants {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v does not say %q", c.name, err, w)
			}
		}
	}
	if _, err := blueprints.CreateServiceBlueprint(ctx, &fluidos.CreateServiceBlueprintRequest{Blueprint: nodetest.RefDatabaseBlueprint("mysql", 1)}); err != nil {
		t.Fatal(err)
	}
	if f := serviceFlavor(t, ctx, bob, "mysql"); f.GetService().GetCategory() != allocator.CategoryDatabase || !f.GetAvailability() {
		t.Fatalf("bob's flavor of the blueprint %v", f)
	}

	const password = `s3cr&t<pass>`
	created, err := alice.Solvers().CreateSolver(ctx, &fluidos.CreateSolverRequest{Solver: &fluidos.Solver{
		Selector: &fluidos.Selector{Filter: &fluidos.Selector_Service{Service: &fluidos.ServiceSelector{Tags: []string{"mysql"}}}},
		Configuration: &fluidos.Configuration{Spec: &fluidos.Configuration_Service{Service: &fluidos.ServiceConfiguration{
			Parameters: map[string]string{"username": "alice", "password": password, "database": "shop"}}}},
		FindCandidate: true, ReserveAndBuy: true, EstablishPeering: true,
	}})
	if err != nil {
		t.Fatal(err)
	}
	st := alice.WaitSolver(created.GetSolver().GetId(), 2*time.Minute).GetStatus()
	if st.GetSolverPhase() != fluidos.Phase_PHASE_SOLVED {
		t.Fatalf("solver ended %v", st)
	}
	aid, contract := st.GetAllocationId(), st.GetContractId()
	active := bob.WaitAllocation(nodetest.SoldID(aid), fluidos.ContractRole_CONTRACT_ROLE_SOLD, time.Minute, "ACTIVE",
		nodetest.InState(fluidos.AllocationState_ALLOCATION_STATE_ACTIVE))
	// Health checks keep finding it healthy: no restart.
	since := active.GetStatus().GetLastHealthyTime().AsTime().Add(time.Second)
	bob.WaitAllocation(nodetest.SoldID(aid), fluidos.ContractRole_CONTRACT_ROLE_SOLD, time.Minute, "found healthy by later health checks, never restarted",
		func(a *fluidos.Allocation) bool {
			s := a.GetStatus()
			if s.GetRestarts() != 0 || s.GetState() != fluidos.AllocationState_ALLOCATION_STATE_ACTIVE {
				t.Fatalf("the service after a health check: %v", s)
			}
			return s.GetLastHealthyTime().AsTime().After(since)
		})
	if f := serviceFlavor(t, ctx, bob, "mysql"); f.GetAvailability() {
		t.Errorf("the flavor of a blueprint of one instance, sold: still available (%v)", f.GetService())
	}

	got, err := alice.Allocations().GetCredentials(ctx, &fluidos.GetCredentialsRequest{Id: aid})
	if err != nil {
		t.Fatal(err)
	}
	creds := got.GetCredentials()
	host, _, _ := strings.Cut(creds.GetEndpoints(), ":")
	svc, ns, _ := strings.Cut(host, ".")
	ns, _, _ = strings.Cut(ns, ".")
	if creds.GetEndpoints() != "db-service."+ns+".svc.cluster.local:3306" || ns == "" || creds.GetUsername() != "alice" ||
		creds.GetPassword() != password || creds.GetDatabase() != "shop" || svc != "db-service" {
		t.Fatalf("alice's credentials: endpoints %q username %q password same %v database %q",
			creds.GetEndpoints(), creds.GetUsername(), creds.GetPassword() == password, creds.GetDatabase())
	}
	soldView, err := bob.Allocations().GetAllocation(ctx, &fluidos.GetAllocationRequest{Id: nodetest.SoldID(aid), Role: fluidos.ContractRole_CONTRACT_ROLE_SOLD})
	if err != nil {
		t.Fatal(err)
	}
	if soldView.GetAllocation().GetCredentials().GetPassword() != "" {
		t.Error("bob's API shows the service's password")
	}

	// What the cluster holds: the blueprint's objects in the contract's
	// namespace, labelled with the contract, the password unchanged, the
	// Deployment available.
	sel := metav1.ListOptions{LabelSelector: allocator.LabelContract + "=" + nodetest.SoldID(contract)}
	secrets, err := admin.CoreV1().Secrets(ns).List(ctx, sel)
	if err != nil || len(secrets.Items) != 1 || secrets.Items[0].Name != "db-credentials" {
		t.Fatalf("secrets of the contract in %s: %v, %v", ns, secrets, err)
	}
	if d := secrets.Items[0].Data; string(d["password"]) != password || string(d["username"]) != "alice" || string(d["database"]) != "shop" {
		t.Errorf("the Secret's password arrived changed (same: %v), username %q, database %q", string(d["password"]) == password, d["username"], d["database"])
	}
	svcs, err := admin.CoreV1().Services(ns).List(ctx, sel)
	if err != nil || len(svcs.Items) != 1 || svcs.Items[0].Name != "db-service" || svcs.Items[0].Spec.Ports[0].Port != 3306 {
		t.Fatalf("services of the contract in %s: %v, %v", ns, svcs, err)
	}
	deps, err := admin.AppsV1().Deployments(ns).List(ctx, sel)
	if err != nil || len(deps.Items) != 1 || deps.Items[0].Name != "db" || deps.Items[0].Status.AvailableReplicas != 1 {
		t.Fatalf("deployments of the contract in %s: %v, %v", ns, deps, err)
	}
	if strings.Contains(bobLog.String(), password) {
		t.Error("bob logged the service's password")
	}

	// alice releases: the namespace and everything in it is gone, and the
	// service is on sale again.
	if _, err := alice.Contracts().ReleaseContract(ctx, &fluidos.ReleaseContractRequest{Id: contract}); err != nil {
		t.Fatal(err)
	}
	bob.WaitAllocation(nodetest.SoldID(aid), fluidos.ContractRole_CONTRACT_ROLE_SOLD, time.Minute, "RELEASED",
		nodetest.InState(fluidos.AllocationState_ALLOCATION_STATE_RELEASED))
	if _, err := admin.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the service's namespace after the release: %v, want not found", err)
	}
	if l, err := admin.AppsV1().Deployments("").List(ctx, sel); err != nil || len(l.Items) != 0 {
		t.Errorf("deployments of the contract after the release: %d, %v", len(l.Items), err)
	}
	if f := serviceFlavor(t, ctx, bob, "mysql"); !f.GetAvailability() {
		t.Errorf("the flavor after the release: not available (%v)", f.GetService())
	}
}
