package region

import (
	"context"
	"crypto/rand"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8s "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/edgekit/edgekit/fluidos"
)

// The solvers the tour creates on the consumer node to buy from
// KubernetesProvider.
const (
	tourDBSolver    = "tour-mysql"
	tourSliceSolver = "tour-slice"
)

// tourSlice is the slice the tour buys from KubernetesProvider: the
// smallest partition of the default policy (node.DefaultPolicy), and two
// pods.
var tourSlice = &fluidos.K8SliceConfiguration{Cpu: 500, Memory: 512 << 20, Pods: 2}

// onKubernetesNode reports whether the region has KubernetesProvider.
func (t *tour) onKubernetesNode() bool {
	_, ok := t.info.Nodes[KubernetesProvider]
	return ok && t.info.KubeconfigFile != ""
}

// buyOnKubernetes has the consumer node buy, from KubernetesProvider, a
// Service of KubernetesBlueprint (a database in the FLUIDOS reference's
// format: its manifests applied into a namespace of the contract) and a
// K8Slice (a namespace with its own kubeconfig), each through a solver,
// and checks what it got: the allocation ACTIVE (the database's
// Deployment available), credentials naming the endpoint Service by its
// cluster DNS name, and a kubeconfig of the slice's namespace. It prints
// whether the secrets came, never them. The namespaces are remembered for
// releaseOnKubernetes.
func (t *tour) buyOnKubernetes(ctx context.Context) error {
	n, err := dialNode(t.info.Nodes[Consumer].API, t.info.FluidosTLSDir)
	if err != nil {
		return err
	}
	defer n.Close()
	password := strings.ToLower(rand.Text()[:20])
	t.out.printf("  solver %s on the consumer: a Service tagged %s, user tour, database tour, password chosen at random (not shown)\n", tourDBSolver, KubernetesBlueprint)
	st, cred, err := t.buyFromKubernetesNode(ctx, n, &fluidos.Solver{Id: tourDBSolver,
		Selector:      &fluidos.Selector{Filter: &fluidos.Selector_Service{Service: &fluidos.ServiceSelector{Tags: []string{KubernetesBlueprint}}}},
		FindCandidate: true, ReserveAndBuy: true, EstablishPeering: true,
		Configuration: &fluidos.Configuration{Spec: &fluidos.Configuration_Service{Service: &fluidos.ServiceConfiguration{
			Parameters: map[string]string{"username": "tour", "password": password, "database": "tour"}}}}})
	if err != nil {
		return err
	}
	ns, err := endpointNamespace(cred.GetEndpoints(), 3306)
	if err != nil {
		return fmt.Errorf("allocation %s: %w", st.GetAllocationId(), err)
	}
	if cred.GetUsername() != "tour" || cred.GetDatabase() != "tour" || cred.GetPassword() != password {
		return fmt.Errorf("allocation %s: the credentials handed over are not the configuration's (user %q, database %q, same password %v)",
			st.GetAllocationId(), cred.GetUsername(), cred.GetDatabase(), cred.GetPassword() == password)
	}
	t.out.printf("  allocation %s: credentials handed over: endpoints %s, user %s, database %s, password present (not shown)\n",
		st.GetAllocationId(), cred.GetEndpoints(), cred.GetUsername(), cred.GetDatabase())
	t.namespaces = append(t.namespaces, ns)

	t.out.printf("  solver %s on the consumer: a K8Slice of %dm CPU, %dMi, %d pods\n", tourSliceSolver, tourSlice.GetCpu(), tourSlice.GetMemory()>>20, tourSlice.GetPods())
	st, cred, err = t.buyFromKubernetesNode(ctx, n, &fluidos.Solver{Id: tourSliceSolver,
		Selector:      &fluidos.Selector{FlavorType: fluidos.FlavorType_FLAVOR_TYPE_K8SLICE},
		FindCandidate: true, ReserveAndBuy: true, EstablishPeering: true,
		Configuration: &fluidos.Configuration{Spec: &fluidos.Configuration_K8Slice{K8Slice: tourSlice}}})
	if err != nil {
		return err
	}
	ns, err = kubeconfigNamespace(cred.GetKubeconfig())
	if err != nil {
		return fmt.Errorf("allocation %s: %w", st.GetAllocationId(), err)
	}
	t.out.printf("  allocation %s: a kubeconfig of namespace %s handed over (present, not shown; edgectl fluidos show credentials %s --kubeconfig FILE writes it)\n",
		st.GetAllocationId(), ns, st.GetAllocationId())
	t.namespaces = append(t.namespaces, ns)
	return nil
}

// buyFromKubernetesNode runs solver s on the consumer node n, checks that
// KubernetesProvider sold what it bought and that its allocation is
// ACTIVE, and returns the solver's status and the credentials handed
// over (secrets the caller must not print).
func (t *tour) buyFromKubernetesNode(ctx context.Context, n *nodeAPI, s *fluidos.Solver) (*fluidos.SolverStatus, *fluidos.PeeringTargetCredentials, error) {
	st, err := t.solve(ctx, n, s)
	if err != nil {
		return nil, nil, err
	}
	if _, err := t.contract(ctx, n, st, KubernetesProvider); err != nil {
		return nil, nil, err
	}
	if err := t.active(ctx, n, st.GetAllocationId()); err != nil {
		return nil, nil, err
	}
	got, err := n.allocations.GetCredentials(ctx, &fluidos.GetCredentialsRequest{Id: st.GetAllocationId()})
	if err != nil {
		return nil, nil, fmt.Errorf("credentials of allocation %s: %w", st.GetAllocationId(), err)
	}
	return st, got.GetCredentials(), nil
}

// active checks that the consumer's allocation id is ACTIVE, and prints it.
func (t *tour) active(ctx context.Context, n *nodeAPI, id string) error {
	a, err := n.allocations.GetAllocation(ctx, &fluidos.GetAllocationRequest{Id: id, Role: fluidos.ContractRole_CONTRACT_ROLE_BOUGHT})
	if err != nil {
		return fmt.Errorf("allocation %s: %w", id, err)
	}
	s := a.GetAllocation().GetStatus()
	if s.GetState() != fluidos.AllocationState_ALLOCATION_STATE_ACTIVE {
		return fmt.Errorf("allocation %s is %s, not ACTIVE: %s", id, strings.TrimPrefix(s.GetState().String(), "ALLOCATION_STATE_"), s.GetMessage())
	}
	t.out.printf("  allocation %s ACTIVE: %s\n", id, s.GetMessage())
	return nil
}

// endpointNamespace is the namespace of endpoints, the credentials'
// "<service>.<namespace>.svc.cluster.local:<port>" list, checking that
// one names port.
func endpointNamespace(endpoints string, port int) (string, error) {
	suffix := fmt.Sprintf(".svc.cluster.local:%d", port)
	for e := range strings.SplitSeq(endpoints, ",") {
		host, ok := strings.CutSuffix(strings.TrimSpace(e), suffix)
		if !ok {
			continue
		}
		if _, ns, ok := strings.Cut(host, "."); ok && ns != "" && !strings.Contains(ns, ".") {
			return ns, nil
		}
	}
	return "", fmt.Errorf("the credentials' endpoints %q name no <service>.<namespace>%s", endpoints, suffix)
}

// kubeconfigNamespace is the namespace of the current context of the
// kubeconfig data. Errors never quote it (it holds a token).
func kubeconfigNamespace(data string) (string, error) {
	if data == "" {
		return "", fmt.Errorf("no kubeconfig handed over")
	}
	cfg, err := clientcmd.Load([]byte(data))
	if err != nil {
		return "", fmt.Errorf("the kubeconfig handed over does not parse")
	}
	c := cfg.Contexts[cfg.CurrentContext]
	if c == nil || c.Namespace == "" {
		return "", fmt.Errorf("the kubeconfig handed over names no namespace in its current context")
	}
	return c.Namespace, nil
}

// releaseOnKubernetes deletes the solvers of buyOnKubernetes, which
// releases what they bought, waits until KubernetesProvider has torn it
// down, and checks on the cluster (with the region's kubeconfig) that the
// namespaces are gone.
func (t *tour) releaseOnKubernetes(ctx context.Context) error {
	n, err := dialNode(t.info.Nodes[Consumer].API, t.info.FluidosTLSDir)
	if err != nil {
		return err
	}
	defer n.Close()
	for _, id := range []string{tourDBSolver, tourSliceSolver} {
		if err := t.releaseSolver(ctx, n, id, false); err != nil {
			return err
		}
	}
	cs, err := t.kubernetesClient()
	if err != nil {
		return err
	}
	for _, ns := range t.namespaces {
		if err := namespaceGone(ctx, cs, ns); err != nil {
			return err
		}
		t.out.printf("  namespace %s: gone from the cluster\n", ns)
	}
	t.namespaces = nil
	return nil
}

// kubernetesClient is a client of the region's cluster, from
// Info.KubeconfigFile. Errors name the file, never its content.
func (t *tour) kubernetesClient() (k8s.Interface, error) {
	rc, err := clientcmd.BuildConfigFromFlags("", t.info.KubeconfigFile)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: not usable", t.info.KubeconfigFile)
	}
	return k8s.NewForConfig(rc)
}

// namespaceGone waits until namespace ns is not found (its deletion may
// still be finishing when the release is reported), until ctx ends.
func namespaceGone(ctx context.Context, cs k8s.Interface, ns string) error {
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		got, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return nil
		case err != nil && ctx.Err() == nil:
			return fmt.Errorf("namespace %s: %w", ns, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("namespace %s is still there after the release (%s): %w", ns, phase(got), context.Cause(ctx))
		case <-tick.C:
		}
	}
}

// phase is the phase of namespace ns, "unknown" when it was not read.
func phase(ns *corev1.Namespace) string {
	if ns == nil || ns.Status.Phase == "" {
		return "phase unknown"
	}
	return "phase " + string(ns.Status.Phase)
}
