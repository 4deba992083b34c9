package controller_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/hosts/controller/ui"
	"github.com/edgekit/edgekit/hosts/controller/ui/uitest"
	"github.com/edgekit/edgekit/platforms/fake"
)

// browser returns a headless Chromium from Debian's chromium package, or
// skips the test when it is not installed (CI installs it; see .ci/run).
func browser(t *testing.T) context.Context {
	t.Helper()
	path := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		t.Skip("no Chromium on this machine: install Debian's chromium package to run the status page test")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.UserDataDir(t.TempDir()),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	return ctx
}

// The console, in a real headless browser, with a real controller: it logs
// in with an API token; the map places the cloudlets that have a location
// (coloured by state, with their counts) and lists the others; the views
// per kind filter and sort; a change made through the API shows within a
// second; an object's page lists its history in order, errors marked, and
// links to its cluster, cloudlet and App; usage shows quota against use;
// the page works on a narrow screen and from the keyboard, writes no error
// to the console, and never shows a secret or another organization's
// objects, in a page or an event. Screenshots of each view are saved (see
// screenshot).
func TestStatusPageInABrowser(t *testing.T) {
	t.Parallel()
	bctx := browser(t)
	console := consoleErrors(t, bctx)
	w := newWorld(t)
	ctx := testCtx(t)
	const secret = "planted-secret-value-7731"
	if _, err := w.dev.apps.UpdateApp(ctx, &edgeproto.UpdateAppRequest{App: &edgeproto.App{Key: w.app,
		EnvVars: []*edgeproto.EnvVar{{Name: "PW", Secret: true, SecretValue: secret}}}, Fields: []string{edgeproto.AppFieldEnvVars}}); err != nil {
		t.Fatal(err)
	}
	// A second cloudlet, with a location, a quota and credentials.
	site2 := createSite2(t, w, secret)
	if ps, err := drain(w.dev.clusters.CreateClusterInst(ctx, &edgeproto.CreateClusterInstRequest{ClusterInst: &edgeproto.ClusterInst{
		Key: &edgeproto.ClusterKey{Organization: "developer", Name: "c2"}, CloudletKey: site2, FlavorName: "fake.small", Deployment: "docker"}})); err != nil ||
		lastState(t, ps) != edgeproto.TrackedState_TRACKED_STATE_READY {
		t.Fatalf("create c2: %v %v", ps, err)
	}
	// Something of another organization the developer must not see.
	other := clientsOf(w.env.Conn(w.env.OrgToken("other")))
	if ps, err := drain(other.clusters.CreateClusterInst(ctx, &edgeproto.CreateClusterInstRequest{ClusterInst: &edgeproto.ClusterInst{
		Key: &edgeproto.ClusterKey{Organization: "other", Name: "hidden"}, CloudletKey: w.cloudlet, FlavorName: "fake.small"}})); err != nil {
		t.Fatalf("other's cluster: %v %v", ps, err)
	}

	srv := servePage(t, ui.Config{Authenticate: w.env.Controller.UIAuthenticator(), Sources: w.env.Controller.UISources()})
	site1Key, site2Key := cloudletKey(w.cloudlet), cloudletKey(site2)

	run := func(what string, timeout time.Duration, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		c, cancel := context.WithTimeout(bctx, timeout)
		defer cancel()
		if err := chromedp.Do(c, steps...); err != nil {
			t.Fatalf("%s: %v\npage body: %s", what, err, pageHTML(t, bctx))
		}
	}
	text := func(sel string) string {
		t.Helper()
		c, cancel := context.WithTimeout(bctx, 10*time.Second)
		defer cancel()
		got, err := chromedp.Run(c, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("text of %s: %v", sel, err)
		}
		return got
	}
	// The first run starts the browser: it gets no timeout of its own
	// (that would stop the browser with it).
	if err := chromedp.Do(bctx, chromedp.Navigate(srv.URL+"/ui/")); err != nil {
		t.Fatalf("open the page: %v", err)
	}
	run("log in and see the map", 60*time.Second,
		chromedp.WaitVisible(chromedp.CSS("#token")),
		chromedp.SendKeys(chromedp.CSS("#token"), w.env.OrgToken("developer")),
		chromedp.Click(chromedp.CSS("#login button[type=submit]")),
		chromedp.WaitVisible(chromedp.CSS(`#unplaced li[data-key="`+site1Key+`"]`)),
	)
	loginFormGone(t, bctx)

	// The developer's map: the operator's cloudlets its clusters run on,
	// named without details (the API shows it no more), and counts of
	// what the developer sees (other's cluster on site1 is not counted).
	run("site2 listed", 10*time.Second, chromedp.WaitVisible(chromedp.CSS(`#unplaced li[data-key="`+site2Key+`"]`)))
	pollText(t, bctx, `.legend li[data-key="`+site1Key+`"] .counts`, "1 clusters, 0 instances", 5*time.Second)
	pollText(t, bctx, `.legend li[data-key="`+site2Key+`"] .counts`, "1 clusters, 0 instances", 5*time.Second)
	screenshot(t, bctx, "map-developer")

	// Clusters: a view with readable columns, filters and sorting.
	show(t, bctx, "#/kind/ClusterInst")
	cluster1, cluster2 := "name=c1,organization=developer", "name=c2,organization=developer"
	clusterRow := func(key string) string { return `table[data-kind="ClusterInst"] tr[data-key="` + key + `"]` }
	run("see the clusters", 10*time.Second, chromedp.WaitVisible(chromedp.CSS(clusterRow(cluster1)+" td.state")), chromedp.WaitVisible(chromedp.CSS(clusterRow(cluster2))))
	if state := text(clusterRow(cluster1) + " td.state"); state != "READY" {
		t.Errorf("the page shows the cluster as %q, want READY", state)
	}
	if got := text(clusterRow(cluster2) + " td.cloudlet"); got != "site2" {
		t.Errorf("c2's cloudlet column shows %q, want site2", got)
	}
	if got := text(clusterRow(cluster2) + " td.org"); got != "developer" {
		t.Errorf("c2's organization column shows %q, want developer", got)
	}
	rowKeys := func() string {
		return evalString(t, bctx, `[...document.querySelectorAll('table[data-kind="ClusterInst"] tbody tr')].map((r) => r.dataset.key).join(" ")`)
	}
	// Filter by cloudlet (a select), then by text (typed).
	setSelect(t, bctx, "#f-cloudlet", site2Key)
	pollFunc(t, bctx, "only c2 on site2", 5*time.Second, func() bool { return rowKeys() == cluster2 })
	setSelect(t, bctx, "#f-cloudlet", "")
	run("type a text filter", 10*time.Second, chromedp.SendKeys(chromedp.CSS("#f-q"), "c1"))
	pollFunc(t, bctx, "only c1 for the text c1", 5*time.Second, func() bool { return rowKeys() == cluster1 })
	setSelect(t, bctx, "#f-state", "READY")
	pollFunc(t, bctx, "c1 still, READY", 5*time.Second, func() bool { return rowKeys() == cluster1 })
	show(t, bctx, "#/kind/ClusterInst?state=CREATE_ERROR")
	pollFunc(t, bctx, "no cluster in CREATE_ERROR", 5*time.Second, func() bool { return rowKeys() == "" })
	// Sorting: by name, then the other way (a link each, keyboard reachable).
	show(t, bctx, "#/kind/ClusterInst")
	pollFunc(t, bctx, "c1 then c2", 5*time.Second, func() bool { return rowKeys() == cluster1+" "+cluster2 })
	run("sort by name, descending", 10*time.Second, chromedp.Click(chromedp.CSS(`th[data-col="name"] a`)))
	pollFunc(t, bctx, "c2 then c1", 5*time.Second, func() bool { return rowKeys() == cluster2+" "+cluster1 })
	screenshot(t, bctx, "clusters")

	// A state change reaches the page: an instance whose create the
	// platform holds (CREATING), then lets finish (READY).
	show(t, bctx, "#/kind/AppInst")
	gate := w.env.Platform.Pause(fake.OpCreateAppInst, "name=i1,organization=developer")
	if _, err := drain(w.dev.appInsts.CreateAppInst(ctx, &edgeproto.CreateAppInstRequest{AppInst: w.appInst("i1"), NoWait: true})); err != nil {
		t.Fatal(err)
	}
	select {
	case <-gate.Reached():
	case <-ctx.Done():
		t.Fatal("the platform never started creating the instance")
	}
	instRow := `table[data-kind="AppInst"] tr[data-key="name=i1,organization=developer"]`
	run("see the instance", 10*time.Second, chromedp.WaitVisible(chromedp.CSS(instRow)))
	pollText(t, bctx, instRow+" td.state", "CREATING", 5*time.Second)
	// The message column shows the engine's progress while it works, and
	// once READY, what READY means.
	pollTextFunc(t, bctx, instRow+" td.message", `the create's progress ("Creating AppInst...")`, 5*time.Second,
		func(s string) bool { return strings.HasPrefix(s, "Creating AppInst") })
	gate.Release()
	waitState(t, w, "i1", edgeproto.TrackedState_TRACKED_STATE_READY)
	// The requirement: what the API says shows within a second.
	pollText(t, bctx, instRow+" td.state", "READY", time.Second)
	pollText(t, bctx, instRow+" td.message", "ready", 5*time.Second)
	if got := text(instRow + " td.power"); got != "" && got != "POWER_ON" {
		t.Errorf("the instance's power column shows %q", got)
	}
	screenshot(t, bctx, "instances")

	// The instance's page: its history in order, its links.
	run("open the instance's page", 10*time.Second, chromedp.Click(chromedp.CSS(instRow+" td.name a")),
		chromedp.WaitVisible(chromedp.CSS("#history li.step")))
	pollFunc(t, bctx, "the create's history, to READY", 5*time.Second, func() bool {
		return strings.HasSuffix(historySteps(t, bctx), "READY")
	})
	steps := historySteps(t, bctx)
	requested, progress, ready := strings.Index(steps, "CREATE_REQUESTED"), strings.Index(steps, "Creating AppInst"), strings.LastIndex(steps, "READY")
	if requested < 0 || progress < requested || ready < progress {
		t.Errorf("the instance's history %q: want CREATE_REQUESTED, the engine's progress, then READY, in that order", steps)
	}
	for rel, want := range map[string]string{"cluster": "c1", "cloudlet": "site1", "app": "web"} {
		if got := text(`#links a[data-rel="` + rel + `"]`); got != want {
			t.Errorf("the instance's %s link shows %q, want %q", rel, got, want)
		}
	}
	screenshot(t, bctx, "object")
	// Its App's page, through the link: fields, secret cleared.
	run("follow the App link", 10*time.Second, chromedp.Click(chromedp.CSS(`#links a[data-rel="app"]`)),
		chromedp.WaitReady(chromedp.CSS("#fields pre")))
	if fields := evalString(t, bctx, `document.querySelector("#fields pre").textContent`); !strings.Contains(fields, `"PW"`) || strings.Contains(fields, secret) {
		t.Errorf("the App's fields: want its env var PW without its secret value; got %s", fields)
	}
	// The cluster's page lists the instance that runs on it.
	show(t, bctx, "#/object/ClusterInst/"+cluster1)
	run("the cluster's page links to its instance", 10*time.Second, chromedp.WaitVisible(chromedp.CSS(`#links a[data-rel="child"][href*="i1"]`)))

	// A failed create: its page shows the error, marked.
	w.env.Platform.Inject(fake.Fault{Op: fake.OpCreateAppInst, Key: "name=i2,organization=developer", Times: 1, Err: errors.New("planted failure")})
	if _, err := drain(w.dev.appInsts.CreateAppInst(ctx, &edgeproto.CreateAppInstRequest{AppInst: w.appInst("i2"), NoWait: true})); err != nil {
		t.Fatal(err)
	}
	show(t, bctx, "#/object/AppInst/name=i2,organization=developer")
	pollTextFunc(t, bctx, "#history li.step.error", "the planted failure, marked as an error", 10*time.Second,
		func(s string) bool { return strings.Contains(s, "planted failure") })
	run("the errors box", 10*time.Second, chromedp.WaitVisible(chromedp.CSS(`.error-box[role="alert"]`)))
	screenshot(t, bctx, "object-error")

	show(t, bctx, "#/fluidos")
	run("the FLUIDOS view, empty", 10*time.Second, chromedp.WaitVisible(chromedp.CSS("#no-fluidos")))

	// Keyboard: from the top of the page, Tab reaches the views, the
	// filters, the sort links and the objects' links.
	show(t, bctx, "#/kind/ClusterInst")
	run("the cluster view", 10*time.Second, chromedp.WaitVisible(chromedp.CSS(clusterRow(cluster1))))
	reached := tabThrough(t, bctx, 40)
	for _, want := range []string{"A:ClusterInst", "SELECT:f-org", "SELECT:f-state", "INPUT:f-q", "A:Name", "A:c1", "A:c2", "BUTTON:logout"} {
		if !strings.Contains(reached, "|"+want+"|") {
			t.Errorf("Tab never reaches %s; it reaches %s", want, reached)
		}
	}

	// Nothing of another organization, nor a secret, in any view.
	noSecret := func(views ...string) {
		t.Helper()
		for _, view := range views {
			show(t, bctx, view)
			run("render "+view, 10*time.Second, chromedp.WaitVisible(chromedp.CSS("#view > *")))
			html := pageHTML(t, bctx)
			if strings.Contains(html, secret) {
				t.Errorf("%s shows a secret", view)
			}
			if strings.Contains(html, "name=hidden") {
				t.Errorf("%s shows another organization's cluster", view)
			}
		}
	}
	appPage := "#/object/App/" + (&edgeproto.App{Key: w.app}).GetKeyString()
	noSecret("#/map", "#/kind/Cloudlet", "#/kind/ClusterInst", "#/kind/AppInst", "#/kind/App", "#/usage", appPage)

	// The admin's console: every cloudlet with its location and usage.
	c, cancelLogout := context.WithTimeout(bctx, 10*time.Second)
	defer cancelLogout()
	if err := chromedp.Do(c, chromedp.Click(chromedp.CSS("#logout")), chromedp.WaitVisible(chromedp.CSS("#token"))); err != nil {
		t.Fatalf("log out: %v", err)
	}
	show(t, bctx, "#/map")
	run("log in as the admin", 30*time.Second,
		chromedp.SendKeys(chromedp.CSS("#token"), w.env.AdminToken()),
		chromedp.Click(chromedp.CSS("#login button[type=submit]")),
		chromedp.WaitVisible(chromedp.CSS(`#map a.site[data-key="`+site2Key+`"]`)),
	)
	// site2 placed, coloured as ready; site1 (no location) listed beside
	// the map; the counts are of everything (other's cluster too).
	if cls := evalString(t, bctx, `document.querySelector('#map a.site[data-key="`+site2Key+`"]').getAttribute("class")`); !strings.Contains(cls, "ok") {
		t.Errorf("site2 on the map has class %q, want it coloured as ready (ok)", cls)
	}
	run("site1 listed without a location", 10*time.Second, chromedp.WaitVisible(chromedp.CSS(`#unplaced li[data-key="`+site1Key+`"] a`)))
	pollText(t, bctx, `.legend li[data-key="`+site1Key+`"] .counts`, "2 clusters, 2 instances", 5*time.Second)
	pollText(t, bctx, `.legend li[data-key="`+site2Key+`"] .counts`, "1 clusters, 0 instances", 5*time.Second)
	screenshot(t, bctx, "map")
	// Usage: site2's vCPUs against its quota, site1's instances.
	show(t, bctx, "#/usage")
	pollTextFunc(t, bctx, `section.usage[data-key="`+site2Key+`"] li[data-resource="vCPUs"] .rval`, "used of quota 40", 5*time.Second,
		func(s string) bool { return strings.HasSuffix(s, "of quota 40") })
	pollTextFunc(t, bctx, `section.usage[data-key="`+site1Key+`"] li[data-resource="Instances"] .rval`, "2 instances on site1", 5*time.Second,
		func(s string) bool { return strings.HasPrefix(s, "2") })
	screenshot(t, bctx, "usage")

	// An alert: site2's vCPU quota gets a threshold its use crosses (c2
	// uses vCPUs of the 40); the alert is listed on the usage view and
	// beside the map, and the views offer it; a threshold its use does
	// not reach clears it from the page.
	setVCPUThreshold := func(threshold int32) {
		t.Helper()
		if _, err := drain(w.op.cloudlets.UpdateCloudlet(ctx, &edgeproto.UpdateCloudletRequest{Cloudlet: &edgeproto.Cloudlet{Key: site2,
			ResourceQuotas: []*edgeproto.ResourceQuota{{Name: "vCPUs", Value: 40, AlertThreshold: threshold}}},
			Fields: []string{edgeproto.CloudletFieldResourceQuotas}})); err != nil {
			t.Fatalf("set site2's vCPUs alert threshold to %d%%: %v", threshold, err)
		}
	}
	setVCPUThreshold(1)
	alertItem := `ul.alerts li.error`
	pollTextFunc(t, bctx, alertItem, "site2's vCPUs alert at the 1% threshold", 5*time.Second,
		func(s string) bool {
			return strings.Contains(s, "site2") && strings.Contains(s, "vCPUs") && strings.Contains(s, "threshold 1%")
		})
	run("the views offer the alerts", 5*time.Second, chromedp.WaitVisible(chromedp.CSS(`nav a[href="#/kind/Alert"]`)))
	screenshot(t, bctx, "usage-alert")
	show(t, bctx, "#/map")
	pollTextFunc(t, bctx, `.side `+alertItem, "the alert beside the map", 5*time.Second,
		func(s string) bool { return strings.Contains(s, "vCPUs") })
	screenshot(t, bctx, "map-alert")
	// The alert's page: its fields, and a link to its cloudlet.
	run("open the alert's page", 10*time.Second, chromedp.Click(chromedp.CSS(`.side `+alertItem+` a`)),
		chromedp.WaitVisible(chromedp.CSS(`#links a[data-rel="cloudlet"]`)), chromedp.WaitReady(chromedp.CSS("#fields pre")))
	if fields := evalString(t, bctx, `document.querySelector("#fields pre").textContent`); !strings.Contains(fields, `"threshold": 1`) {
		t.Errorf("the alert's page shows the fields %s, want its threshold of 1%%", fields)
	}
	if got := text(`#links a[data-rel="cloudlet"]`); got != "site2" {
		t.Errorf("the alert's cloudlet link shows %q, want site2", got)
	}
	screenshot(t, bctx, "object-alert")
	// Cleared while its page is open: the page says it is gone.
	setVCPUThreshold(100)
	pollText(t, bctx, "#object-missing", "deleted", 5*time.Second)
	show(t, bctx, "#/map")
	pollFunc(t, bctx, "the alert cleared from the map", 5*time.Second, func() bool {
		return evalString(t, bctx, `String(document.querySelectorAll("ul.alerts li").length)`) == "0"
	})

	show(t, bctx, "#/object/Cloudlet/"+site2Key)
	run("site2's page", 10*time.Second, chromedp.WaitVisible(chromedp.CSS("#fields")))
	screenshot(t, bctx, "cloudlet")
	if html := pageHTML(t, bctx); strings.Contains(html, secret) || !strings.Contains(html, "48.85") {
		t.Errorf("site2's page: want its location and no secret")
	}

	// A narrow screen: no view is wider than the screen.
	run("a phone's screen", 10*time.Second, chromedp.EmulateViewport(375, 740))
	for _, view := range []string{"#/map", "#/kind/AppInst", "#/object/AppInst/name=i1,organization=developer", "#/usage"} {
		show(t, bctx, view)
		run("render "+view, 10*time.Second, chromedp.WaitVisible(chromedp.CSS("#view > *")))
		if over := evalString(t, bctx, `String(document.documentElement.scrollWidth - document.documentElement.clientWidth)`); over != "0" {
			t.Errorf("on a narrow screen %s is %spx wider than the screen", view, over)
		}
		screenshot(t, bctx, "narrow-"+strings.NewReplacer("#/", "", "/", "-", "=", "", ",", "").Replace(view))
	}

	// No secret in any event or object page, whoever looks.
	for _, token := range []string{w.env.OrgToken("developer"), w.env.OrgToken("operator"), w.env.AdminToken()} {
		client := uitest.NewClient(t, srv.URL+"/ui/", nil)
		client.Login(token)
		stream := client.Open()
		events := append([]string{stream.Next(10 * time.Second)}, stream.Received()...)
		var rows []ui.Row
		if err := json.Unmarshal([]byte(events[0]), &rows); err != nil {
			t.Fatalf("the snapshot: %v", err)
		}
		for _, r := range rows {
			if _, body := client.Object(r.Kind, r.Key); strings.Contains(body, secret) {
				t.Errorf("the page of %s %s carries a secret", r.Kind, r.Key)
			}
		}
		for _, ev := range events {
			if strings.Contains(ev, secret) {
				t.Errorf("an event carries a secret: %s", ev)
			}
		}
		stream.Close()
	}
	if errs := console(); len(errs) > 0 {
		t.Errorf("the console has errors: %q", errs)
	}
}

// loginFormGone fails the test unless the page, logged in, shows no login
// form (and shows its log out button).
func loginFormGone(t *testing.T, bctx context.Context) {
	t.Helper()
	c, cancel := context.WithTimeout(bctx, 10*time.Second)
	defer cancel()
	got, err := chromedp.Run(c, chromedp.Evaluate[string](`getComputedStyle(document.getElementById("login")).display + " " +
		getComputedStyle(document.getElementById("logout")).display`))
	if err != nil {
		t.Fatal(err)
	}
	if form, logout, _ := strings.Cut(got, " "); form != "none" || logout == "none" {
		t.Errorf("logged in, the login form's display is %q and the log out button's %q: want the form gone and the button shown", form, logout)
	}
}

// servePage serves a status page of cfg until the test ends.
func servePage(t *testing.T, cfg ui.Config) *httptest.Server {
	t.Helper()
	return uitest.Serve(t, cfg)
}

// pollText waits until the element's text is want.
func pollText(t *testing.T, bctx context.Context, sel, want string, timeout time.Duration) {
	t.Helper()
	pollTextFunc(t, bctx, sel, strconv.Quote(want), timeout, func(got string) bool { return got == want })
}

// pollTextFunc waits until the element's text satisfies ok (described by
// want).
func pollTextFunc(t *testing.T, bctx context.Context, sel, want string, timeout time.Duration, ok func(string) bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var got string
	for time.Now().Before(deadline) {
		c, cancel := context.WithTimeout(bctx, time.Second)
		var err error
		got, err = chromedp.Run(c, chromedp.Text(chromedp.CSS(sel)))
		cancel()
		if err == nil && ok(got) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s shows %q, want %s after %v", sel, got, want, timeout)
}

// show opens a view of the page, by its hash.
func show(t *testing.T, bctx context.Context, hash string) {
	t.Helper()
	c, cancel := context.WithTimeout(bctx, 10*time.Second)
	defer cancel()
	if _, err := chromedp.Run(c, chromedp.Evaluate[string](`location.hash = `+strconv.Quote(hash))); err != nil {
		t.Fatalf("show %s: %v", hash, err)
	}
}

// evalString evaluates a JavaScript expression that yields a string.
func evalString(t *testing.T, bctx context.Context, expr string) string {
	t.Helper()
	c, cancel := context.WithTimeout(bctx, 10*time.Second)
	defer cancel()
	got, err := chromedp.Run(c, chromedp.Evaluate[string](expr))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return got
}

// setSelect chooses value in the select sel, as a user does (a change
// event follows).
func setSelect(t *testing.T, bctx context.Context, sel, value string) {
	t.Helper()
	evalString(t, bctx, `(() => { const s = document.querySelector(`+strconv.Quote(sel)+`); s.value = `+strconv.Quote(value)+
		`; s.dispatchEvent(new Event("change", { bubbles: true })); return s.value; })()`)
}

// pollFunc waits until ok holds.
func pollFunc(t *testing.T, bctx context.Context, what string, timeout time.Duration, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if ok() {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("not %s after %v\npage body: %s", what, timeout, pageHTML(t, bctx))
}

// historySteps is the object page's history, its steps joined by " | "
// in the order shown.
func historySteps(t *testing.T, bctx context.Context) string {
	t.Helper()
	return evalString(t, bctx, `[...document.querySelectorAll("#history li.step")].map((li) => li.querySelector(".state, .msg").textContent).join(" | ")`)
}

// tabThrough presses Tab n times from the top of the page and returns
// what got the focus, as "|TAG:id-or-text|...".
func tabThrough(t *testing.T, bctx context.Context, n int) string {
	t.Helper()
	evalString(t, bctx, `(() => { document.activeElement && document.activeElement.blur(); window.scrollTo(0, 0); return ""; })()`)
	var out strings.Builder
	out.WriteString("|")
	for range n {
		c, cancel := context.WithTimeout(bctx, 10*time.Second)
		err := chromedp.Do(c, chromedp.KeyEvent(kb.Tab))
		cancel()
		if err != nil {
			t.Fatalf("press Tab: %v", err)
		}
		out.WriteString(evalString(t, bctx, `(() => { const e = document.activeElement; return e.tagName + ":" + (e.id || e.textContent.replace(/[▲▼]/g, "").trim()); })()`) + "|")
	}
	return out.String()
}

// consoleErrors collects the errors the page writes to its console
// (uncaught exceptions, console.error, failed loads, CSP violations) and
// returns a func that lists them so far.
func consoleErrors(t *testing.T, bctx context.Context) func() []string {
	var mu sync.Mutex
	var errs []string
	messages := chromedp.Console(bctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				mu.Lock()
				errs = append(errs, m.String())
				mu.Unlock()
			}
		}
	}()
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(errs)
	}
}

var screenshotDirs sync.Map // test name -> directory

// screenshot saves a PNG of the page as <name>.png, for review, in
// $EDGEKIT_UI_SCREENSHOTS/<test> when that is set (kept after the run),
// else in a temporary directory of the test; the test's log says where.
func screenshot(t *testing.T, bctx context.Context, name string) {
	t.Helper()
	dir, ok := screenshotDirs.Load(t.Name())
	if !ok {
		d := t.TempDir()
		if root := os.Getenv("EDGEKIT_UI_SCREENSHOTS"); root != "" {
			d = filepath.Join(root, strings.ReplaceAll(t.Name(), "/", "_"))
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("screenshots of the status page in %s", d)
		screenshotDirs.Store(t.Name(), d)
		// A temporary directory goes with the test: a repeated run
		// (-count) makes its own.
		t.Cleanup(func() { screenshotDirs.Delete(t.Name()) })
		dir = d
	}
	c, cancel := context.WithTimeout(bctx, 20*time.Second)
	defer cancel()
	png, err := chromedp.Run(c, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(dir.(string), name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}
