package controller_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/fluidos/rear"
	"github.com/edgekit/edgekit/hosts/controller/controllertest"
	"github.com/edgekit/edgekit/hosts/controller/ui"
	"github.com/edgekit/edgekit/hosts/controller/ui/fluidossource"
	"github.com/edgekit/edgekit/hosts/fluidos/node"
	"github.com/edgekit/edgekit/hosts/fluidos/nodetest"
	"github.com/edgekit/edgekit/internal/kvservice"
)

// The status page shows what two real FLUIDOS nodes trade (fed by their
// APIs): a solver that fails, then a purchase whose solver, and the
// contract on each side, appear as they happen, a deleted solver leaves
// the page, a released contract shows as released, organizations see none of it, and the buyer's password never
// shows.
func TestStatusPageShowsFluidosTrades(t *testing.T) {
	t.Parallel()
	bctx := browser(t)
	env := controllertest.Start(t, controllertest.Options{})
	nw := nodetest.NewNetwork(t)
	kv := kvservice.Blueprint("kv", 1) // provisioned on the node's fake platform
	bob := nw.Start(node.Options{NodeID: "bob", Blueprints: []*fluidos.ServiceBlueprint{kv}})
	alice := nw.Start(node.Options{NodeID: "alice", Peers: []string{bob.RearAddr()}})

	var sources []ui.Source
	for _, n := range []*nodetest.Node{alice, bob} {
		src, err := fluidossource.New(fluidossource.Config{Conn: n.Conn(), Interval: 100 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		sources = append(sources, src)
	}
	srv := servePage(t, ui.Config{Authenticate: env.Controller.UIAuthenticator(), Sources: append(env.Controller.UISources(), sources...)})

	// Each API call has its own deadline: the test as a whole waits on
	// the page many times, longer than one call's budget under load.
	call := func() context.Context {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		t.Cleanup(cancel)
		return ctx
	}
	solver := func(id, category string) {
		sel, err := rear.ParseQuery(fluidos.FlavorType_FLAVOR_TYPE_SERVICE, url.Values{"filter[category][match]": {category}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := alice.Solvers().CreateSolver(call(), &fluidos.CreateSolverRequest{Solver: &fluidos.Solver{Id: id, Selector: sel,
			FindCandidate: true, ReserveAndBuy: true, EstablishPeering: true, Configuration: &fluidos.Configuration{Spec: &fluidos.Configuration_Service{
				Service: &fluidos.ServiceConfiguration{Parameters: map[string]string{"password": "planted-password-5521"}}}}}}); err != nil {
			t.Fatal(err)
		}
	}
	solver("nothing", "no-such-category")
	if s := alice.WaitSolver("nothing", 30*time.Second); s.GetStatus().GetSolverPhase() != fluidos.Phase_PHASE_FAILED {
		t.Fatalf("solver nothing ended %v", s.GetStatus())
	}

	cell := func(kind, key, col string) string {
		return `table[data-kind="` + kind + `"] tr[data-key="` + key + `"] td` + col
	}
	if err := chromedp.Do(bctx, chromedp.Navigate(srv.URL+"/ui/#/fluidos")); err != nil {
		t.Fatalf("open the page: %v", err)
	}
	login := func(token string) {
		t.Helper()
		c, cancel := context.WithTimeout(bctx, 30*time.Second)
		defer cancel()
		if err := chromedp.Do(c, chromedp.WaitVisible(chromedp.CSS("#token")), chromedp.SendKeys(chromedp.CSS("#token"), token),
			chromedp.Click(chromedp.CSS("#login button[type=submit]")), chromedp.WaitVisible(chromedp.CSS("#logout"))); err != nil {
			t.Fatalf("log in: %v", err)
		}
		loginFormGone(t, bctx)
	}
	login(env.AdminToken())
	pollText(t, bctx, cell("Solver", "alice/nothing", ".state"), "FAILED", 10*time.Second)

	// A purchase: the solver and the contract on each side appear.
	solver("buy", "database")
	s := alice.WaitSolver("buy", 30*time.Second)
	if s.GetStatus().GetSolverPhase() != fluidos.Phase_PHASE_SOLVED {
		t.Fatalf("solver buy ended %v", s.GetStatus())
	}
	start := time.Now()
	contract := s.GetStatus().GetContractId()
	pollText(t, bctx, cell("Solver", "alice/buy", ".state"), "SOLVED", 10*time.Second)
	// The solver as a pipeline of its phases.
	for _, phase := range []string{"discovery", "reservation", "purchase", "allocation"} {
		pollText(t, bctx, cell("Solver", "alice/buy", `.phases li[data-phase="`+phase+`"] span`), "SOLVED", 10*time.Second)
	}
	screenshot(t, bctx, "fluidos")
	pollText(t, bctx, cell("Contract", "alice/"+contract, ".state"), "ACTIVE", 10*time.Second)
	pollText(t, bctx, cell("Contract", "bob/"+nodetest.SoldID(contract), ":nth-child(4)"), "bob -> alice", 10*time.Second)
	// Its allocation, provisioned by bob, ACTIVE on both sides.
	pollText(t, bctx, cell("Allocation", "alice/a-"+contract, ".state"), "ACTIVE", 10*time.Second)
	pollText(t, bctx, cell("Allocation", "bob/a-"+nodetest.SoldID(contract), ".state"), "ACTIVE", 10*time.Second)
	t.Logf("the page showed the contract %v after the API did", time.Since(start).Round(time.Millisecond))

	// A deleted solver leaves the page.
	if _, err := alice.Solvers().DeleteSolver(call(), &fluidos.DeleteSolverRequest{Id: "nothing"}); err != nil {
		t.Fatal(err)
	}
	waitGone(t, bctx, cell("Solver", "alice/nothing", ""), 10*time.Second)
	// Deleting the buying solver releases its contract: both sides show it.
	if _, err := alice.Solvers().DeleteSolver(call(), &fluidos.DeleteSolverRequest{Id: "buy"}); err != nil {
		t.Fatal(err)
	}
	pollText(t, bctx, cell("Contract", "alice/"+contract, ".state"), "RELEASED", 20*time.Second)
	pollText(t, bctx, cell("Contract", "bob/"+nodetest.SoldID(contract), ".state"), "RELEASED", 20*time.Second)

	html := pageHTML(t, bctx)
	if strings.Contains(html, "planted-password-5521") {
		t.Error("the page shows the buyer's password")
	}
	if !strings.Contains(html, "(admin only)") {
		t.Error("the FLUIDOS rows are not marked as the admin's")
	}

	// An organization sees no FLUIDOS row.
	c, cancelLogout := context.WithTimeout(bctx, 10*time.Second)
	defer cancelLogout()
	if err := chromedp.Do(c, chromedp.Click(chromedp.CSS("#logout")), chromedp.WaitVisible(chromedp.CSS("#token"))); err != nil {
		t.Fatalf("log out: %v", err)
	}
	login(env.OrgToken("developer"))
	if html := pageHTML(t, bctx); strings.Contains(html, contract) || strings.Contains(html, `data-kind="Solver"`) {
		t.Error("an organization sees the FLUIDOS nodes' trades")
	}
}

// pageHTML returns the page's HTML.
func pageHTML(t *testing.T, bctx context.Context) string {
	t.Helper()
	c, cancel := context.WithTimeout(bctx, 10*time.Second)
	defer cancel()
	html, err := chromedp.Run(c, chromedp.OuterHTML(chromedp.CSS("html")))
	if err != nil {
		t.Fatal(err)
	}
	return html
}

// waitGone waits until no element matches sel.
func waitGone(t *testing.T, bctx context.Context, sel string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		c, cancel := context.WithTimeout(bctx, time.Second)
		n, err := chromedp.Run(c, chromedp.Evaluate[int](`document.querySelectorAll(`+"`"+sel+"`"+`).length`))
		cancel()
		if err == nil && n == 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s still on the page after %v", sel, timeout)
}
