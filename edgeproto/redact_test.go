package edgeproto_test

import (
	"testing"

	_ "github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/internal/domaintest"
)

// TestRedactLeavesNoSecret holds every edge-cloud object to its Redact: no
// debug_redact field (access vars, private keys, kubeconfigs, secret env
// values...) survives at any depth, and nothing else changes.
func TestRedactLeavesNoSecret(t *testing.T) {
	domaintest.RedactLeavesNoSecret(t, "edgeproto.v1", 50)
}
