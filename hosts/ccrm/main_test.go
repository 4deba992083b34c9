package ccrm_test

import (
	"testing"

	"github.com/edgekit/edgekit/hosts/ccrm/ccrmtest"
	"github.com/edgekit/edgekit/internal/testenv/k8senv"
	_ "github.com/edgekit/edgekit/platforms/kubernetes"
)

// TestMain lets the test binary run as a CCRM replica process (see
// ccrmtest.StartReplica) with the remote fake and the kubernetes platforms
// linked in; the package's Kubernetes control plane stops when its tests end.
func TestMain(m *testing.M) {
	ccrmtest.RunReplicaIfAsked()
	k8senv.Shared(m)
}
