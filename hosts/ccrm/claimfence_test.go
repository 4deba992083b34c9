package ccrm_test

import (
	"context"
	"testing"

	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/hosts/ccrm"
)

// TestWithClaimCarriesTheExecutorFence: platforms fence with the
// host-agnostic executor.FenceFrom, so the claim's token must reach them
// through the operation's context.
func TestWithClaimCarriesTheExecutorFence(t *testing.T) {
	ctx := ccrm.WithClaim(context.Background(), &ccrm.Claim{Fence: ccrm.Fence{Key: "/claims/x", Revision: 42}})
	f, ok := executor.FenceFrom(ctx)
	if !ok || f.Token != 42 || f.Key != "/claims/x" {
		t.Fatalf("executor.FenceFrom = %+v, %v; want token 42 of /claims/x", f, ok)
	}
	if _, ok := executor.FenceFrom(context.Background()); ok {
		t.Fatalf("a context without a claim carries a fence")
	}
}
