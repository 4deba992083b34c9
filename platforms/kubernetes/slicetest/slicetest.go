// Package slicetest checks, for tests on a real control plane, what the
// holder of a cluster's scoped kubeconfig (a K8Slice's buyer) can and
// cannot do: run workloads in its namespace within its quota, and nothing
// elsewhere. The platform's tests and the FLUIDOS node's tests share it.
package slicetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8s "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// Client is a client of the kubeconfig's cluster as its user, and the
// namespace of its current context.
func Client(t testing.TB, kubeconfig []byte) (k8s.Interface, string) {
	t.Helper()
	cc, err := clientcmd.Load(kubeconfig)
	if err != nil {
		t.Fatalf("the kubeconfig does not load: %v", err)
	}
	ctx := cc.Contexts[cc.CurrentContext]
	if ctx == nil || ctx.Namespace == "" {
		t.Fatalf("the kubeconfig's current context %q names no namespace", cc.CurrentContext)
	}
	rc, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		t.Fatalf("the kubeconfig is not usable: %v", err)
	}
	cs, err := k8s.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	return cs, ctx.Namespace
}

// Deployment is a Deployment of replicas pods asking cpu and memory each.
func Deployment(name string, replicas int32, cpu, memory string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	req := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "main", Image: "registry.example/" + name + ":1",
					Resources: corev1.ResourceRequirements{Requests: req, Limits: req},
				}}},
			},
		},
	}
}

// RunDeployment creates d in ns as cs and waits (bounded by ctx) until
// all its replicas are available and its pods Running.
func RunDeployment(ctx context.Context, cs k8s.Interface, ns string, d *appsv1.Deployment) error {
	if _, err := cs.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating deployment %s/%s: %w", ns, d.Name, err)
	}
	return poll(ctx, func() (bool, error) {
		got, err := cs.AppsV1().Deployments(ns).Get(ctx, d.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if got.Status.AvailableReplicas != *d.Spec.Replicas {
			return false, nil
		}
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=" + d.Name})
		if err != nil {
			return false, err
		}
		running := 0
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
				running++
			}
		}
		return running == int(*d.Spec.Replicas), nil
	})
}

// QuotaRefusal creates d in ns as cs, whose pods exceed the namespace's
// quota, and waits until the API server's refusal ("exceeded quota")
// shows on the Deployment; it returns that message.
func QuotaRefusal(ctx context.Context, cs k8s.Interface, ns string, d *appsv1.Deployment) (string, error) {
	if _, err := cs.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		return "", fmt.Errorf("creating deployment %s/%s: %w", ns, d.Name, err)
	}
	var msg string
	err := poll(ctx, func() (bool, error) {
		got, err := cs.AppsV1().Deployments(ns).Get(ctx, d.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if got.Status.AvailableReplicas > 0 {
			return false, fmt.Errorf("deployment %s has %d pods available beyond the quota", d.Name, got.Status.AvailableReplicas)
		}
		for _, c := range got.Status.Conditions {
			if c.Type == appsv1.DeploymentReplicaFailure && strings.Contains(c.Message, "exceeded quota") {
				msg = c.Message
				return true, nil
			}
		}
		return false, nil
	})
	return msg, err
}

// CheckConfined checks that cs, a tenant of namespace ns, is refused
// (403) listing namespaces, nodes, pods of other namespaces and Secrets
// elsewhere, reading a Secret of another namespace, changing the
// NetworkPolicies of its own namespace, and running a pod that would
// reach its node (privileged, host network, host path). other is a namespace that is not
// the tenant's.
func CheckConfined(t testing.TB, ctx context.Context, cs k8s.Interface, ns, other string) {
	t.Helper()
	for what, call := range map[string]func() error{
		"list namespaces":              func() error { _, err := cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{}); return err },
		"list nodes":                   func() error { _, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); return err },
		"list pods of all namespaces":  func() error { _, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{}); return err },
		"list secrets of " + other:     func() error { _, err := cs.CoreV1().Secrets(other).List(ctx, metav1.ListOptions{}); return err },
		"get a secret of " + other:     func() error { _, err := cs.CoreV1().Secrets(other).Get(ctx, "any", metav1.GetOptions{}); return err },
		"list deployments of " + other: func() error { _, err := cs.AppsV1().Deployments(other).List(ctx, metav1.ListOptions{}); return err },
		"delete its network policies": func() error {
			return cs.NetworkingV1().NetworkPolicies(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
		},
		"read its own namespace object": func() error { _, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); return err },
		"run a pod mounting its node's root (Pod Security)": func() error {
			_, err := cs.CoreV1().Pods(ns).Create(ctx, hostPod(), metav1.CreateOptions{})
			return err
		},
	} {
		if err := call(); !apierrors.IsForbidden(err) {
			t.Errorf("the tenant of %s may %s: %v, want 403 Forbidden", ns, what, err)
		}
	}
}

// hostPod is a pod that would reach its node: privileged, in the host's
// network, mounting the node's root.
func hostPod() *corev1.Pod {
	yes := true
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "escape"},
		Spec: corev1.PodSpec{
			HostNetwork: true,
			Volumes:     []corev1.Volume{{Name: "root", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}}},
			Containers: []corev1.Container{{
				Name: "main", Image: "registry.example/escape:1",
				SecurityContext: &corev1.SecurityContext{Privileged: &yes},
				VolumeMounts:    []corev1.VolumeMount{{Name: "root", MountPath: "/host"}},
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
					corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("64Mi")}},
			}},
		},
	}
}

// WaitUnauthorized waits (bounded by ctx) until cs's token is refused
// (401): its identity was revoked.
func WaitUnauthorized(ctx context.Context, cs k8s.Interface, ns string) error {
	return poll(ctx, func() (bool, error) {
		_, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		switch {
		case apierrors.IsUnauthorized(err):
			return true, nil
		case err == nil, apierrors.IsForbidden(err), apierrors.IsNotFound(err):
			return false, nil
		default:
			return false, err
		}
	})
}

// poll calls cond every 100ms until it is done, fails, or ctx ends.
func poll(ctx context.Context, cond func() (bool, error)) error {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	var last error
	for {
		ok, err := cond()
		if ok || (err != nil && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled)) {
			return err
		}
		if err != nil {
			last = err
		}
		select {
		case <-ctx.Done():
			if last != nil {
				return fmt.Errorf("%w (last: %v)", ctx.Err(), last)
			}
			return ctx.Err()
		case <-t.C:
		}
	}
}
