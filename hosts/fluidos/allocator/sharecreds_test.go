package allocator_test

import (
	"strings"
	"testing"

	"github.com/edgekit/edgekit/hosts/fluidos/allocator"
)

// TestCredentialsSecretName: the Secret of a service's credentials is
// named after its contract, as a valid Kubernetes name whatever the
// contract's id holds.
func TestCredentialsSecretName(t *testing.T) {
	for contract, want := range map[string]string{
		"c-t-97f1ec32":           "credentials-c-t-97f1ec32",
		"Contract_Mysql/1":       "credentials-contract-mysql-1",
		"ends-with-":             "credentials-ends-with",
		strings.Repeat("a", 300): "credentials-" + strings.Repeat("a", 241),
	} {
		if got := allocator.CredentialsSecretName(contract); got != want {
			t.Errorf("CredentialsSecretName(%q) = %q, want %q", contract, got, want)
		}
	}
}
