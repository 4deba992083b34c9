package kubernetes

import (
	"context"
	"fmt"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
)

// waitingReasons are container waiting reasons that mean the pod cannot
// run without a change: the operation fails with them at once.
var waitingReasons = map[string]bool{
	"ImagePullBackOff":           true,
	"ErrImagePull":               true,
	"InvalidImageName":           true,
	"ErrImageNeverPull":          true,
	"CrashLoopBackOff":           true,
	"CreateContainerConfigError": true,
	"CreateContainerError":       true,
	"RunContainerError":          true,
}

// waitRollout waits, by watching the Deployment and its pods, until the
// Deployment of generation gen has replicas ready pods of its current
// template and no others, reporting "Waiting for n/m pods ready" as the
// count changes (and "m/m pods ready" at the end). A pod that cannot run (unschedulable, image pull or crash
// loop) or a Deployment condition that says the rollout is stuck fails it
// with the cluster's reason. It returns the ready pods.
func waitRollout(ctx context.Context, c *conn, r appRefs, gen int64, replicas int32, pr interface{ Step(string) }) ([]*corev1.Pod, error) {
	var pods []*corev1.Pod
	err := watchInstance(ctx, c, r, "deployment "+r.ns+"/"+r.name, pr, func(w watched) (bool, string, error) {
		done, ready, msg, err := rolloutState(w.deps, w.rss, w.pods, r.name, gen, replicas)
		pods = ready
		return done, msg, err
	})
	return pods, err
}

// watched are the stores of an instance's watched objects.
type watched struct{ pods, deps, rss, stss cache.Store }

// watchInstance watches the instance's pods, Deployments, ReplicaSets and
// StatefulSets (label r.sel in r.ns) and calls state on every change until
// it reports done or an error, reporting its message as progress when it
// changes. what names what is waited for, in errors.
func watchInstance(ctx context.Context, c *conn, r appRefs, what string, pr interface{ Step(string) }, state func(watched) (done bool, msg string, err error)) error {
	f := informers.NewSharedInformerFactoryWithOptions(c.cs, 0, informers.WithNamespace(r.ns),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = r.sel }))
	podInf := f.Core().V1().Pods().Informer()
	depInf := f.Apps().V1().Deployments().Informer()
	rsInf := f.Apps().V1().ReplicaSets().Informer()
	stsInf := f.Apps().V1().StatefulSets().Informer()
	changed := make(chan struct{}, 1)
	poke := func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	h := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { poke() },
		UpdateFunc: func(any, any) { poke() },
		DeleteFunc: func(any) { poke() },
	}
	for _, inf := range []cache.SharedIndexInformer{podInf, depInf, rsInf, stsInf} {
		if _, err := inf.AddEventHandler(h); err != nil {
			return err
		}
	}
	stop := make(chan struct{})
	defer func() {
		close(stop)
		f.Shutdown()
	}()
	f.Start(stop)
	synced := make(chan struct{})
	go func() {
		defer close(synced)
		f.WaitForCacheSync(stop)
	}()
	select {
	case <-synced:
	case <-ctx.Done():
		return fmt.Errorf("watching %s: %w", what, ctxErr(ctx))
	}
	w := watched{pods: podInf.GetStore(), deps: depInf.GetStore(), rss: rsInf.GetStore(), stss: stsInf.GetStore()}
	last := ""
	for {
		done, msg, err := state(w)
		if err != nil {
			return err
		}
		if msg != last && pr != nil {
			pr.Step(msg)
			last = msg
		}
		if done {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("%s: %s: %w", what, msg, ctxErr(ctx))
		}
	}
}

// rolloutState reads where a rollout is from the watched objects. Only
// the pods of the current template can fail it: a pod of an older one (an
// earlier update's pod that could not run) is being replaced.
func rolloutState(deps, rss, pods cache.Store, name string, gen int64, replicas int32) (done bool, ready []*corev1.Pod, msg string, err error) {
	var d *appsv1.Deployment
	for _, o := range deps.List() {
		if x := o.(*appsv1.Deployment); x.Name == name {
			d = x
		}
	}
	if d == nil {
		return false, nil, "Waiting for the deployment", nil
	}
	var all []*corev1.Pod
	for _, o := range pods.List() {
		p := o.(*corev1.Pod)
		if p.DeletionTimestamp == nil {
			all = append(all, p)
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Name < all[j].Name })
	// The cluster's reasons first: they end the wait.
	if hash := currentTemplate(d, rss, gen); hash != "" {
		for _, p := range all {
			if p.Labels[appsv1.DefaultDeploymentUniqueLabelKey] != hash {
				continue
			}
			if err := podFailure(p); err != nil {
				return false, nil, "", err
			}
		}
	}
	// The conditions speak of the generation the controller observed: a
	// stuck rollout an update just replaced is not this one's.
	for _, cond := range observedConditions(d, gen) {
		switch {
		case cond.Type == appsv1.DeploymentProgressing && cond.Status == corev1.ConditionFalse:
			return false, nil, "", fmt.Errorf("%w: deployment %s/%s: %s: %s", ErrRollout, d.Namespace, d.Name, cond.Reason, cond.Message)
		case cond.Type == appsv1.DeploymentReplicaFailure && cond.Status == corev1.ConditionTrue && !transientFailure(cond.Message):
			return false, nil, "", fmt.Errorf("%w: deployment %s/%s: %s: %s", ErrPodFailed, d.Namespace, d.Name, cond.Reason, cond.Message)
		}
	}
	for _, p := range all {
		if podReady(p) {
			ready = append(ready, p)
		}
	}
	st := d.Status
	readyNow := min(st.ReadyReplicas, replicas)
	if d.Generation > st.ObservedGeneration || d.Generation < gen {
		readyNow = 0
	} else if st.UpdatedReplicas == replicas && st.Replicas == replicas &&
		st.ReadyReplicas == replicas && st.AvailableReplicas == replicas && int32(len(all)) == replicas {
		if replicas == 0 {
			return true, ready, "No pods running", nil
		}
		return true, ready, fmt.Sprintf("%d/%d pods ready", replicas, replicas), nil
	}
	if replicas == 0 {
		return false, nil, fmt.Sprintf("Waiting for %d pods to stop", len(all)), nil
	}
	return false, nil, fmt.Sprintf("Waiting for %d/%d pods ready", readyNow, replicas), nil
}

// observedConditions are d's conditions once the Deployment controller
// observed its generation (gen or later), none before.
func observedConditions(d *appsv1.Deployment, gen int64) []appsv1.DeploymentCondition {
	if d.Generation < gen || d.Status.ObservedGeneration < d.Generation {
		return nil
	}
	return d.Status.Conditions
}

// revisionAnnotation is the Deployment controller's revision of a
// Deployment and of its ReplicaSets.
const revisionAnnotation = "deployment.kubernetes.io/revision"

// currentTemplate is the pod-template-hash of d's pods of its current
// template (generation gen or later), once the Deployment controller made
// its ReplicaSet; "" before.
func currentTemplate(d *appsv1.Deployment, rss cache.Store, gen int64) string {
	if d.Generation < gen || d.Status.ObservedGeneration < d.Generation {
		return ""
	}
	rev := d.Annotations[revisionAnnotation]
	if rev == "" {
		return ""
	}
	for _, o := range rss.List() {
		rs := o.(*appsv1.ReplicaSet)
		owned := false
		for _, ref := range rs.OwnerReferences {
			if ref.Controller != nil && *ref.Controller && ref.UID == d.UID {
				owned = true
			}
		}
		if owned && rs.Annotations[revisionAnnotation] == rev {
			return rs.Labels[appsv1.DefaultDeploymentUniqueLabelKey]
		}
	}
	return ""
}

// podFailure is the cluster's reason why p cannot run, or nil.
func podFailure(p *corev1.Pod) error {
	for _, cond := range p.Status.Conditions {
		if cond.Type == corev1.PodScheduled && cond.Status == corev1.ConditionFalse && cond.Reason == corev1.PodReasonUnschedulable {
			return fmt.Errorf("%w: pod %s: FailedScheduling: %s", ErrPodFailed, p.Name, cond.Message)
		}
	}
	for _, cs := range append(append([]corev1.ContainerStatus{}, p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...) {
		if w := cs.State.Waiting; w != nil && waitingReasons[w.Reason] {
			if w.Message != "" {
				return fmt.Errorf("%w: pod %s: container %s: %s: %s", ErrPodFailed, p.Name, cs.Name, w.Reason, w.Message)
			}
			return fmt.Errorf("%w: pod %s: container %s: %s", ErrPodFailed, p.Name, cs.Name, w.Reason)
		}
	}
	if p.Status.Phase == corev1.PodFailed {
		return fmt.Errorf("%w: pod %s failed: %s: %s", ErrPodFailed, p.Name, p.Status.Reason, p.Status.Message)
	}
	return nil
}

func podReady(p *corev1.Pod) bool {
	for _, cond := range p.Status.Conditions {
		if cond.Type == corev1.PodReady {
			return cond.Status == corev1.ConditionTrue
		}
	}
	return false
}

// transientFailure tells a pod creation refused for a moment: the quota's
// usage or the namespace's ServiceAccount not there yet (the ReplicaSet
// controller retries).
func transientFailure(msg string) bool {
	return strings.Contains(msg, "status unknown for quota") || strings.Contains(msg, "error looking up service account")
}
