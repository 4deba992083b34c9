package k8senv

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
)

// DefaultNodeTimeout bounds AddNode's wait for the node to become
// schedulable when ctx has no earlier deadline.
const DefaultNodeTimeout = time.Minute

// Node describes a simulated node. Quantities use Kubernetes' notation
// ("4", "500m", "16Gi"); empty ones take the defaults below.
type Node struct {
	Name string
	// CPU is the node's capacity and allocatable CPU (default "4").
	CPU string
	// Memory is its memory (default "16Gi").
	Memory string
	// Pods is how many pods it takes (default 110).
	Pods int
	// Extended resources by name, such as "nvidia.com/gpu": "2".
	Extended map[string]string
	// Labels are added to the usual ones (kubernetes.io/hostname, os,
	// arch, type=kwok).
	Labels map[string]string
}

// nodeObject returns the Node object for n, or an error naming the field
// that does not parse.
func (n Node) nodeObject() (*corev1.Node, error) {
	if n.Name == "" {
		return nil, fmt.Errorf("k8senv: node has no name")
	}
	res := corev1.ResourceList{}
	quantity := func(field, name, value, def string) error {
		if value == "" {
			value = def
		}
		q, err := resource.ParseQuantity(value)
		if err != nil {
			return fmt.Errorf("k8senv: node %s: %s %q: %w", n.Name, field, value, err)
		}
		res[corev1.ResourceName(name)] = q
		return nil
	}
	if err := quantity("CPU", "cpu", n.CPU, "4"); err != nil {
		return nil, err
	}
	if err := quantity("Memory", "memory", n.Memory, "16Gi"); err != nil {
		return nil, err
	}
	switch {
	case n.Pods < 0:
		return nil, fmt.Errorf("k8senv: node %s: Pods %d is negative", n.Name, n.Pods)
	case n.Pods == 0:
		n.Pods = 110
	}
	res[corev1.ResourcePods] = *resource.NewQuantity(int64(n.Pods), resource.DecimalSI)
	for name, v := range n.Extended {
		if err := quantity("Extended["+name+"]", name, v, ""); err != nil {
			return nil, err
		}
	}
	labels := map[string]string{
		"kubernetes.io/hostname": n.Name,
		"kubernetes.io/os":       "linux",
		"kubernetes.io/arch":     "amd64",
		"type":                   "kwok",
	}
	for k, v := range n.Labels {
		labels[k] = v
	}
	annKey, annValue, _ := strings.Cut(KwokAnnotation, "=")
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        n.Name,
			Labels:      labels,
			Annotations: map[string]string{annKey: annValue, "node.alpha.kubernetes.io/ttl": "0"},
		},
		Status: corev1.NodeStatus{
			Capacity:    res,
			Allocatable: res.DeepCopy(),
			Phase:       corev1.NodeRunning,
			NodeInfo: corev1.NodeSystemInfo{
				Architecture:    "amd64",
				OperatingSystem: "linux",
				KubeletVersion:  "fake",
			},
		},
	}, nil
}

// AddNode creates a node that kwok manages and waits until it is Ready and
// carries no not-ready or unreachable taint, so that pods schedule on it
// (bounded by ctx, or DefaultNodeTimeout when ctx has no deadline).
func (e *Env) AddNode(ctx context.Context, n Node) error {
	obj, err := n.nodeObject()
	if err != nil {
		return err
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultNodeTimeout)
		defer cancel()
	}
	cs, err := kubernetes.NewForConfig(e.RESTConfig())
	if err != nil {
		return fmt.Errorf("k8senv: %w", err)
	}
	created, err := cs.CoreV1().Nodes().Create(ctx, obj, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("k8senv: create node %s: %w", n.Name, err)
	}
	if schedulable(created) {
		return nil
	}
	w, err := cs.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{
		FieldSelector:   fields.OneTermEqualSelector("metadata.name", n.Name).String(),
		ResourceVersion: created.ResourceVersion,
	})
	if err != nil {
		return fmt.Errorf("k8senv: watch node %s: %w", n.Name, err)
	}
	defer func() { w.Stop() }() // w changes when the watch is renewed
	last := created
	for {
		select {
		case <-ctx.Done():
			return fmt.Errorf("k8senv: node %s not schedulable (conditions %v, taints %v): %w", n.Name, last.Status.Conditions, last.Spec.Taints, ctx.Err())
		case ev, ok := <-w.ResultChan():
			if !ok {
				// The API server ended the watch (it does after a while):
				// look again.
				if last, err = cs.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{}); err != nil {
					return fmt.Errorf("k8senv: node %s: %w", n.Name, err)
				}
				if schedulable(last) {
					return nil
				}
				w.Stop()
				if w, err = cs.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{
					FieldSelector:   fields.OneTermEqualSelector("metadata.name", n.Name).String(),
					ResourceVersion: last.ResourceVersion,
				}); err != nil {
					return fmt.Errorf("k8senv: watch node %s: %w", n.Name, err)
				}
				continue
			}
			switch ev.Type {
			case watch.Deleted:
				return fmt.Errorf("k8senv: node %s was deleted while waiting for it", n.Name)
			case watch.Error:
				return fmt.Errorf("k8senv: watch node %s: %v", n.Name, ev.Object)
			}
			if node, ok := ev.Object.(*corev1.Node); ok {
				last = node
				if schedulable(node) {
					return nil
				}
			}
		}
	}
}

// schedulable reports whether node is Ready and free of the taints the
// node lifecycle controller puts on nodes that are not.
func schedulable(node *corev1.Node) bool {
	ready := false
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
			ready = true
		}
	}
	for _, t := range node.Spec.Taints {
		if t.Key == corev1.TaintNodeNotReady || t.Key == corev1.TaintNodeUnreachable {
			return false
		}
	}
	return ready && !node.Spec.Unschedulable
}
