package kubernetes

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/platforms/kubernetes/slicetest"
)

// partitionCluster is a cluster of one node pool stating an exact
// partition in its optional resources (what a FLUIDOS K8Slice is).
func partitionCluster(cl *edgeproto.Cloudlet, name string) *edgeproto.ClusterInst {
	ci := testCluster(cl, name)
	ci.NodePools = []*edgeproto.NodePool{{Name: "slice", NumNodes: 1, NodeResources: &edgeproto.NodeResources{
		Vcpus: 2, RamMb: 1536, // rounded up and down: the optional resources win
		OptResMap: map[string]string{OptResCPU: "1500m", OptResMemory: "1600000000", OptResPods: "3", OptResGPU: "1", OptResStorage: "2Gi"},
	}}}
	return ci
}

// TestClusterQuotaIsTheExactPartition: a node pool stating CPU, memory,
// pods, GPUs and storage in its optional resources gets exactly these in
// its namespace's ResourceQuota; a bad quantity fails naming the pool and
// the resource.
func TestClusterQuotaIsTheExactPartition(t *testing.T) {
	env := testEnv(t)
	cs := admin(t, env)
	ctx := testCtx(t)
	p := newPlatform(t)
	cl := testCloudlet("partition", env.AdminKubeconfig())
	ci := partitionCluster(cl, "part")
	if err := p.CreateCluster(ctx, cl, ci, nil, &steps{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.DeleteCluster(testCtx(t), cl, ci, nil, &steps{}) })
	q, err := cs.CoreV1().ResourceQuotas(namespaceName(cl.GetKey(), ci.GetKey())).Get(ctx, quotaName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[corev1.ResourceName]string{
		"requests.cpu": "1500m", "limits.cpu": "1500m",
		"requests.memory": "1600000000", "limits.memory": "1600000000",
		"pods": "3", "requests.nvidia.com/gpu": "1", "requests.storage": "2Gi",
	}
	for name, v := range want {
		got, ok := q.Spec.Hard[name]
		if !ok || got.Cmp(resource.MustParse(v)) != 0 {
			t.Errorf("quota %s = %v (set %v), want %s", name, got.String(), ok, v)
		}
	}
	if len(q.Spec.Hard) != len(want) {
		t.Errorf("quota %v, want exactly %v", q.Spec.Hard, want)
	}

	bad := partitionCluster(cl, "bad")
	bad.NodePools[0].NodeResources.OptResMap[OptResPods] = "lots"
	err = p.CreateCluster(ctx, cl, bad, nil, &steps{})
	if !errors.Is(err, executor.ErrBadObject) || !strings.Contains(err.Error(), `node pool "slice"`) || !strings.Contains(err.Error(), "pods") {
		t.Fatalf("CreateCluster with pods=lots: %v, want ErrBadObject naming the pool and pods", err)
	}
}

// TestClusterCredentials: the kubeconfig issued for a cluster names the
// cloudlet's API server and authority, and a ServiceAccount of the
// cluster's namespace whose token lasts until asked; with it a tenant runs
// a Deployment whose pods run, is refused one beyond the quota ("exceeded
// quota"), and is refused (403) everything outside its namespace; issuing
// again adopts the ServiceAccount and both tokens work; after revocation
// every token is refused (401), and revoking again succeeds.
func TestClusterCredentials(t *testing.T) {
	env := testEnv(t)
	cs := admin(t, env)
	ctx := testCtx(t)
	p := newPlatform(t)
	cl := testCloudlet("creds", env.AdminKubeconfig())
	ci := partitionCluster(cl, "tenant")
	// A cluster that was never created has nothing to issue for.
	if _, err := p.IssueClusterCredentials(ctx, cl, ci, time.Now().Add(time.Hour)); !errors.Is(err, executor.ErrNotFound) {
		t.Fatalf("IssueClusterCredentials before the cluster: %v, want ErrNotFound", err)
	}
	if err := p.CreateCluster(ctx, cl, ci, nil, &steps{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.DeleteCluster(testCtx(t), cl, ci, nil, &steps{}) })
	other := partitionCluster(cl, "neighbour")
	if err := p.CreateCluster(ctx, cl, other, nil, &steps{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.DeleteCluster(testCtx(t), cl, other, nil, &steps{}) })
	ns, otherNS := namespaceName(cl.GetKey(), ci.GetKey()), namespaceName(cl.GetKey(), other.GetKey())
	if _, err := cs.CoreV1().Secrets(otherNS).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "neighbour-secret"},
		StringData: map[string]string{"password": "not-yours"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	until := time.Now().Add(45 * time.Minute)
	creds, err := p.IssueClusterCredentials(ctx, cl, ci, until)
	if err != nil {
		t.Fatal(err)
	}
	if creds.Namespace != ns || creds.Endpoint != env.Server() || creds.Subject != "system:serviceaccount:"+ns+":"+TenantName {
		t.Errorf("credentials namespace %q endpoint %q subject %q, want %q %q and the tenant", creds.Namespace, creds.Endpoint, creds.Subject, ns, env.Server())
	}
	if creds.ExpiresAt.Before(until.Add(-time.Minute)) || creds.ExpiresAt.After(until.Add(5*time.Minute)) {
		t.Errorf("token expires at %v, want about %v", creds.ExpiresAt, until)
	}
	kc, err := clientcmd.Load([]byte(creds.Kubeconfig))
	if err != nil {
		t.Fatal(err)
	}
	cluster := kc.Clusters[kc.Contexts[kc.CurrentContext].Cluster]
	if cluster.Server != env.Server() || !bytes.Equal(cluster.CertificateAuthorityData, env.CAData()) {
		t.Errorf("kubeconfig cluster %s, want server %s and the cluster's authority", cluster.Server, env.Server())
	}
	if admin, _ := clientcmd.Load(env.AdminKubeconfig()); admin != nil {
		for _, u := range admin.AuthInfos {
			if u.Token != "" && strings.Contains(creds.Kubeconfig, u.Token) {
				t.Fatal("the tenant's kubeconfig carries the cloudlet's own token")
			}
		}
	}

	tenant, gotNS := slicetest.Client(t, []byte(creds.Kubeconfig))
	if gotNS != ns {
		t.Fatalf("kubeconfig namespace %q, want %q", gotNS, ns)
	}
	if err := slicetest.RunDeployment(ctx, tenant, ns, slicetest.Deployment("web", 2, "500m", "256Mi")); err != nil {
		t.Fatalf("the tenant's deployment: %v", err)
	}
	msg, err := slicetest.QuotaRefusal(ctx, tenant, ns, slicetest.Deployment("big", 1, "1", "256Mi"))
	if err != nil {
		t.Fatalf("a deployment beyond the quota: %v", err)
	}
	if !strings.Contains(msg, "requests.cpu") {
		t.Errorf("refusal %q, want it to name requests.cpu", msg)
	}
	slicetest.CheckConfined(t, ctx, tenant, ns, otherNS)

	// Issuing again (a renewal) adopts the tenant: both tokens work.
	again, err := p.IssueClusterCredentials(ctx, cl, ci, time.Now().Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if again.Kubeconfig == creds.Kubeconfig || again.ExpiresAt.Before(time.Now().Add(MinTokenLifetime-time.Minute)) {
		t.Errorf("a second token expiring %v (the minimum lifetime is %v), same kubeconfig %v", again.ExpiresAt, MinTokenLifetime, again.Kubeconfig == creds.Kubeconfig)
	}
	tenant2, _ := slicetest.Client(t, []byte(again.Kubeconfig))
	if _, err := tenant.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatalf("the first token after a second was issued: %v", err)
	}
	if _, err := tenant2.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatalf("the second token: %v", err)
	}

	if err := p.RevokeClusterCredentials(ctx, cl, ci); err != nil {
		t.Fatal(err)
	}
	if err := slicetest.WaitUnauthorized(ctx, tenant, ns); err != nil {
		t.Fatalf("the first token after revocation: %v", err)
	}
	if err := slicetest.WaitUnauthorized(ctx, tenant2, ns); err != nil {
		t.Fatalf("the second token after revocation: %v", err)
	}
	// The namespace and its workloads stay: revocation is of the access.
	if _, err := cs.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{}); err != nil {
		t.Errorf("the tenant's deployment after revocation: %v", err)
	}
	if _, err := cs.RbacV1().Roles(ns).Get(ctx, TenantName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the tenant's Role after revocation: %v, want not found", err)
	}
	if err := p.RevokeClusterCredentials(ctx, cl, ci); err != nil {
		t.Fatalf("revoking again: %v", err)
	}
}
