package controller_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/edgekit/edgekit/hosts/controller"
)

// Tokens may be added while the API looks tokens up (a test, or an
// embedder, adds one while resource managers report): under the race
// detector, concurrent Add, Lookup and Len must not race.
func TestTokensAreSafeForConcurrentUse(t *testing.T) {
	t.Parallel()
	tokens := controller.NewTokens()
	tokens.Add("admin-token", controller.Principal{Admin: true})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 200 {
				tokens.Add(fmt.Sprintf("org-%d-%d", w, i), controller.Principal{Organization: "acme"})
				if _, ok := tokens.Lookup("admin-token"); !ok {
					t.Error("the admin token vanished")
					return
				}
				_ = tokens.Len()
			}
		})
	}
	wg.Wait()
	if n := tokens.Len(); n != 801 {
		t.Errorf("%d tokens, want 801", n)
	}
}
