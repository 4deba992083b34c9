package kubernetes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
)

// TenantName names the ServiceAccount, Role and RoleBinding of a cluster's
// tenant (IssueClusterCredentials) in the cluster's namespace.
const TenantName = "edgekit-tenant"

// MinTokenLifetime is the shortest token the API server issues
// (TokenRequest refuses less than ten minutes).
const MinTokenLifetime = 10 * time.Minute

var (
	gvrRole        = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"}
	gvrRoleBinding = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"}
)

// TenantRules are what a cluster's tenant may do in its namespace: run
// workloads (pods, Deployments, StatefulSets, ReplicaSets, Jobs,
// CronJobs) with their Services, ConfigMaps, Secrets and volume claims,
// and read its quota, limits and events. Nothing else: no other
// namespace, no cluster-wide resource (nodes, namespaces), no
// NetworkPolicy (the isolation stays the platform's), no RBAC. The
// platform's own credentials must hold these rights to grant them (RBAC
// refuses a Role that escalates): docs/kubernetes-clusterrole.yaml
// includes them.
var TenantRules = []rbacv1.PolicyRule{
	{
		APIGroups: []string{""},
		Resources: []string{"pods", "services", "configmaps", "secrets", "persistentvolumeclaims"},
		Verbs:     []string{"get", "list", "watch", "create", "update", "patch", "delete"},
	},
	{
		APIGroups: []string{""},
		Resources: []string{"pods/log", "events", "resourcequotas", "limitranges", "endpoints"},
		Verbs:     []string{"get", "list", "watch"},
	},
	{
		APIGroups: []string{"apps"},
		Resources: []string{"deployments", "statefulsets", "replicasets", "deployments/scale", "statefulsets/scale"},
		Verbs:     []string{"get", "list", "watch", "create", "update", "patch", "delete"},
	},
	{
		APIGroups: []string{"batch"},
		Resources: []string{"jobs", "cronjobs"},
		Verbs:     []string{"get", "list", "watch", "create", "update", "patch", "delete"},
	},
}

// IssueClusterCredentials makes (or adopts) the cluster's tenant in its
// namespace (TenantPodSecurity enforced on the namespace, the
// ServiceAccount, a Role of TenantRules and the RoleBinding between
// them, fenced like every write) and returns a
// kubeconfig with a new token of the ServiceAccount from the TokenRequest
// API, valid until at least until (MinTokenLifetime at least; the API
// server may cap it: ExpiresAt says). The kubeconfig names the API server
// and the certificate authority of the cloudlet's own kubeconfig, and the
// namespace as its context's default. The namespace must exist (else the
// error matches executor.ErrNotFound).
func (p *Platform) IssueClusterCredentials(ctx context.Context, cloudlet *edgeproto.Cloudlet, ci *edgeproto.ClusterInst, until time.Time) (*executor.ClusterCredentials, error) {
	c, err := p.connFor(cloudlet)
	if err != nil {
		return nil, err
	}
	clk, ck := cloudlet.GetKey(), ci.GetKey()
	ns := namespaceName(clk, ck)
	got, err := c.cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if apierrors.IsNotFound(err) || (err == nil && got.DeletionTimestamp != nil) {
		return nil, fmt.Errorf("cluster %s: namespace %s: %w", executor.KeyString(ci), ns, executor.ErrNotFound)
	}
	if err != nil {
		return nil, apiErr(ctx, "reading", gvrNamespace, "", ns, err)
	}
	if err := enforcePodSecurity(ctx, c, got); err != nil {
		return nil, fmt.Errorf("cluster %s: %w", executor.KeyString(ci), err)
	}
	labels := mergeLabels(clusterLabels(clk, ck), map[string]string{LabelKind: "tenant"})
	meta := metav1.ObjectMeta{Labels: labels, Annotations: clusterAnnotations(clk, ck)}
	if _, err := apply(ctx, c, gvrSA, ns, TenantName, fixed(&corev1.ServiceAccount{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"}, ObjectMeta: meta,
	})); err != nil {
		return nil, fmt.Errorf("cluster %s: %w", executor.KeyString(ci), err)
	}
	if _, err := apply(ctx, c, gvrRole, ns, TenantName, fixed(&rbacv1.Role{
		TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"}, ObjectMeta: meta,
		Rules: TenantRules,
	})); err != nil {
		return nil, fmt.Errorf("cluster %s: %w", executor.KeyString(ci), err)
	}
	if _, err := apply(ctx, c, gvrRoleBinding, ns, TenantName, fixed(&rbacv1.RoleBinding{
		TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"}, ObjectMeta: meta,
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: TenantName},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: TenantName, Namespace: ns}},
	})); err != nil {
		return nil, fmt.Errorf("cluster %s: %w", executor.KeyString(ci), err)
	}
	life := max(time.Until(until), MinTokenLifetime)
	secs := int64((life + time.Second - 1) / time.Second)
	tr, err := c.cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, TenantName, &authnv1.TokenRequest{
		Spec: authnv1.TokenRequestSpec{ExpirationSeconds: &secs},
	}, metav1.CreateOptions{})
	if err != nil {
		// The error of a TokenRequest never carries a token.
		return nil, fmt.Errorf("cluster %s: %w", executor.KeyString(ci), apiErr(ctx, "requesting a token of", gvrSA, ns, TenantName, err))
	}
	kc, err := tenantKubeconfig(c, ns, tr.Status.Token)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", executor.KeyString(ci), err)
	}
	return &executor.ClusterCredentials{
		Kubeconfig: string(kc),
		Endpoint:   c.rc.Host,
		Namespace:  ns,
		Subject:    "system:serviceaccount:" + ns + ":" + TenantName,
		ExpiresAt:  tr.Status.ExpirationTimestamp.Time,
	}, nil
}

// TenantPodSecurity is the Pod Security Standard enforced in a namespace
// whose tenant has credentials: no privileged pods, host namespaces, host
// paths or host ports, by which a workload would leave the namespace.
const TenantPodSecurity = "baseline"

// LabelPodSecurity is the namespace label of the Pod Security admission.
const LabelPodSecurity = "pod-security.kubernetes.io/enforce"

// enforcePodSecurity labels the namespace ns (as read) with
// TenantPodSecurity, unless it is so labelled: a merge patch of that
// label alone (under a field manager of its own, so that the cluster's
// own applies keep it), fenced, with the resourceVersion read as its
// precondition, read again when it lost a race.
func enforcePodSecurity(ctx context.Context, c *conn, ns *corev1.Namespace) error {
	for range writeAttempts {
		if ns.Labels[LabelPodSecurity] == TenantPodSecurity {
			return nil
		}
		if err := checkFence(ctx, gvrNamespace, ns); err != nil {
			return err
		}
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
			"labels": map[string]string{LabelPodSecurity: TenantPodSecurity}, "resourceVersion": ns.ResourceVersion,
		}})
		if err != nil {
			return err
		}
		_, err = c.cs.CoreV1().Namespaces().Patch(ctx, ns.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: FieldManager + "-tenant"})
		if err == nil {
			return nil
		}
		if !apierrors.IsConflict(err) {
			return apiErr(ctx, "labelling", gvrNamespace, "", ns.Name, err)
		}
		cur, err := c.cs.CoreV1().Namespaces().Get(ctx, ns.Name, metav1.GetOptions{})
		if err != nil {
			return apiErr(ctx, "reading", gvrNamespace, "", ns.Name, err)
		}
		ns = cur
	}
	return fmt.Errorf("labelling namespace %s: it kept changing", ns.Name)
}

// tenantKubeconfig is a kubeconfig of the cluster c talks to, with token,
// its context's namespace ns.
func tenantKubeconfig(c *conn, ns, token string) ([]byte, error) {
	rc := c.rc
	ca := rc.TLSClientConfig.CAData
	if len(ca) == 0 && rc.TLSClientConfig.CAFile != "" {
		b, err := os.ReadFile(rc.TLSClientConfig.CAFile)
		if err != nil {
			return nil, fmt.Errorf("%w: reading the certificate authority of the cluster: %v", ErrAccess, err)
		}
		ca = b
	}
	const name = "slice"
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[name] = &clientcmdapi.Cluster{
		Server: rc.Host, CertificateAuthorityData: ca,
		InsecureSkipTLSVerify: rc.TLSClientConfig.Insecure, TLSServerName: rc.TLSClientConfig.ServerName,
	}
	cfg.AuthInfos[TenantName] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: TenantName, Namespace: ns}
	cfg.CurrentContext = name
	b, err := clientcmd.Write(*cfg)
	if err != nil {
		return nil, errors.New("writing the tenant's kubeconfig failed") // never quote it
	}
	return b, nil
}

// RevokeClusterCredentials deletes the cluster's tenant (its RoleBinding,
// Role and ServiceAccount): every token issued for it stops working, as
// the API server checks that a token's ServiceAccount still exists. A
// cluster whose namespace is gone has nothing to revoke.
func (p *Platform) RevokeClusterCredentials(ctx context.Context, cloudlet *edgeproto.Cloudlet, ci *edgeproto.ClusterInst) error {
	c, err := p.connFor(cloudlet)
	if err != nil {
		return err
	}
	ns := namespaceName(cloudlet.GetKey(), ci.GetKey())
	for _, gvr := range []schema.GroupVersionResource{gvrRoleBinding, gvrRole, gvrSA} {
		if err := deleteFenced(ctx, c, gvr, ns, TenantName); err != nil {
			return fmt.Errorf("cluster %s: %w", executor.KeyString(ci), err)
		}
	}
	if err := waitNone(ctx, c, gvrSA, ns, "", "metadata.name="+TenantName); err != nil {
		return fmt.Errorf("cluster %s: %w", executor.KeyString(ci), err)
	}
	return nil
}
