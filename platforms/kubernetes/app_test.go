package kubernetes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/edgekit/edgekit/edgeproto"
)

// TestAppInstLifecycle: a Deployment with secret env through a Secret,
// configs in a ConfigMap, a Service, labels on everything; READY when its
// pods are; update rolls out; power off scales to 0 and on restores;
// delete removes everything.
func TestAppInstLifecycle(t *testing.T) {
	env := testEnv(t)
	cs := admin(t, env)
	ctx := testCtx(t)
	p := newPlatform(t)
	cl := testCloudlet("apps", env.AdminKubeconfig())
	if err := p.InitCloudlet(ctx, cl, nil, &steps{}); err != nil {
		t.Fatal(err)
	}
	ci := testCluster(cl, "apps")
	cst := &steps{}
	if err := p.CreateCluster(ctx, cl, ci, nil, cst); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.DeleteCluster(testCtx(t), cl, ci, nil, &steps{}) })
	if !slices.Contains(cst.list(), "Creating namespace") {
		t.Errorf("cluster steps %q, want Creating namespace", cst.list())
	}
	app := testApp()
	app.EnvVars = []*edgeproto.EnvVar{{Name: "GREETING", Value: "hello"}, {Name: "DB_PASSWORD", Secret: true, SecretValue: "pa55-never-in-spec"}}
	app.Configs = []*edgeproto.ConfigFile{{Kind: "app.yaml", Config: "level: debug\n"}}
	app.Annotations = map[string]string{AnnReplicasWanted: "2"}
	inst := testInst(ci, app, "web")
	st := &steps{}
	rt, err := p.CreateAppInst(ctx, ci, app, inst, nil, st)
	if err != nil {
		t.Fatal(err)
	}
	if len(rt.GetContainerIds()) != 2 || !slices.Equal(rt.GetPorts(), []uint32{8080}) {
		t.Errorf("runtime %v, want 2 pods and port 8080", rt)
	}
	// The pods' progress is reported, at least once they are all ready.
	if !slices.Contains(st.list(), "2/2 pods ready") {
		t.Errorf("steps %q, want 2/2 pods ready", st.list())
	}
	r := refsOf(ci, inst)
	dep, err := cs.AppsV1().Deployments(r.ns).Get(ctx, r.name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(dep)
	if strings.Contains(string(raw), "pa55") {
		t.Fatalf("the secret value is in the Deployment: %s", raw)
	}
	ctr := dep.Spec.Template.Spec.Containers[0]
	if ctr.Image != app.ImagePath || *dep.Spec.Replicas != 2 || ctr.ReadinessProbe == nil || ctr.ReadinessProbe.HTTPGet.Path != "/healthz" {
		t.Errorf("deployment container %+v replicas %d", ctr, *dep.Spec.Replicas)
	}
	var ref string
	for _, e := range ctr.Env {
		if e.Name == "DB_PASSWORD" && e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			ref = e.ValueFrom.SecretKeyRef.Name
		}
	}
	sec, err := cs.CoreV1().Secrets(r.ns).Get(ctx, ref, metav1.GetOptions{})
	if err != nil || string(sec.Data["DB_PASSWORD"]) != "pa55-never-in-spec" {
		t.Fatalf("secret %q: %v, %v", ref, sec, err)
	}
	cms, err := cs.CoreV1().ConfigMaps(r.ns).List(ctx, metav1.ListOptions{LabelSelector: r.sel})
	if err != nil || len(cms.Items) != 1 || cms.Items[0].Data["0-app-yaml"] != "level: debug\n" {
		t.Fatalf("config maps %v, %v", cms, err)
	}
	svc, err := cs.CoreV1().Services(r.ns).Get(ctx, r.name, metav1.GetOptions{})
	if err != nil || len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 8080 {
		t.Fatalf("service %v, %v", svc, err)
	}
	for _, o := range []metav1.Object{dep, sec, &cms.Items[0], svc} {
		if o.GetLabels()[LabelAppInst] != r.labels[LabelAppInst] || o.GetAnnotations()[AnnAppInstKey] == "" {
			t.Errorf("%s lacks the instance's label or key: %v %v", o.GetName(), o.GetLabels(), o.GetAnnotations())
		}
	}

	// Update: a new image is a rollout, waited for; a variable dropped
	// from the App is gone from the Deployment.
	app.ImagePath = "registry.example/web:2"
	app.EnvVars = app.EnvVars[1:]
	if _, err := p.UpdateAppInst(ctx, ci, app, inst, nil, &steps{}); err != nil {
		t.Fatal(err)
	}
	pods, err := cs.CoreV1().Pods(r.ns).List(ctx, metav1.ListOptions{LabelSelector: r.sel})
	if err != nil {
		t.Fatal(err)
	}
	live := 0
	for _, pod := range pods.Items {
		if pod.DeletionTimestamp == nil {
			live++
			if pod.Spec.Containers[0].Image != app.ImagePath {
				t.Errorf("pod %s runs %s after the update", pod.Name, pod.Spec.Containers[0].Image)
			}
		}
	}
	if live != 2 {
		t.Errorf("%d pods after the update, want 2", live)
	}
	dep, _ = cs.AppsV1().Deployments(r.ns).Get(ctx, r.name, metav1.GetOptions{})
	for _, e := range dep.Spec.Template.Spec.Containers[0].Env {
		if e.Name == "GREETING" {
			t.Errorf("GREETING, dropped from the App, is still in the Deployment")
		}
	}

	// Power off, then on.
	inst.PowerState = edgeproto.PowerState_POWER_STATE_POWER_OFF_REQUESTED
	if _, err := p.UpdateAppInst(ctx, ci, app, inst, nil, &steps{}); err != nil {
		t.Fatal(err)
	}
	dep, _ = cs.AppsV1().Deployments(r.ns).Get(ctx, r.name, metav1.GetOptions{})
	if *dep.Spec.Replicas != 0 || dep.Annotations[AnnReplicas] != "2" {
		t.Fatalf("powered off: replicas %d, remembered %q; want 0 and 2", *dep.Spec.Replicas, dep.Annotations[AnnReplicas])
	}
	inv, err := p.ListInsts(ctx, cl)
	if err != nil || len(inv.AppInsts) != 1 || inv.AppInsts[0].GetPowerState() != edgeproto.PowerState_POWER_STATE_POWER_OFF {
		t.Fatalf("inventory of a powered-off instance: %v, %v", inv, err)
	}
	inst.PowerState = edgeproto.PowerState_POWER_STATE_POWER_ON_REQUESTED
	if rt, err = p.UpdateAppInst(ctx, ci, app, inst, nil, &steps{}); err != nil {
		t.Fatal(err)
	}
	dep, _ = cs.AppsV1().Deployments(r.ns).Get(ctx, r.name, metav1.GetOptions{})
	if *dep.Spec.Replicas != 2 || dep.Annotations[AnnReplicas] != "" || len(rt.GetContainerIds()) != 2 {
		t.Fatalf("powered on: replicas %d, remembered %q, runtime %v; want 2 ready", *dep.Spec.Replicas, dep.Annotations[AnnReplicas], rt)
	}

	for i := range 2 {
		if err := p.DeleteAppInst(ctx, ci, app, inst, nil, &steps{}); err != nil {
			t.Fatalf("delete #%d: %v", i+1, err)
		}
	}
	for _, what := range []string{"pods", "secrets", "configmaps", "services"} {
		var n int
		switch what {
		case "pods":
			l, _ := cs.CoreV1().Pods(r.ns).List(ctx, metav1.ListOptions{LabelSelector: r.sel})
			n = len(l.Items)
		case "secrets":
			l, _ := cs.CoreV1().Secrets(r.ns).List(ctx, metav1.ListOptions{LabelSelector: r.sel})
			n = len(l.Items)
		case "configmaps":
			l, _ := cs.CoreV1().ConfigMaps(r.ns).List(ctx, metav1.ListOptions{LabelSelector: r.sel})
			n = len(l.Items)
		case "services":
			l, _ := cs.CoreV1().Services(r.ns).List(ctx, metav1.ListOptions{LabelSelector: r.sel})
			n = len(l.Items)
		}
		if n != 0 {
			t.Errorf("%d %s left after the delete", n, what)
		}
	}
}

// TestUnschedulableFailsWithTheSchedulersReason: pods that fit on no node
// fail the create with FailedScheduling and the scheduler's message, not
// a timeout.
func TestUnschedulableFailsWithTheSchedulersReason(t *testing.T) {
	env := testEnv(t)
	ctx := testCtx(t)
	p := newPlatform(t)
	cl := testCloudlet("unschedulable", env.AdminKubeconfig())
	ci := testCluster(cl, "big")
	if err := p.CreateCluster(ctx, cl, ci, nil, &steps{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.DeleteCluster(testCtx(t), cl, ci, nil, &steps{}) })
	app := testApp()
	inst := testInst(ci, app, "huge")
	inst.Flavor = "k8s.node.64c.1024m"
	_, err := p.CreateAppInst(ctx, ci, app, inst, nil, &steps{})
	if !errors.Is(err, ErrPodFailed) || !strings.Contains(err.Error(), "FailedScheduling") || !strings.Contains(err.Error(), "Insufficient cpu") {
		t.Fatalf("create of pods too big for any node: %v, want ErrPodFailed with FailedScheduling: ... Insufficient cpu", err)
	}
	if err := p.DeleteAppInst(ctx, ci, app, inst, nil, &steps{}); err != nil {
		t.Fatal(err)
	}
}

// TestUpdateUnschedulableFailsWithTheSchedulersReason: an update whose new
// pods fit on no node ends with FailedScheduling and the scheduler's
// message, well before the Deployment's default progress deadline (600 s)
// and before the test's bounded wait, not with a timeout.
func TestUpdateUnschedulableFailsWithTheSchedulersReason(t *testing.T) {
	env := testEnv(t)
	ctx := testCtx(t)
	p := newPlatform(t)
	cl := testCloudlet("upd-unschedulable", env.AdminKubeconfig())
	ci := testCluster(cl, "grow")
	if err := p.CreateCluster(ctx, cl, ci, nil, &steps{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.DeleteCluster(testCtx(t), cl, ci, nil, &steps{}) })
	app := testApp()
	inst := testInst(ci, app, "grows")
	if _, err := p.CreateAppInst(ctx, ci, app, inst, nil, &steps{}); err != nil {
		t.Fatal(err)
	}
	inst.Flavor = "k8s.node.64c.1024m"
	uctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	_, err := p.UpdateAppInst(uctx, ci, app, inst, nil, &steps{})
	if !errors.Is(err, ErrPodFailed) || !strings.Contains(err.Error(), "FailedScheduling") || !strings.Contains(err.Error(), "Insufficient cpu") {
		t.Fatalf("update to pods too big for any node: %v, want ErrPodFailed with FailedScheduling: ... Insufficient cpu", err)
	}
	// The Deployment's own progress deadline follows the operation's
	// time (not Kubernetes' 600 s), so a rollout stuck without a pod
	// reason ends with ProgressDeadlineExceeded before the timeout.
	r := refsOf(ci, inst)
	dep, err := admin(t, env).AppsV1().Deployments(r.ns).Get(ctx, r.name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pd := dep.Spec.ProgressDeadlineSeconds; pd == nil || *pd <= 0 || *pd > 54 {
		t.Errorf("progressDeadlineSeconds %v after an update with 60 s left, want at most 54", ptrStr(pd))
	}
	// Configured: the option wins.
	p2, err := New(Config{ProgressDeadline: 30 * time.Second, Kubeconfig: env.AdminKubeconfig()})
	if err != nil {
		t.Fatal(err)
	}
	inst.Flavor = ""
	if _, err := p2.UpdateAppInst(ctx, ci, app, inst, nil, &steps{}); err != nil {
		t.Fatal(err)
	}
	dep, err = admin(t, env).AppsV1().Deployments(r.ns).Get(ctx, r.name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pd := dep.Spec.ProgressDeadlineSeconds; pd == nil || *pd != 30 {
		t.Errorf("progressDeadlineSeconds %v with ProgressDeadline 30 s, want 30", ptrStr(pd))
	}
	if err := p.DeleteAppInst(ctx, ci, app, inst, nil, &steps{}); err != nil {
		t.Fatal(err)
	}
}

func ptrStr[T any](p *T) string {
	if p == nil {
		return "<nil>"
	}
	return fmt.Sprint(*p)
}

// TestSecretOrConfigChangeRollsPods: pods read the secret environment and
// the configs when they start, so changing a secret value or a config is a
// rollout (a new ReplicaSet whose pods replace the old ones); the pod
// template carries a digest of them, never a value; an update that changes
// neither is no rollout.
func TestSecretOrConfigChangeRollsPods(t *testing.T) {
	env := testEnv(t)
	cs := admin(t, env)
	ctx := testCtx(t)
	p := newPlatform(t)
	cl := testCloudlet("secret-roll", env.AdminKubeconfig())
	ci := testCluster(cl, "roll")
	if err := p.CreateCluster(ctx, cl, ci, nil, &steps{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.DeleteCluster(testCtx(t), cl, ci, nil, &steps{}) })
	app := testApp()
	app.EnvVars = []*edgeproto.EnvVar{{Name: "TOKEN", Secret: true, SecretValue: "first-s3cret-value"}}
	app.Configs = []*edgeproto.ConfigFile{{Kind: "app.yaml", Config: "level: info\n"}}
	inst := testInst(ci, app, "rolls")
	if _, err := p.CreateAppInst(ctx, ci, app, inst, nil, &steps{}); err != nil {
		t.Fatal(err)
	}
	r := refsOf(ci, inst)
	// state is the template's digest and the ReplicaSets' names; every
	// live pod must belong to the newest ReplicaSet.
	state := func(secretValues ...string) (string, []string) {
		t.Helper()
		dep, err := cs.AppsV1().Deployments(r.ns).Get(ctx, r.name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		h := dep.Spec.Template.Annotations[AnnInputsHash]
		if !strings.HasPrefix(h, "sha256:") {
			t.Fatalf("pod template annotation %s = %q, want a sha256 digest", AnnInputsHash, h)
		}
		raw, _ := json.Marshal(dep)
		for _, v := range secretValues {
			if strings.Contains(string(raw), v) || strings.Contains(string(raw), "s3cret") {
				t.Fatalf("a secret value is in the Deployment: %s", raw)
			}
		}
		rss, err := cs.AppsV1().ReplicaSets(r.ns).List(ctx, metav1.ListOptions{LabelSelector: r.sel})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		var cur string
		for _, rs := range rss.Items {
			names = append(names, rs.Name)
			if rs.Spec.Replicas != nil && *rs.Spec.Replicas > 0 {
				cur = rs.Labels[appsv1.DefaultDeploymentUniqueLabelKey]
			}
		}
		slices.Sort(names)
		pods, err := cs.CoreV1().Pods(r.ns).List(ctx, metav1.ListOptions{LabelSelector: r.sel})
		if err != nil {
			t.Fatal(err)
		}
		for _, pod := range pods.Items {
			if pod.DeletionTimestamp == nil && pod.Labels[appsv1.DefaultDeploymentUniqueLabelKey] != cur {
				t.Errorf("pod %s of template %s is live; the current template is %s", pod.Name, pod.Labels[appsv1.DefaultDeploymentUniqueLabelKey], cur)
			}
		}
		return h, names
	}
	h1, rs1 := state("first-s3cret-value")
	if len(rs1) != 1 {
		t.Fatalf("replica sets after the create: %v, want one", rs1)
	}

	// The same App again: no rollout.
	if _, err := p.UpdateAppInst(ctx, ci, app, inst, nil, &steps{}); err != nil {
		t.Fatal(err)
	}
	if h, rs := state("first-s3cret-value"); h != h1 || !slices.Equal(rs, rs1) {
		t.Errorf("an update changing nothing: digest %s -> %s, replica sets %v -> %v; want no rollout", h1, h, rs1, rs)
	}

	// A new secret value: a rollout.
	app.EnvVars[0].SecretValue = "second-s3cret-value"
	if _, err := p.UpdateAppInst(ctx, ci, app, inst, nil, &steps{}); err != nil {
		t.Fatal(err)
	}
	sec, err := cs.CoreV1().Secrets(r.ns).Get(ctx, r.name+"-env", metav1.GetOptions{})
	if err != nil || string(sec.Data["TOKEN"]) != "second-s3cret-value" {
		t.Fatalf("secret after the update: %v, %v", sec, err)
	}
	h2, rs2 := state("first-s3cret-value", "second-s3cret-value")
	if h2 == h1 || len(rs2) != 2 {
		t.Errorf("a changed secret value: digest %s -> %s, replica sets %v -> %v; want a new digest and a new ReplicaSet", h1, h2, rs1, rs2)
	}

	// A changed config: a rollout.
	app.Configs[0].Config = "level: debug\n"
	if _, err := p.UpdateAppInst(ctx, ci, app, inst, nil, &steps{}); err != nil {
		t.Fatal(err)
	}
	h3, rs3 := state("second-s3cret-value")
	if h3 == h2 || len(rs3) != 3 {
		t.Errorf("a changed config: digest %s -> %s, replica sets %v -> %v; want a new digest and a new ReplicaSet", h2, h3, rs2, rs3)
	}
	if err := p.DeleteAppInst(ctx, ci, app, inst, nil, &steps{}); err != nil {
		t.Fatal(err)
	}
}
