package kubernetes

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
)

// Labels and annotations on everything the platform creates. Label values
// are hashes of keys (a key does not fit a label value's syntax); the keys
// themselves are in annotations, as protojson.
const (
	LabelManagedBy = "app.kubernetes.io/managed-by"
	LabelCloudlet  = "edgekit.io/cloudlet"
	LabelCluster   = "edgekit.io/cluster"
	LabelAppInst   = "edgekit.io/appinst"
	LabelKind      = "edgekit.io/kind"

	AnnCloudletKey = "edgekit.io/cloudlet-key"
	AnnClusterKey  = "edgekit.io/cluster-key"
	AnnAppInstKey  = "edgekit.io/appinst-key"
	AnnAppKey      = "edgekit.io/app-key"
	// AnnState is "ready" once a create finished, "creating" before.
	AnnState = "edgekit.io/state"
	// AnnFence is the fencing token of the claim the last write was made
	// under (see executor.Fence).
	AnnFence = "edgekit.io/fence"
	// AnnReplicas remembers a powered-off Deployment's replicas.
	AnnReplicas = "edgekit.io/powered-off-replicas"
	// AnnWantedReplicas on a Deployment or StatefulSet of a manifest is
	// the replicas its manifest asks for: one scaled below them since is
	// not available (ListInsts reports the instance without containers).
	AnnWantedReplicas = "edgekit.io/wanted-replicas"
	// AnnRestartedAt on a pod template restarts the pods (reboot).
	AnnRestartedAt = "edgekit.io/restarted-at"
	// AnnInputsHash on a pod template is a digest of the Secret and the
	// ConfigMap the pods read (never their values): a change rolls the
	// Deployment.
	AnnInputsHash = "edgekit.io/inputs-hash"
	// AnnReplicasWanted, on an App or AppInst, asks for that many pods
	// (default 1).
	AnnReplicasWanted = "kubernetes.edgekit.io/replicas"

	managedBy = "edgekit"
	kindNS    = "cluster"
	kindApp   = "appinst"

	stateCreating = "creating"
	stateReady    = "ready"
)

// hash is the label value of a key path: 40 hex digits of a SHA-256.
func hash(parts ...proto.Message) string {
	h := sha256.New()
	for _, p := range parts {
		s := executor.KeyString(p)
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:40]
}

// slug is s reduced to at most n characters of [a-z0-9-], never starting
// or ending with '-'.
func slug(s string, n int) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if b.Len() >= n {
			break
		}
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			if b.Len() > 0 && !strings.HasSuffix(b.String(), "-") {
				b.WriteByte('-')
			}
		}
	}
	return strings.Trim(b.String(), "-")
}

// clusterID is the label value of a cluster on a cloudlet.
func clusterID(cloudlet *edgeproto.CloudletKey, cluster *edgeproto.ClusterKey) string {
	return hash(cloudlet, cluster)
}

// namespaceName is the namespace of a cluster: readable, unique per
// cloudlet and cluster, at most 63 characters.
func namespaceName(cloudlet *edgeproto.CloudletKey, cluster *edgeproto.ClusterKey) string {
	n := "ek-" + slug(cluster.GetName(), 30)
	return strings.TrimSuffix(n, "-") + "-" + clusterID(cloudlet, cluster)[:12]
}

// appInstID is the label value of an instance.
func appInstID(cloudlet *edgeproto.CloudletKey, cluster *edgeproto.ClusterKey, inst *edgeproto.AppInstKey) string {
	return hash(cloudlet, cluster, inst)
}

// appName is the name of an instance's Deployment, Service, Secret and
// ConfigMap (with suffixes): a DNS-1035 label.
func appName(cloudlet *edgeproto.CloudletKey, cluster *edgeproto.ClusterKey, inst *edgeproto.AppInstKey) string {
	n := "ek-" + slug(inst.GetName(), 30)
	return strings.TrimSuffix(n, "-") + "-" + appInstID(cloudlet, cluster, inst)[:10]
}

func keyJSON(m proto.Message) string {
	b, _ := protojson.Marshal(m)
	return string(b)
}

func cloudletSelector(cloudlet *edgeproto.CloudletKey) string {
	return LabelManagedBy + "=" + managedBy + "," + LabelCloudlet + "=" + hash(cloudlet)
}

func clusterLabels(cloudlet *edgeproto.CloudletKey, cluster *edgeproto.ClusterKey) map[string]string {
	return map[string]string{
		LabelManagedBy: managedBy,
		LabelCloudlet:  hash(cloudlet),
		LabelCluster:   clusterID(cloudlet, cluster),
	}
}

func clusterAnnotations(cloudlet *edgeproto.CloudletKey, cluster *edgeproto.ClusterKey) map[string]string {
	return map[string]string{
		AnnCloudletKey: keyJSON(cloudlet),
		AnnClusterKey:  keyJSON(cluster),
	}
}

func appLabels(cloudlet *edgeproto.CloudletKey, cluster *edgeproto.ClusterKey, inst *edgeproto.AppInstKey) map[string]string {
	l := clusterLabels(cloudlet, cluster)
	l[LabelAppInst] = appInstID(cloudlet, cluster, inst)
	return l
}
