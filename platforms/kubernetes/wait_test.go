package kubernetes

import (
	"errors"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

// TestRolloutStateReasons: the reasons kwok's simulated pods never show
// (a container that cannot pull its image or keeps crashing) end a wait
// with the cluster's reason; a quota refusal ends it, the transient
// refusals of a new namespace do not.
func TestRolloutStateReasons(t *testing.T) {
	one := int32(1)
	dep := func(conds ...appsv1.DeploymentCondition) cache.Store {
		s := cache.NewStore(cache.MetaNamespaceKeyFunc)
		_ = s.Add(&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "d", Namespace: "ns", Generation: 1, UID: "d-uid", Annotations: map[string]string{revisionAnnotation: "2"}},
			Spec: appsv1.DeploymentSpec{Replicas: &one}, Status: appsv1.DeploymentStatus{ObservedGeneration: 1, Conditions: conds}})
		return s
	}
	yes := true
	rss := cache.NewStore(cache.MetaNamespaceKeyFunc)
	for rev, hash := range map[string]string{"1": "old", "2": "new"} {
		_ = rss.Add(&appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "d-" + hash, Namespace: "ns",
			Labels: map[string]string{appsv1.DefaultDeploymentUniqueLabelKey: hash}, Annotations: map[string]string{revisionAnnotation: rev},
			OwnerReferences: []metav1.OwnerReference{{UID: "d-uid", Controller: &yes, Kind: "Deployment", Name: "d"}}}})
	}
	waitingIn := func(hash, reason string) cache.Store {
		s := cache.NewStore(cache.MetaNamespaceKeyFunc)
		_ = s.Add(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", Labels: map[string]string{appsv1.DefaultDeploymentUniqueLabelKey: hash}}, Status: corev1.PodStatus{
			ContainerStatuses: []corev1.ContainerStatus{{Name: "app", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: "details"}}}}}})
		return s
	}
	waiting := func(reason string) cache.Store { return waitingIn("new", reason) }
	empty := cache.NewStore(cache.MetaNamespaceKeyFunc)
	for _, tc := range []struct {
		name  string
		deps  cache.Store
		pods  cache.Store
		want  error
		quote string
	}{
		{"image pull", dep(), waiting("ImagePullBackOff"), ErrPodFailed, "ImagePullBackOff: details"},
		{"crash loop", dep(), waiting("CrashLoopBackOff"), ErrPodFailed, "CrashLoopBackOff"},
		{"starting", dep(), waiting("ContainerCreating"), nil, ""},
		// A pod of the previous template is being replaced.
		{"old template", dep(), waitingIn("old", "ImagePullBackOff"), nil, ""},
		{"quota", dep(appsv1.DeploymentCondition{Type: appsv1.DeploymentReplicaFailure, Status: corev1.ConditionTrue, Reason: "FailedCreate",
			Message: `pods "x" is forbidden: exceeded quota: edgekit-quota`}), empty, ErrPodFailed, "exceeded quota"},
		{"new namespace", dep(appsv1.DeploymentCondition{Type: appsv1.DeploymentReplicaFailure, Status: corev1.ConditionTrue, Reason: "FailedCreate",
			Message: `pods "x" is forbidden: error looking up service account ns/default: serviceaccount "default" not found`}), empty, nil, ""},
		{"stuck", dep(appsv1.DeploymentCondition{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded",
			Message: "too slow"}), empty, ErrRollout, "ProgressDeadlineExceeded: too slow"},
	} {
		done, _, msg, err := rolloutState(tc.deps, rss, tc.pods, "d", 1, 1)
		if tc.want == nil {
			if err != nil || done || !strings.HasPrefix(msg, "Waiting for") {
				t.Errorf("%s: done %v, %q, %v; want still waiting", tc.name, done, msg, err)
			}
			continue
		}
		if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.quote) {
			t.Errorf("%s: %v, want %v quoting %q", tc.name, err, tc.want, tc.quote)
		}
	}
}

// TestRolloutStateIgnoresConditionsOfAReplacedRollout: the stuck
// condition of the rollout an update just replaced (a generation the
// Deployment controller has not observed yet) does not fail the new one.
func TestRolloutStateIgnoresConditionsOfAReplacedRollout(t *testing.T) {
	one := int32(1)
	deps := cache.NewStore(cache.MetaNamespaceKeyFunc)
	_ = deps.Add(&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "d", Namespace: "ns", Generation: 3},
		Spec: appsv1.DeploymentSpec{Replicas: &one}, Status: appsv1.DeploymentStatus{ObservedGeneration: 2, Conditions: []appsv1.DeploymentCondition{
			{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded"}}}})
	empty := cache.NewStore(cache.MetaNamespaceKeyFunc)
	done, _, msg, err := rolloutState(deps, empty, empty, "d", 3, 1)
	if err != nil || done || !strings.HasPrefix(msg, "Waiting for") {
		t.Fatalf("rollout of generation 3 with generation 2's stuck condition: done %v, %q, %v; want still waiting", done, msg, err)
	}
	done, _, _, err = manifestState(deps, empty, empty, map[string]int64{"deployments/d": 3})
	if err != nil || done {
		t.Fatalf("manifest rollout of generation 3 with generation 2's stuck condition: done %v, %v; want still waiting", done, err)
	}
}
