package fluidos_test

import (
	"testing"

	_ "github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/internal/domaintest"
)

// TestRedactLeavesNoSecret holds every FLUIDOS object to its Redact: no
// credential, token or kubeconfig survives at any depth, and nothing else
// changes.
func TestRedactLeavesNoSecret(t *testing.T) {
	domaintest.RedactLeavesNoSecret(t, "fluidos.v1", 50)
}
