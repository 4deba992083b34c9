package kubernetes

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
)

// TestShippedClusterRoleIsEnough: a user bound only to the ClusterRole of
// docs/kubernetes-clusterrole.yaml passes InitCloudlet and can run a
// cluster's lifecycle; a user without it fails naming what is missing, and
// a user whose role lacks one verb fails naming exactly that verb.
func TestShippedClusterRoleIsEnough(t *testing.T) {
	env := testEnv(t)
	cs := admin(t, env)
	ctx := testCtx(t)
	raw, err := os.ReadFile("../../docs/kubernetes-clusterrole.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var role rbacv1.ClusterRole
	if err := yaml.UnmarshalStrict(raw, &role); err != nil {
		t.Fatalf("docs/kubernetes-clusterrole.yaml: %v", err)
	}
	role.Name = "edgekit-platform-test"
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, &role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The same role without "delete" on deployments.
	short := role.DeepCopy()
	short.Name = "edgekit-platform-short"
	for i, r := range short.Rules {
		if len(r.APIGroups) == 1 && r.APIGroups[0] == "apps" && slices.Contains(r.Resources, "deployments") {
			short.Rules[i].Resources = []string{"deployments"}
			short.Rules[i].Verbs = []string{"get", "list", "watch", "create", "patch"}
			others := slices.DeleteFunc(slices.Clone(r.Resources), func(s string) bool { return s == "deployments" })
			if len(others) > 0 {
				short.Rules = append(short.Rules, rbacv1.PolicyRule{APIGroups: r.APIGroups, Resources: others, Verbs: r.Verbs})
			}
		}
	}
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, short, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	bind := func(user, roleName string) {
		if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: user},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: roleName},
			Subjects:   []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: user}},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	bind("operator-ok", role.Name)
	bind("operator-short", short.Name)
	t.Cleanup(func() {
		ctx := testCtx(t)
		for _, n := range []string{"operator-ok", "operator-short"} {
			_ = cs.RbacV1().ClusterRoleBindings().Delete(ctx, n, metav1.DeleteOptions{})
		}
		for _, n := range []string{role.Name, short.Name} {
			_ = cs.RbacV1().ClusterRoles().Delete(ctx, n, metav1.DeleteOptions{})
		}
	})

	p := newPlatform(t)
	ok := testCloudlet("rbac-ok", env.Kubeconfig("operator-ok"))
	if err := p.InitCloudlet(ctx, ok, nil, &steps{}); err != nil {
		t.Fatalf("InitCloudlet as a user bound to the shipped ClusterRole: %v", err)
	}
	// The role is enough for what the platform does, not only for the check.
	ci := testCluster(ok, "rbac")
	if err := p.CreateCluster(ctx, ok, ci, nil, &steps{}); err != nil {
		t.Fatalf("CreateCluster with the shipped ClusterRole: %v", err)
	}
	// It is enough to issue and revoke a tenant's credentials too (RBAC
	// lets it grant only what it holds).
	if _, err := p.IssueClusterCredentials(ctx, ok, ci, time.Now().Add(time.Hour)); err != nil {
		t.Fatalf("IssueClusterCredentials with the shipped ClusterRole: %v", err)
	}
	if err := p.RevokeClusterCredentials(ctx, ok, ci); err != nil {
		t.Fatalf("RevokeClusterCredentials with the shipped ClusterRole: %v", err)
	}
	// An instance of an image and one of a manifest (its rollouts are
	// watched through Deployments, ReplicaSets, StatefulSets and pods).
	app := testApp()
	inst := testInst(ci, app, "rbac-image")
	if _, err := p.CreateAppInst(ctx, ci, app, inst, nil, &steps{}); err != nil {
		t.Fatalf("CreateAppInst with the shipped ClusterRole: %v", err)
	}
	if err := p.DeleteAppInst(ctx, ci, app, inst, nil, &steps{}); err != nil {
		t.Fatalf("DeleteAppInst with the shipped ClusterRole: %v", err)
	}
	mapp := manifestApp(twoDocManifest + statefulSetDoc)
	minst := testInst(ci, mapp, "rbac-manifest")
	if _, err := p.CreateAppInst(ctx, ci, mapp, minst, nil, &steps{}); err != nil {
		t.Fatalf("CreateAppInst of a manifest with the shipped ClusterRole: %v", err)
	}
	if err := p.DeleteAppInst(ctx, ci, mapp, minst, nil, &steps{}); err != nil {
		t.Fatalf("DeleteAppInst of a manifest with the shipped ClusterRole: %v", err)
	}
	if err := p.DeleteCluster(ctx, ok, ci, nil, &steps{}); err != nil {
		t.Fatalf("DeleteCluster with the shipped ClusterRole: %v", err)
	}

	err = p.InitCloudlet(ctx, testCloudlet("rbac-none", env.Kubeconfig("nobody")), nil, &steps{})
	if !errors.Is(err, ErrForbidden) || !strings.Contains(err.Error(), "create namespaces") || !strings.Contains(err.Error(), "watch apps/deployments") {
		t.Fatalf("InitCloudlet without rights: %v, want ErrForbidden naming create namespaces and watch apps/deployments", err)
	}
	err = p.InitCloudlet(ctx, testCloudlet("rbac-short", env.Kubeconfig("operator-short")), nil, &steps{})
	if !errors.Is(err, ErrForbidden) || !strings.Contains(err.Error(), "may not delete apps/deployments (") {
		t.Fatalf("InitCloudlet without delete on deployments: %v, want ErrForbidden naming only delete apps/deployments", err)
	}
}

// TestKubeconfigNeverInErrors: an unusable kubeconfig fails naming the
// access variable, never quoting it.
func TestKubeconfigNeverInErrors(t *testing.T) {
	p := newPlatform(t)
	secret := "token: s3cr3t-never-shown\nthis is: [not a kubeconfig"
	cl := &edgeproto.Cloudlet{Key: &edgeproto.CloudletKey{Organization: "o", Name: "bad"}, AccessVars: map[string]string{AccessVarKubeconfig: secret}}
	err := p.InitCloudlet(testCtx(t), cl, nil, &steps{})
	if !errors.Is(err, ErrAccess) || !strings.Contains(err.Error(), AccessVarKubeconfig) {
		t.Fatalf("InitCloudlet with a broken kubeconfig: %v, want ErrAccess naming %s", err, AccessVarKubeconfig)
	}
	if strings.Contains(err.Error(), "s3cr3t") {
		t.Fatalf("the error quotes the kubeconfig: %v", err)
	}
}

// TestCredentialsTheCloudletNoLongerCarriesAreNotUsed: a platform built
// without a kubeconfig (a CRM's) learns the cloudlet's from its calls and
// serves the calls that know only the cloudlet's key with it; once the
// cloudlet carries none (removed) or an unusable one, neither kind of
// call uses the earlier credentials, and a usable one serves again.
func TestCredentialsTheCloudletNoLongerCarriesAreNotUsed(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "") // outside a cluster: no in-cluster configuration
	env := testEnv(t)
	ctx := testCtx(t)
	p := newPlatform(t)
	cl := testCloudlet("replaced", env.AdminKubeconfig())
	ci := testCluster(cl, "replaced")
	app := testApp()
	inst := testInst(ci, app, "web")
	// Deleting an instance that is absent succeeds when the cluster can be
	// reached: a call that knows only the cloudlet's key.
	byKey := func() error { return p.DeleteAppInst(ctx, ci, app, inst, nil, &steps{}) }
	if err := p.InitCloudlet(ctx, cl, nil, &steps{}); err != nil {
		t.Fatal(err)
	}
	if err := byKey(); err != nil {
		t.Fatalf("a call by key after InitCloudlet: %v", err)
	}
	for _, c := range []struct {
		what, kubeconfig, want string
	}{
		{"no kubeconfig", "", "has no access variable " + AccessVarKubeconfig},
		{"an unusable kubeconfig", "not: [a kubeconfig", AccessVarKubeconfig + " is not a usable kubeconfig"},
	} {
		next := cl.Clone()
		next.AccessVars = nil
		if c.kubeconfig != "" {
			next.AccessVars = map[string]string{AccessVarKubeconfig: c.kubeconfig}
		}
		if err := p.InitCloudlet(ctx, next, nil, &steps{}); !errors.Is(err, ErrAccess) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("InitCloudlet with %s after a usable one: %v, want ErrAccess: ...%s", c.what, err, c.want)
		}
		if err := byKey(); !errors.Is(err, ErrAccess) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("a call by key once the cloudlet has %s: %v, want ErrAccess: ...%s", c.what, err, c.want)
		}
		if err := p.InitCloudlet(ctx, cl, nil, &steps{}); err != nil {
			t.Fatalf("InitCloudlet with the usable kubeconfig again: %v", err)
		}
		if err := byKey(); err != nil {
			t.Fatalf("a call by key with the usable kubeconfig again: %v", err)
		}
	}
}

// TestGatherCloudletInfo reports the nodes with their GPUs, one flavor per
// node shape, and a snapshot that counts pod requests.
func TestGatherCloudletInfo(t *testing.T) {
	env := testEnv(t)
	p := newPlatform(t)
	cl := testCloudlet("gather", env.AdminKubeconfig())
	cl.ResourceQuotas = []*edgeproto.ResourceQuota{{Name: ResourceVCPUs, Value: 5}}
	info := &edgeproto.CloudletInfo{Key: cl.GetKey().Clone()}
	if err := p.GatherCloudletInfo(testCtx(t), cl, info); err != nil {
		t.Fatal(err)
	}
	nodes := map[string]*edgeproto.NodeInfo{}
	for _, n := range info.GetNodeInfos() {
		nodes[n.GetName()] = n
	}
	if a := nodes["node-a"]; a == nil || a.GetAllocatable()["cpu"] != "4" || a.GetAllocatable()["nvidia.com/gpu"] != "2" || a.GetAllocatable()["pods"] != "50" {
		t.Fatalf("node-a: %v, want 4 CPUs, 2 GPUs, 50 pods", a)
	}
	flavors := map[string]*edgeproto.FlavorInfo{}
	for _, f := range info.GetFlavors() {
		flavors[f.GetName()] = f
	}
	if f := flavors["k8s.node.4c.8192m.2g"]; f == nil || f.GetGpus() != 2 || f.GetVcpus() != 4 {
		t.Errorf("flavors %v: want k8s.node.4c.8192m.2g with 2 GPUs", info.GetFlavors())
	}
	if flavors["k8s.node.2c.4096m"] == nil {
		t.Errorf("flavors %v: want k8s.node.2c.4096m", info.GetFlavors())
	}
	res := map[string]*edgeproto.InfraResource{}
	for _, r := range info.GetResourcesSnapshot().GetInfo() {
		res[r.GetName()] = r
	}
	// Other tests of the package may add their own nodes: at least ours.
	if r := res[ResourceVCPUs]; r == nil || r.GetTotal() < 6 || r.GetQuota() != 5 {
		t.Errorf("vCPUs %v: want a total of at least 6 and the quota 5", r)
	}
	if r := res[ResourceGPUs]; r == nil || r.GetTotal() < 2 {
		t.Errorf("GPUs %v: want at least 2", r)
	}
}

// TestUnknownFlavor fails naming the flavor.
func TestUnknownFlavor(t *testing.T) {
	_, err := parseFlavor("m4.large")
	if !errors.Is(err, executor.ErrBadObject) || !strings.Contains(err.Error(), `"m4.large"`) {
		t.Fatalf("parseFlavor(m4.large) = %v", err)
	}
	s, err := parseFlavor("k8s.node.2c.512m.1g")
	if err != nil || s != (size{milliCPU: 2000, memMB: 512, gpus: 1}) {
		t.Fatalf("parseFlavor = %+v, %v", s, err)
	}
}
