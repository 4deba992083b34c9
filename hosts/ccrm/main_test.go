package ccrm_test

import (
	"os"
	"testing"

	"github.com/edgekit/edgekit/hosts/ccrm/ccrmtest"
)

// TestMain lets the test binary run as a CCRM replica process (see
// ccrmtest.StartReplica) with the remote fake platform linked in.
func TestMain(m *testing.M) {
	ccrmtest.RunReplicaIfAsked()
	os.Exit(m.Run())
}
