package kubernetes

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
)

const twoDocManifest = `# a web server and its service
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels:
    tier: front
spec:
  replicas: 2
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: nginx
        image: registry.example/nginx:1
        ports:
        - containerPort: 80
---
apiVersion: v1
kind: Service
metadata:
  name: web
  resourceVersion: "12345"
  uid: 0d9f6a4e-0000-4000-8000-000000000000
spec:
  selector:
    app: web
  ports:
  - port: 80
    targetPort: 80
`

const statefulSetDoc = `---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
spec:
  replicas: 1
  selector:
    matchLabels:
      app: db
  template:
    metadata:
      labels:
        app: db
    spec:
      containers:
      - name: db
        image: registry.example/db:1
`

func manifestApp(manifest string) *edgeproto.App {
	return &edgeproto.App{
		Key:                &edgeproto.AppKey{Organization: "dev", Name: "web-manifest", Version: "1"},
		Deployment:         "kubernetes",
		DeploymentManifest: manifest,
	}
}

// TestManifestApp: an App given as a manifest (a Deployment, a Service
// exported from a cluster with its resourceVersion and uid, a StatefulSet)
// is applied into the cluster's namespace with the field manager
// edgekit, every object labelled with the instance and fenced, goes READY
// once the Deployment's pods are, is listed by ListInsts, prunes what an
// updated manifest drops, and is deleted by label.
func TestManifestApp(t *testing.T) {
	env := testEnv(t)
	cs := admin(t, env)
	ctx := executor.WithFence(testCtx(t), executor.Fence{Key: "claim", Token: 7})
	p := newPlatform(t)
	cl := testCloudlet("manifest", env.AdminKubeconfig())
	ci := testCluster(cl, "manifest")
	if err := p.CreateCluster(ctx, cl, ci, nil, &steps{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.DeleteCluster(testCtx(t), cl, ci, nil, &steps{}) })
	app := manifestApp(twoDocManifest + statefulSetDoc)
	inst := testInst(ci, app, "from-manifest")
	r := refsOf(ci, inst)
	st := &steps{}
	rt, err := p.CreateAppInst(ctx, ci, app, inst, nil, st)
	if err != nil {
		t.Fatal(err)
	}
	if len(rt.GetContainerIds()) != 3 || !slices.Equal(rt.GetPorts(), []uint32{80}) || len(rt.GetEndpoints()) != 2 || rt.GetEndpoints()[0].GetKind() != EndpointClusterIP ||
		rt.GetEndpoints()[1].GetKind() != EndpointClusterDNS || rt.GetEndpoints()[1].GetHost() != "web."+r.ns+".svc.cluster.local" {
		t.Errorf("runtime %v, want 3 containers (the Deployment's 2, the StatefulSet's 1), port 80, its cluster IP and its cluster DNS name", rt)
	}
	if !slices.Contains(st.list(), "3/3 pods ready") {
		t.Errorf("steps %q, want 3/3 pods ready", st.list())
	}
	sts, err := cs.AppsV1().StatefulSets(r.ns).Get(ctx, "db", metav1.GetOptions{})
	if err != nil || sts.Status.ReadyReplicas != 1 {
		t.Fatalf("statefulset after the create: %v, %v; want 1 ready replica", sts, err)
	}
	dep, err := cs.AppsV1().Deployments(r.ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := cs.CoreV1().Services(r.ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []metav1.Object{dep, svc} {
		applied := false
		for _, mf := range o.GetManagedFields() {
			applied = applied || (mf.Manager == FieldManager && mf.Operation == metav1.ManagedFieldsOperationApply)
		}
		if o.GetLabels()[LabelAppInst] != r.labels[LabelAppInst] || o.GetAnnotations()[AnnAppInstKey] == "" || o.GetAnnotations()[AnnFence] != "7" || !applied {
			t.Errorf("%s: labels %v annotations %v applied by %s: %v; want the instance's label, key and fence, applied by %s",
				o.GetName(), o.GetLabels(), o.GetAnnotations(), FieldManager, applied, FieldManager)
		}
	}
	if dep.Labels["tier"] != "front" || dep.Spec.Template.Labels[LabelAppInst] != r.labels[LabelAppInst] || dep.Spec.Template.Labels["app"] != "web" {
		t.Errorf("deployment labels %v, template labels %v: want the manifest's and the instance's", dep.Labels, dep.Spec.Template.Labels)
	}
	inv, err := p.ListInsts(ctx, cl)
	if err != nil || len(inv.AppInsts) != 1 || inv.AppInsts[0].GetState() != edgeproto.TrackedState_TRACKED_STATE_READY ||
		executor.KeyString(inv.AppInsts[0].GetKey()) != executor.KeyString(inst.GetKey()) {
		t.Fatalf("inventory %v, %v; want the manifest instance READY", inv, err)
	}
	if lrt := inv.AppInsts[0].GetRuntimeInfo(); !slices.Equal(lrt.GetContainerIds(), rt.GetContainerIds()) || len(lrt.GetEndpoints()) != 2 {
		t.Errorf("listed runtime %v, want the create's containers %v and the 2 endpoints", lrt, rt.GetContainerIds())
	}
	// A workload that stops being available after the create is seen by
	// the next listing: scaled below its manifest's replicas, or deleted,
	// its instance is listed with no container (its Service's endpoints
	// stay). An update applies the manifest again and waits: the listing
	// has the containers again.
	listed := func(what string, containers int) {
		t.Helper()
		inv, err := p.ListInsts(ctx, cl)
		if err != nil || len(inv.AppInsts) != 1 {
			t.Fatalf("%s: inventory %v, %v", what, inv, err)
		}
		if lrt := inv.AppInsts[0].GetRuntimeInfo(); len(lrt.GetContainerIds()) != containers || len(lrt.GetEndpoints()) != 2 {
			t.Errorf("%s: listed runtime %v, want %d containers and the 2 endpoints", what, lrt, containers)
		}
	}
	if _, err := cs.AppsV1().Deployments(r.ns).Patch(ctx, "web", types.MergePatchType, []byte(`{"spec":{"replicas":0}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	listed("the deployment scaled to 0", 0)
	if rt, err := p.UpdateAppInst(ctx, ci, app, inst, nil, &steps{}); err != nil || len(rt.GetContainerIds()) != 3 {
		t.Fatalf("the manifest applied again: %v, %v; want 3 containers", rt, err)
	}
	listed("the manifest applied again", 3)
	if err := cs.AppsV1().StatefulSets(r.ns).Delete(ctx, "db", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	listed("the statefulset deleted", 0)

	// Update: a new image, the Service and the StatefulSet dropped from
	// the manifest.
	app.DeploymentManifest = strings.ReplaceAll(strings.Split(twoDocManifest, "---")[0], "nginx:1", "nginx:2")
	if _, err := p.UpdateAppInst(ctx, ci, app, inst, nil, &steps{}); err != nil {
		t.Fatal(err)
	}
	dep, err = cs.AppsV1().Deployments(r.ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil || dep.Spec.Template.Spec.Containers[0].Image != "registry.example/nginx:2" {
		t.Fatalf("deployment after the update: %v, %v", dep, err)
	}
	if _, err := cs.CoreV1().Services(r.ns).Get(ctx, "web", metav1.GetOptions{}); err == nil {
		t.Errorf("the service dropped from the manifest is still there")
	}
	if s, err := cs.AppsV1().StatefulSets(r.ns).Get(ctx, "db", metav1.GetOptions{}); err == nil && s.DeletionTimestamp == nil {
		t.Errorf("the statefulset dropped from the manifest is still there")
	}

	// The delete finds the Service's resource too (listed in the record),
	// and removes everything labelled with the instance.
	for i := range 2 {
		if err := p.DeleteAppInst(ctx, ci, app, inst, nil, &steps{}); err != nil {
			t.Fatalf("delete #%d: %v", i+1, err)
		}
	}
	deps, _ := cs.AppsV1().Deployments(r.ns).List(ctx, metav1.ListOptions{LabelSelector: r.sel})
	pods, _ := cs.CoreV1().Pods(r.ns).List(ctx, metav1.ListOptions{LabelSelector: r.sel})
	cms, _ := cs.CoreV1().ConfigMaps(r.ns).List(ctx, metav1.ListOptions{LabelSelector: r.sel})
	if len(deps.Items)+len(pods.Items)+len(cms.Items) != 0 {
		t.Errorf("after the delete: %d deployments, %d pods, %d config maps of the instance", len(deps.Items), len(pods.Items), len(cms.Items))
	}
	if inv, err := p.ListInsts(ctx, cl); err != nil || len(inv.AppInsts) != 0 {
		t.Errorf("inventory after the delete: %v, %v", inv, err)
	}
}

// TestManifestRefused: a manifest holding a cluster-scoped object or an
// object of another namespace is refused naming the object, malformed YAML
// naming its document, power off is refused, and nothing is written.
func TestManifestRefused(t *testing.T) {
	env := testEnv(t)
	cs := admin(t, env)
	ctx := testCtx(t)
	p := newPlatform(t)
	cl := testCloudlet("manifest-refused", env.AdminKubeconfig())
	ci := testCluster(cl, "refused")
	if err := p.CreateCluster(ctx, cl, ci, nil, &steps{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.DeleteCluster(testCtx(t), cl, ci, nil, &steps{}) })
	svc := strings.Split(twoDocManifest, "---")[1]
	for _, tc := range []struct {
		name, manifest string
		quote          []string
	}{
		{"cluster role", svc + "---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: god\nrules: []\n",
			[]string{"ClusterRole god (document 2)", "cluster-scoped"}},
		{"other namespace", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\n  namespace: other\n---\n" + svc,
			[]string{"ConfigMap other/cfg (document 1)", `namespace "other"`}},
		{"malformed", svc + "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: [unclosed\n",
			[]string{"document 2"}},
		{"no kind", svc + "---\napiVersion: v1\nmetadata:\n  name: x\n", []string{"document 2: no kind"}},
		{"unknown kind", "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n", []string{"Widget w (document 1)", "serves no Widget"}},
	} {
		app := manifestApp(tc.manifest)
		inst := testInst(ci, app, "refused")
		_, err := p.CreateAppInst(ctx, ci, app, inst, nil, &steps{})
		if !errors.Is(err, executor.ErrBadObject) {
			t.Errorf("%s: %v, want ErrBadObject", tc.name, err)
			continue
		}
		for _, q := range tc.quote {
			if !strings.Contains(err.Error(), q) {
				t.Errorf("%s: %v, want it to name %q", tc.name, err, q)
			}
		}
	}
	// Power off of a manifest instance is refused: the platform does not
	// know its workloads' replicas.
	app := manifestApp(svc)
	off := testInst(ci, app, "refused")
	off.PowerState = edgeproto.PowerState_POWER_STATE_POWER_OFF_REQUESTED
	if _, err := p.UpdateAppInst(ctx, ci, app, off, nil, &steps{}); !errors.Is(err, executor.ErrUnsupported) {
		t.Errorf("power off of a manifest instance: %v, want ErrUnsupported", err)
	}
	r := refsOf(ci, testInst(ci, manifestApp(""), "refused"))
	svcs, _ := cs.CoreV1().Services(r.ns).List(ctx, metav1.ListOptions{LabelSelector: r.sel})
	cms, _ := cs.CoreV1().ConfigMaps(r.ns).List(ctx, metav1.ListOptions{LabelSelector: r.sel})
	if len(svcs.Items)+len(cms.Items) != 0 {
		t.Errorf("a refused manifest wrote %d services and %d config maps", len(svcs.Items), len(cms.Items))
	}
}

// TestStuckRolloutEndsWithProgressDeadline: pods held by a scheduling gate
// stay pending with no reason of their own (nothing fails, nothing
// progresses). The platform gives the Deployment its progress deadline, so
// the create ends with the Deployment's ProgressDeadlineExceeded condition
// (ErrRollout) rather than running into the operation's timeout, which
// with Kubernetes' default deadline (600 s) comes first.
func TestStuckRolloutEndsWithProgressDeadline(t *testing.T) {
	env := testEnv(t)
	p, err := New(Config{ProgressDeadline: 10 * time.Second, Kubeconfig: env.AdminKubeconfig()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	cl := testCloudlet("stuck", env.AdminKubeconfig())
	ci := testCluster(cl, "stuck")
	if err := p.CreateCluster(ctx, cl, ci, nil, &steps{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.DeleteCluster(testCtx(t), cl, ci, nil, &steps{}) })
	gated := strings.Replace(strings.Split(twoDocManifest, "---")[0], "    spec:\n      containers:",
		"    spec:\n      schedulingGates:\n      - name: example.com/never\n      containers:", 1)
	if !strings.Contains(gated, "schedulingGates") {
		t.Fatalf("the manifest was not gated:\n%s", gated)
	}
	app := manifestApp(gated)
	inst := testInst(ci, app, "stuck")
	cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	_, err = p.CreateAppInst(cctx, ci, app, inst, nil, &steps{})
	if !errors.Is(err, ErrRollout) || !strings.Contains(err.Error(), "ProgressDeadlineExceeded") {
		t.Fatalf("create of pods that never schedule: %v, want ErrRollout naming ProgressDeadlineExceeded", err)
	}
	// The gate lifted by an update: the condition of the stuck rollout
	// does not fail the new one.
	app.DeploymentManifest = strings.Split(twoDocManifest, "---")[0]
	if _, err := p.UpdateAppInst(ctx, ci, app, inst, nil, &steps{}); err != nil {
		t.Fatalf("update lifting the gate: %v", err)
	}
	if err := p.DeleteAppInst(ctx, ci, app, inst, nil, &steps{}); err != nil {
		t.Fatal(err)
	}
}
