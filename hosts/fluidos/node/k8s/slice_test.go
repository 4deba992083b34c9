package k8s_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	netv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8s "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/hosts/fluidos/node"
	"github.com/edgekit/edgekit/hosts/fluidos/nodetest"
	"github.com/edgekit/edgekit/hosts/fluidos/provider"
	"github.com/edgekit/edgekit/internal/cli/fluidoscmd"
	"github.com/edgekit/edgekit/internal/devtls"
	"github.com/edgekit/edgekit/internal/store"
	"github.com/edgekit/edgekit/internal/testenv/k8senv"
	"github.com/edgekit/edgekit/internal/testenv/logbuf"
	"github.com/edgekit/edgekit/platforms/kubernetes"
	"github.com/edgekit/edgekit/platforms/kubernetes/slicetest"
)

func TestMain(m *testing.M) { k8senv.Shared(m) }

var (
	nodesOnce sync.Once
	nodesErr  error
)

// startSeller starts, on nw, the node o describes with env's cluster as
// its cloudlet (the kubernetes platform), selling 4 CPUs, 8Gi, 40 pods
// and 20Gi of storage.
func startSeller(t testing.TB, env *k8senv.Env, nw *nodetest.Network, o node.Options) *nodetest.Node {
	t.Helper()
	p, err := kubernetes.New(kubernetes.Config{Kubeconfig: env.AdminKubeconfig()})
	if err != nil {
		t.Fatal(err)
	}
	o.Platform = p
	o.Capacity = nodetest.Capacity(provider.Capacity{Architecture: "amd64", CPU: 4000, Memory: 8 << 30, Pods: 40, Storage: 20 << 30})
	return nw.Start(o)
}

// buyerTLS is the client TLS configuration of a buyer node name that nw's
// nodes trust.
func buyerTLS(t testing.TB, nw *nodetest.Network, name string) *tls.Config {
	t.Helper()
	b, err := nw.CA().Issue(name, devtls.LeafOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return b.ClientConfig()
}

// k8sAdmin is a client of env as its administrator.
func k8sAdmin(env *k8senv.Env) (k8s.Interface, error) { return k8s.NewForConfig(env.RESTConfig()) }

// testEnv is the package's control plane with one simulated node of 8
// CPUs, 16Gi and 50 pods.
func testEnv(t testing.TB) *k8senv.Env {
	t.Helper()
	env := k8senv.ForTest(t)
	nodesOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		nodesErr = env.AddNode(ctx, k8senv.Node{Name: "worker", CPU: "8", Memory: "16Gi", Pods: 50})
	})
	if nodesErr != nil {
		t.Fatalf("adding the node: %v", nodesErr)
	}
	return env
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// TestK8SliceIsANamespaceWithItsOwnKubeconfig: alice buys a K8Slice from
// bob, whose cloudlet is a Kubernetes cluster. The slice is a namespace
// whose quota is exactly the partition bought, and alice gets a
// kubeconfig of a ServiceAccount of that namespace (bob's API and logs
// never show it): with it she runs a Deployment whose pods run, is
// refused one beyond the quota ("exceeded quota") and everything outside
// the namespace (403). bob's restart keeps the slice and her kubeconfig
// working. After the release her kubeconfig is refused (401) and the
// namespace is gone.
func TestK8SliceIsANamespaceWithItsOwnKubeconfig(t *testing.T) {
	env := testEnv(t)
	ctx := ctxT(t)
	admin, err := k8s.NewForConfig(env.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	var bobLog logbuf.Buffer
	nw := nodetest.NewNetwork(t)
	bob := startSeller(t, env, nw, node.Options{NodeID: "bob",
		Logger: slog.New(slog.NewTextHandler(&bobLog, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	alice := nw.Start(node.Options{NodeID: "alice", Peers: []string{bob.RearAddr()}})

	const cpu, mem, pods = 2000, 1536 << 20, 4
	created, err := alice.Solvers().CreateSolver(ctx, &fluidos.CreateSolverRequest{Solver: &fluidos.Solver{
		Configuration: &fluidos.Configuration{Spec: &fluidos.Configuration_K8Slice{K8Slice: &fluidos.K8SliceConfiguration{Cpu: cpu, Memory: mem, Pods: pods}}},
		Selector:      &fluidos.Selector{FlavorType: fluidos.FlavorType_FLAVOR_TYPE_K8SLICE},
		FindCandidate: true, ReserveAndBuy: true, EstablishPeering: true,
	}})
	if err != nil {
		t.Fatal(err)
	}
	st := alice.WaitSolver(created.GetSolver().GetId(), 2*time.Minute).GetStatus()
	if st.GetSolverPhase() != fluidos.Phase_PHASE_SOLVED {
		t.Fatalf("solver ended %v", st)
	}
	aid := st.GetAllocationId()
	got, err := alice.Allocations().GetCredentials(ctx, &fluidos.GetCredentialsRequest{Id: aid})
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := got.GetCredentials().GetKubeconfig()
	if kubeconfig == "" {
		t.Fatalf("alice got no kubeconfig: credentials of %s %v", aid, got)
	}
	kc, err := clientcmd.Load([]byte(kubeconfig))
	if err != nil {
		t.Fatal(err)
	}
	token := kc.AuthInfos[kc.Contexts[kc.CurrentContext].AuthInfo].Token
	if token == "" {
		t.Fatal("the kubeconfig carries no token")
	}
	// The purchase answer carried it (where a reference buyer reads it):
	// alice's copy of the contract, as decoded from bob's answer, holds it.
	bought, _, err := alice.Running().Node.Consumer.BoughtContracts().Get(ctx, st.GetContractId())
	if err != nil {
		t.Fatal(err)
	}
	if bought.GetPeeringTargetCredentials().GetKubeconfig() != kubeconfig {
		t.Errorf("the contract alice bought carries a kubeconfig of %d bytes, not the slice's", len(bought.GetPeeringTargetCredentials().GetKubeconfig()))
	}
	// Neither node's etcd holds the token in clear.
	noTokenAtRest(t, ctx, token, alice, bob)
	// bob's API shows alice's credentials to nobody.
	soldView, err := bob.Allocations().GetAllocation(ctx, &fluidos.GetAllocationRequest{Id: nodetest.SoldID(aid), Role: fluidos.ContractRole_CONTRACT_ROLE_SOLD})
	if err != nil {
		t.Fatal(err)
	}
	if soldView.GetAllocation().GetCredentials().GetKubeconfig() != "" {
		t.Error("bob's API shows the slice's kubeconfig")
	}

	// edgectl writes it to a file only its owner reads, even one that
	// existed with a wider mode.
	file := filepath.Join(t.TempDir(), "slice.kubeconfig")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var out, notes bytes.Buffer
	cmd := fluidoscmd.NewCommand(fluidoscmd.Options{Out: &out, ErrOut: &notes})
	cmd.SetArgs([]string{"--node", alice.Options().APIListen, "--dev-tls", nw.CADir(), "--timeout", "60s",
		"show", "credentials", st.GetContractId(), "--kubeconfig", file})
	if err := cmd.ExecuteContext(ctx); err != nil {
		t.Fatalf("edgectl fluidos show credentials --kubeconfig: %v\n%s", err, notes.String())
	}
	fi, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	written, _ := os.ReadFile(file)
	if fi.Mode().Perm() != 0o600 || string(written) != kubeconfig || strings.Contains(out.String(), token) || !strings.Contains(notes.String(), "kubectl --kubeconfig "+file) {
		t.Errorf("edgectl wrote the kubeconfig with mode %v (same %v); printed %q, noted %q", fi.Mode().Perm(), string(written) == kubeconfig, out.String(), notes.String())
	}

	// Without --kubeconfig, the table (which never prints it) is followed
	// by how to get and use it.
	out.Reset()
	notes.Reset()
	cmd = fluidoscmd.NewCommand(fluidoscmd.Options{Out: &out, ErrOut: &notes})
	cmd.SetArgs([]string{"--node", alice.Options().APIListen, "--dev-tls", nw.CADir(), "--timeout", "60s",
		"show", "credentials", st.GetContractId()})
	if err := cmd.ExecuteContext(ctx); err != nil {
		t.Fatalf("edgectl fluidos show credentials: %v\n%s", err, notes.String())
	}
	if strings.Contains(out.String(), token) || !strings.Contains(notes.String(), "--kubeconfig FILE` (mode 0600)") {
		t.Errorf("edgectl fluidos show credentials printed %q, noted %q: want the way to the kubeconfig, not the token", out.String(), notes.String())
	}

	tenant, ns := slicetest.Client(t, written)
	q, err := admin.CoreV1().ResourceQuotas(ns).List(ctx, metav1.ListOptions{})
	if err != nil || len(q.Items) != 1 {
		t.Fatalf("quotas of the slice's namespace %s: %v, %v", ns, q, err)
	}
	for name, want := range map[string]string{"requests.cpu": "2", "limits.cpu": "2", "requests.memory": "1536Mi", "limits.memory": "1536Mi", "pods": "4"} {
		if v, ok := q.Items[0].Spec.Hard[corev1.ResourceName(name)]; !ok || v.Cmp(resource.MustParse(want)) != 0 {
			t.Errorf("the slice's quota %s = %s (set %v), want %s (the partition bought)", name, v.String(), ok, want)
		}
	}
	if err := slicetest.RunDeployment(ctx, tenant, ns, slicetest.Deployment("web", 2, "500m", "256Mi")); err != nil {
		t.Fatalf("alice's deployment in her slice: %v", err)
	}
	if _, err := slicetest.QuotaRefusal(ctx, tenant, ns, slicetest.Deployment("big", 1, "1500m", "256Mi")); err != nil {
		t.Fatalf("a deployment beyond the slice: %v", err)
	}
	slicetest.CheckConfined(t, ctx, tenant, ns, "kube-system")
	checkIsolated(t, ctx, admin, ns)

	// bob restarts: the slice, its workloads and alice's kubeconfig stay.
	bob.Restart()
	bob.WaitAllocation(nodetest.SoldID(aid), fluidos.ContractRole_CONTRACT_ROLE_SOLD, time.Minute, "ACTIVE after the restart",
		nodetest.InState(fluidos.AllocationState_ALLOCATION_STATE_ACTIVE))
	dep, err := tenant.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil || dep.Status.AvailableReplicas != 2 {
		t.Fatalf("alice's deployment after bob's restart: %v, %v", dep.Status, err)
	}

	// alice releases: her kubeconfig stops working, the namespace is gone.
	if _, err := alice.Contracts().ReleaseContract(ctx, &fluidos.ReleaseContractRequest{Id: st.GetContractId()}); err != nil {
		t.Fatal(err)
	}
	bob.WaitAllocation(nodetest.SoldID(aid), fluidos.ContractRole_CONTRACT_ROLE_SOLD, time.Minute, "RELEASED",
		nodetest.InState(fluidos.AllocationState_ALLOCATION_STATE_RELEASED))
	if err := slicetest.WaitUnauthorized(ctx, tenant, ns); err != nil {
		t.Fatalf("alice's kubeconfig after the release: %v", err)
	}
	if _, err := admin.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the slice's namespace after the release: %v, want not found", err)
	}
	if strings.Contains(bobLog.String(), token) {
		t.Error("bob logged the slice's token")
	}
	// The secrets were dropped with the contract.
	if a, _, err := bob.Running().Node.Provider.Allocations().Get(ctx, nodetest.SoldID(aid)); err != nil || a.GetCredentials() != nil {
		t.Errorf("bob's allocation after the release keeps credentials (%v), %v", a.GetCredentials() != nil, err)
	}
}

// noTokenAtRest checks that no raw value of the nodes' etcd holds token.
func noTokenAtRest(t *testing.T, ctx context.Context, token string, nodes ...*nodetest.Node) {
	t.Helper()
	for _, n := range nodes {
		resp, err := n.Running().Node.Store.Client().Get(ctx, store.Root, clientv3.WithPrefix())
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Kvs) == 0 {
			t.Fatalf("%s's etcd holds nothing under %s", n.ID(), store.Root)
		}
		for _, kv := range resp.Kvs {
			if bytes.Contains(kv.Value, []byte(token)) {
				t.Errorf("%s's etcd value of %s holds the slice's token in clear", n.ID(), kv.Key)
			}
		}
	}
}

// checkIsolated checks that the slice's namespace ns has a default-deny
// ingress NetworkPolicy between tenants: one selecting every pod of ns
// whose every rule admits only pods of ns (no other namespace, no
// address block).
func checkIsolated(t *testing.T, ctx context.Context, admin k8s.Interface, ns string) {
	t.Helper()
	nps, err := admin.NetworkingV1().NetworkPolicies(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, np := range nps.Items {
		sel := np.Spec.PodSelector
		if len(sel.MatchLabels) > 0 || len(sel.MatchExpressions) > 0 || !slices.Contains(np.Spec.PolicyTypes, netv1.PolicyTypeIngress) {
			continue
		}
		own := true
		for _, r := range np.Spec.Ingress {
			if len(r.From) == 0 {
				own = false // from anywhere
			}
			for _, from := range r.From {
				own = own && from.PodSelector != nil && from.NamespaceSelector == nil && from.IPBlock == nil
			}
		}
		if own {
			return
		}
	}
	t.Errorf("namespace %s has no NetworkPolicy denying ingress from other tenants: %v", ns, nps.Items)
}
