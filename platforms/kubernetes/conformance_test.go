package kubernetes

import (
	"testing"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/platforms/platformtest"
)

// TestConformance holds the platform to the suite every platform passes,
// on the real control plane: namespaces, Deployments whose pods kwok runs.
func TestConformance(t *testing.T) {
	env := testEnv(t)
	kc := env.AdminKubeconfig()
	platformtest.Run(t, func(t *testing.T) executor.Platform {
		p, err := New(Config{Kubeconfig: kc})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}, platformtest.Options{
		Cloudlet: func() *edgeproto.Cloudlet { return testCloudlet("conformance", kc) },
		Cluster:  testCluster,
		App:      testApp,
		OverQuota: func() (*edgeproto.Cloudlet, *edgeproto.ClusterInst, string) {
			cl := testCloudlet("conformance-quota", kc)
			cl.ResourceQuotas = []*edgeproto.ResourceQuota{{Name: ResourceVCPUs, Value: 2}}
			ci := testCluster(cl, "too-big")
			ci.NodePools = []*edgeproto.NodePool{{Name: "pool", NumNodes: 2, NodeResources: &edgeproto.NodeResources{Vcpus: 2, RamMb: 1024}}}
			return cl, ci, ResourceVCPUs
		},
	})
}
