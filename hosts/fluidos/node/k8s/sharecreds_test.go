package k8s_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8s "k8s.io/client-go/kubernetes"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/hosts/fluidos/allocator"
	"github.com/edgekit/edgekit/hosts/fluidos/node"
	"github.com/edgekit/edgekit/hosts/fluidos/nodetest"
	"github.com/edgekit/edgekit/internal/store"
	"github.com/edgekit/edgekit/internal/testenv/logbuf"
	"github.com/edgekit/edgekit/platforms/kubernetes/slicetest"
)

// bought is what a buyer bought: its allocation and contract IDs.
type bought struct{ aid, contract string }

// buy runs a solver of buyer that buys what selector and configuration
// describe, and returns what it bought.
func buy(t *testing.T, ctx context.Context, buyer *nodetest.Node, sel *fluidos.Selector, conf *fluidos.Configuration) bought {
	t.Helper()
	created, err := buyer.Solvers().CreateSolver(ctx, &fluidos.CreateSolverRequest{Solver: &fluidos.Solver{
		Selector: sel, Configuration: conf, FindCandidate: true, ReserveAndBuy: true, EstablishPeering: true,
	}})
	if err != nil {
		t.Fatal(err)
	}
	st := buyer.WaitSolver(created.GetSolver().GetId(), 2*time.Minute).GetStatus()
	if st.GetSolverPhase() != fluidos.Phase_PHASE_SOLVED {
		t.Fatalf("%s's solver ended %v", buyer.ID(), st)
	}
	return bought{aid: st.GetAllocationId(), contract: st.GetContractId()}
}

// buySlice buys a K8Slice of 1 CPU, 1Gi and 4 pods and returns a client
// of its kubeconfig and its namespace.
func buySlice(t *testing.T, ctx context.Context, buyer *nodetest.Node) (bought, k8s.Interface, string) {
	t.Helper()
	b := buy(t, ctx, buyer, &fluidos.Selector{FlavorType: fluidos.FlavorType_FLAVOR_TYPE_K8SLICE},
		&fluidos.Configuration{Spec: &fluidos.Configuration_K8Slice{K8Slice: &fluidos.K8SliceConfiguration{Cpu: 1000, Memory: 1 << 30, Pods: 4}}})
	got, err := buyer.Allocations().GetCredentials(ctx, &fluidos.GetCredentialsRequest{Id: b.aid})
	if err != nil {
		t.Fatal(err)
	}
	cs, ns := slicetest.Client(t, []byte(got.GetCredentials().GetKubeconfig()))
	return b, cs, ns
}

// buyDatabase buys the mysql service as user.
func buyDatabase(t *testing.T, ctx context.Context, buyer *nodetest.Node, user string) bought {
	t.Helper()
	return buy(t, ctx, buyer,
		&fluidos.Selector{Filter: &fluidos.Selector_Service{Service: &fluidos.ServiceSelector{Tags: []string{"mysql"}}}},
		&fluidos.Configuration{Spec: &fluidos.Configuration_Service{Service: &fluidos.ServiceConfiguration{
			Parameters: map[string]string{"username": user, "password": user + "-s3cr&t", "database": user + "db"}}}})
}

// TestServiceCredentialsInTheBuyersSlice: a buyer that holds a slice of
// bob (a Kubernetes cloudlet) and buys a reference-format service there
// also finds its credentials as a Secret in its slice, named after the
// contract and labelled with it, which it reads with its slice's
// kubeconfig and another tenant cannot; a buyer without a slice gets
// none anywhere, until he buys one. The service's release removes the Secret; a slice that
// ends first takes it along, and the service goes on without it.
func TestServiceCredentialsInTheBuyersSlice(t *testing.T) {
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
	if _, err := fluidos.NewServiceBlueprintServiceClient(bob.Conn()).CreateServiceBlueprint(ctx,
		&fluidos.CreateServiceBlueprintRequest{Blueprint: nodetest.RefDatabaseBlueprint("mysql", 3)}); err != nil {
		t.Fatal(err)
	}
	alice := nw.Start(node.Options{NodeID: "alice", Peers: []string{bob.RearAddr()}})
	carol := nw.Start(node.Options{NodeID: "carol", Peers: []string{bob.RearAddr()}})
	dave := nw.Start(node.Options{NodeID: "dave", Peers: []string{bob.RearAddr()}})

	_, aliceK8s, aliceNS := buySlice(t, ctx, alice)
	carolSlice, carolK8s, carolNS := buySlice(t, ctx, carol)
	aliceDB := buyDatabase(t, ctx, alice, "alice")
	daveDB := buyDatabase(t, ctx, dave, "dave")
	for _, b := range []bought{aliceDB, daveDB} {
		bob.WaitAllocation(nodetest.SoldID(b.aid), fluidos.ContractRole_CONTRACT_ROLE_SOLD, time.Minute, "ACTIVE",
			nodetest.InState(fluidos.AllocationState_ALLOCATION_STATE_ACTIVE))
	}

	// alice reads the Secret in her slice with her slice's kubeconfig: the
	// credentials she was handed.
	got, err := alice.Allocations().GetCredentials(ctx, &fluidos.GetCredentialsRequest{Id: aliceDB.aid})
	if err != nil {
		t.Fatal(err)
	}
	creds := got.GetCredentials()
	soldContract := nodetest.SoldID(aliceDB.contract)
	name := allocator.CredentialsSecretName(soldContract)
	sec, err := aliceK8s.CoreV1().Secrets(aliceNS).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("alice reading the Secret %s of her service's credentials in her slice %s: %v", name, aliceNS, err)
	}
	if d := sec.Data; string(d["endpoints"]) != creds.GetEndpoints() || creds.GetEndpoints() == "" || string(d["username"]) != "alice" ||
		string(d["password"]) != "alice-s3cr&t" || string(d["database"]) != "alicedb" {
		t.Errorf("the Secret holds endpoints %q (handed %q), username %q, password same %v, database %q",
			d["endpoints"], creds.GetEndpoints(), d["username"], string(d["password"]) == "alice-s3cr&t", d["database"])
	}
	if sec.Labels[allocator.LabelContract] != soldContract || sec.Labels[allocator.LabelServiceCredentials] != "true" {
		t.Errorf("the Secret's labels %v: want the contract %s and %s=true", sec.Labels, soldContract, allocator.LabelServiceCredentials)
	}
	// Another tenant cannot read it, and has none of her own.
	if _, err := carolK8s.CoreV1().Secrets(aliceNS).Get(ctx, name, metav1.GetOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("carol reading alice's Secret: %v, want forbidden", err)
	}
	credsSel := metav1.ListOptions{LabelSelector: allocator.LabelServiceCredentials + "=true"}
	if l, err := carolK8s.CoreV1().Secrets(carolNS).List(ctx, credsSel); err != nil || len(l.Items) != 0 {
		t.Errorf("credentials Secrets in carol's slice (she bought no service): %v, %v", l, err)
	}
	// dave holds no slice: no Secret of his contract anywhere.
	if l, err := admin.CoreV1().Secrets("").List(ctx, metav1.ListOptions{LabelSelector: allocator.LabelServiceCredentials +
		"=true," + allocator.LabelContract + "=" + nodetest.SoldID(daveDB.contract)}); err != nil || len(l.Items) != 0 {
		t.Errorf("credentials Secrets of dave's contract (he holds no slice): %v, %v", l, err)
	}
	// dave buys a slice after his service: the next health check puts
	// the Secret into it.
	_, daveK8s, daveNS := buySlice(t, ctx, dave)
	daveName := allocator.CredentialsSecretName(nodetest.SoldID(daveDB.contract))
	deadline := time.Now().Add(time.Minute)
	for tick := time.NewTicker(100 * time.Millisecond); ; <-tick.C {
		sec, err := daveK8s.CoreV1().Secrets(daveNS).Get(ctx, daveName, metav1.GetOptions{})
		if err == nil {
			if string(sec.Data["username"]) != "dave" {
				t.Errorf("the Secret in dave's slice holds username %q", sec.Data["username"])
			}
			tick.Stop()
			break
		}
		if !apierrors.IsNotFound(err) || time.Now().After(deadline) {
			t.Fatalf("the Secret of dave's service in the slice he bought later: %v", err)
		}
	}
	if strings.Contains(bobLog.String(), "alice-s3cr&t") {
		t.Error("bob logged the service's password")
	}

	// alice releases her service: the Secret is gone from her slice.
	if _, err := alice.Contracts().ReleaseContract(ctx, &fluidos.ReleaseContractRequest{Id: aliceDB.contract}); err != nil {
		t.Fatal(err)
	}
	bob.WaitAllocation(nodetest.SoldID(aliceDB.aid), fluidos.ContractRole_CONTRACT_ROLE_SOLD, time.Minute, "RELEASED",
		nodetest.InState(fluidos.AllocationState_ALLOCATION_STATE_RELEASED))
	if _, err := aliceK8s.CoreV1().Secrets(aliceNS).Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the Secret after the service's release: %v, want not found", err)
	}

	// carol buys the service too, then her slice ends first: the Secret
	// goes with the slice, nothing of it is left in bob's store, and her
	// service stays ACTIVE.
	carolDB := buyDatabase(t, ctx, carol, "carol")
	bob.WaitAllocation(nodetest.SoldID(carolDB.aid), fluidos.ContractRole_CONTRACT_ROLE_SOLD, time.Minute, "ACTIVE",
		nodetest.InState(fluidos.AllocationState_ALLOCATION_STATE_ACTIVE))
	carolName := allocator.CredentialsSecretName(nodetest.SoldID(carolDB.contract))
	if _, err := carolK8s.CoreV1().Secrets(carolNS).Get(ctx, carolName, metav1.GetOptions{}); err != nil {
		t.Fatalf("carol reading her service's credentials in her slice: %v", err)
	}
	if _, err := carol.Contracts().ReleaseContract(ctx, &fluidos.ReleaseContractRequest{Id: carolSlice.contract}); err != nil {
		t.Fatal(err)
	}
	bob.WaitAllocation(nodetest.SoldID(carolSlice.aid), fluidos.ContractRole_CONTRACT_ROLE_SOLD, time.Minute, "RELEASED",
		nodetest.InState(fluidos.AllocationState_ALLOCATION_STATE_RELEASED))
	if _, err := admin.CoreV1().Namespaces().Get(ctx, carolNS, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("carol's slice after its release: %v, want not found", err)
	}
	since := time.Now()
	bob.WaitAllocation(nodetest.SoldID(carolDB.aid), fluidos.ContractRole_CONTRACT_ROLE_SOLD, time.Minute, "found healthy after the slice ended",
		func(a *fluidos.Allocation) bool {
			if s := a.GetStatus(); s.GetState() != fluidos.AllocationState_ALLOCATION_STATE_ACTIVE {
				t.Fatalf("carol's service after her slice ended: %v", s)
			}
			return a.GetStatus().GetLastHealthyTime().AsTime().After(since)
		})
	insts, _, err := store.NewKind[*edgeproto.AppInst](bob.Running().Node.Store).List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range insts {
		if strings.HasPrefix(in.GetKey().GetName(), nodetest.SoldID(carolSlice.aid)+".") {
			t.Errorf("bob's store keeps %s of carol's ended slice", in.GetKeyString())
		}
	}
	if _, err := carol.Contracts().ReleaseContract(ctx, &fluidos.ReleaseContractRequest{Id: carolDB.contract}); err != nil {
		t.Fatal(err)
	}
	bob.WaitAllocation(nodetest.SoldID(carolDB.aid), fluidos.ContractRole_CONTRACT_ROLE_SOLD, time.Minute, "RELEASED",
		nodetest.InState(fluidos.AllocationState_ALLOCATION_STATE_RELEASED))
}
