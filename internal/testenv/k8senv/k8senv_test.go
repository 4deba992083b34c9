package k8senv_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/edgekit/edgekit/internal/testenv/k8senv"
)

func TestMain(m *testing.M) { k8senv.Shared(m) }

// waitTimeout bounds every wait of these tests.
const waitTimeout = 2 * time.Minute

func adminClient(t *testing.T, env *k8senv.Env) *kubernetes.Clientset {
	t.Helper()
	cs, err := kubernetes.NewForConfig(env.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// clientFor returns a client of a kubeconfig, as a user of the platform
// would build it.
func clientFor(t *testing.T, kubeconfig []byte) *kubernetes.Clientset {
	t.Helper()
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		t.Fatalf("kubeconfig does not parse: %v\n%s", err, kubeconfig)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// namespace creates a namespace of a new name starting with prefix (tests
// share the Env, and -count may run a test again on it).
func namespace(t *testing.T, cs *kubernetes.Clientset, prefix string) string {
	t.Helper()
	ns, err := cs.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

func TestDeploymentBecomesAvailableOnAKwokNode(t *testing.T) {
	env := k8senv.ForTest(t)
	cs := adminClient(t, env)
	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	defer cancel()

	// The serviceaccount controller gives a new namespace its default
	// ServiceAccount; the ReplicaSet controller retries until it has.
	ns := namespace(t, cs, "deploy")
	nodeName := "node-" + ns
	if err := env.AddNode(ctx, k8senv.Node{
		Name: nodeName, CPU: "8", Memory: "32Gi", Pods: 50,
		Extended: map[string]string{"nvidia.com/gpu": "2"},
	}); err != nil {
		t.Fatal(err)
	}
	node, err := cs.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if gpu := node.Status.Allocatable["nvidia.com/gpu"]; gpu.Value() != 2 {
		t.Errorf("allocatable nvidia.com/gpu = %v, want 2", gpu.String())
	}

	labels := map[string]string{"app": "web"}
	replicas := int32(3)
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					// Other tests' nodes share the Env: pin the pods to ours.
					NodeSelector: map[string]string{"kubernetes.io/hostname": nodeName},
					Containers: []corev1.Container{{
						Name: "web", Image: "example.invalid/web:1",
					}},
				},
			},
		},
	}
	if _, err := cs.AppsV1().Deployments(ns).Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	var last *appsv1.Deployment
	err = wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		d, err := cs.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		last = d
		return d.Status.ObservedGeneration >= d.Generation && d.Status.AvailableReplicas == 3 && d.Status.UpdatedReplicas == 3, nil
	})
	if err != nil {
		t.Fatalf("deployment not available: %v; last status %+v", err, last.Status)
	}

	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil {
		t.Fatal(err)
	}
	_, podNet, err := net.ParseCIDR(k8senv.PodCIDR)
	if err != nil {
		t.Fatal(err)
	}
	running := 0
	var seen []string
	for _, p := range pods.Items {
		seen = append(seen, fmt.Sprintf("%s: %s on %q, IP %q", p.Name, p.Status.Phase, p.Spec.NodeName, p.Status.PodIP))
		if p.Status.Phase == corev1.PodRunning && p.Spec.NodeName == nodeName && podNet.Contains(net.ParseIP(p.Status.PodIP)) {
			running++
		}
	}
	if running != 3 {
		t.Fatalf("%d pods Running on %s with an IP of %s, want 3: %v", running, nodeName, k8senv.PodCIDR, seen)
	}
}

func TestTokenUserWithoutRBACIsForbiddenUntilBound(t *testing.T) {
	env := k8senv.ForTest(t)
	admin := adminClient(t, env)
	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	defer cancel()
	ns := namespace(t, admin, "least")

	team := "team-" + ns // the group, as the binding below, of this run only
	user := clientFor(t, env.Kubeconfig("alice", team))
	_, err := user.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if !apierrors.IsForbidden(err) {
		t.Fatalf("listing pods without RBAC: err = %v, want 403 Forbidden", err)
	}
	if want := `User "alice" cannot list resource "pods"`; err != nil && !strings.Contains(err.Error(), want) {
		t.Fatalf("403 names %q, want %q", err, want)
	}

	// A token of no Kubeconfig is unauthenticated (401), not a user.
	cfg := env.RESTConfig()
	cfg.BearerToken = "not-a-token"
	stranger, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stranger.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{}); !apierrors.IsUnauthorized(err) {
		t.Fatalf("unknown token: err = %v, want 401 Unauthorized", err)
	}

	// RBAC decides: bound to a role through its group, the same user may
	// list pods of that namespace and still nothing else.
	if _, err := admin.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "pod-reader"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"list"}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "team-a-reads-pods"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "pod-reader"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: team}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The authorizer's cache of RBAC objects follows a watch: wait for it.
	err = wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		_, err := user.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if apierrors.IsForbidden(err) {
			return false, nil
		}
		return err == nil, err
	})
	if err != nil {
		t.Fatalf("listing pods after the binding: %v", err)
	}
	if _, err := user.CoreV1().Pods("default").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("listing pods of another namespace: err = %v, want 403", err)
	}
}

func TestAddNodeNamesTheBadField(t *testing.T) {
	env := k8senv.ForTest(t)
	for _, c := range []struct {
		node k8senv.Node
		want string
	}{
		{k8senv.Node{Name: "bad-cpu", CPU: "four"}, `CPU "four"`},
		{k8senv.Node{Name: "bad-gpu", Extended: map[string]string{"nvidia.com/gpu": "x"}}, `Extended[nvidia.com/gpu] "x"`},
		{k8senv.Node{CPU: "1"}, "no name"},
		{k8senv.Node{Name: "bad-pods", Pods: -1}, "Pods -1"},
	} {
		err := env.AddNode(t.Context(), c.node)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("AddNode(%+v) = %v, want an error with %q", c.node, err, c.want)
		}
	}
}
