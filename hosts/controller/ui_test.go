package controller_test

import (
	"context"
	"net/http/httptest"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/hosts/controller/ui"
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

// The status page, in a real headless browser: it logs in with an API
// token, renders the region's objects, follows a state change, shows only
// what the token's organization may see, and never a secret.
func TestStatusPageInABrowser(t *testing.T) {
	t.Parallel()
	bctx := browser(t)
	w := newWorld(t)
	ctx := testCtx(t)
	const secret = "planted-secret-value-7731"
	if _, err := w.dev.apps.UpdateApp(ctx, &edgeproto.UpdateAppRequest{App: &edgeproto.App{Key: w.app,
		EnvVars: []*edgeproto.EnvVar{{Name: "PW", Secret: true, SecretValue: secret}}}, Fields: []string{edgeproto.AppFieldEnvVars}}); err != nil {
		t.Fatal(err)
	}
	// Something of another organization the developer must not see.
	other := clientsOf(w.env.Conn(w.env.OrgToken("other")))
	if ps, err := drain(other.clusters.CreateClusterInst(ctx, &edgeproto.CreateClusterInstRequest{ClusterInst: &edgeproto.ClusterInst{
		Key: &edgeproto.ClusterKey{Organization: "other", Name: "hidden"}, CloudletKey: w.cloudlet, FlavorName: "fake.small"}})); err != nil {
		t.Fatalf("other's cluster: %v %v", ps, err)
	}

	srv := servePage(t, ui.Config{Authenticate: w.env.Controller.UIAuthenticator(), Sources: w.env.Controller.UISources()})

	row := func(kind, key string) string {
		return `table[data-kind="` + kind + `"] tr[data-key="` + key + `"] td.state`
	}
	clusterRow := row("ClusterInst", "name=c1,organization=developer")
	run := func(what string, timeout time.Duration, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		c, cancel := context.WithTimeout(bctx, timeout)
		defer cancel()
		if err := chromedp.Do(c, steps...); err != nil {
			dc, dcancel := context.WithTimeout(bctx, 5*time.Second)
			defer dcancel()
			html, _ := chromedp.Run(dc, chromedp.OuterHTML(chromedp.CSS("body")))
			t.Fatalf("%s: %v\npage body: %s", what, err, html)
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
	run("log in and see the cluster", 60*time.Second,
		chromedp.WaitVisible(chromedp.CSS("#token")),
		chromedp.SendKeys(chromedp.CSS("#token"), w.env.OrgToken("developer")),
		chromedp.Click(chromedp.CSS("#login button[type=submit]")),
		chromedp.WaitVisible(chromedp.CSS(clusterRow)),
	)
	if state := text(clusterRow); state != "READY" {
		t.Errorf("the page shows the cluster as %q, want READY", state)
	}
	loginFormGone(t, bctx)

	// A state change reaches the page: an instance whose create the
	// platform holds (CREATING), then lets finish (READY).
	gate := w.env.Platform.Pause(fake.OpCreateAppInst, "name=i1,organization=developer")
	if _, err := drain(w.dev.appInsts.CreateAppInst(ctx, &edgeproto.CreateAppInstRequest{AppInst: w.appInst("i1"), NoWait: true})); err != nil {
		t.Fatal(err)
	}
	select {
	case <-gate.Reached():
	case <-ctx.Done():
		t.Fatal("the platform never started creating the instance")
	}
	instRow := row("AppInst", "name=i1,organization=developer")
	run("see the instance", 10*time.Second, chromedp.WaitVisible(chromedp.CSS(instRow)))
	pollText(t, bctx, instRow, "CREATING", 5*time.Second)
	// The message column (the fifth) shows the engine's progress while it
	// works, and once READY, what READY means.
	instMessage := `table[data-kind="AppInst"] tr[data-key="name=i1,organization=developer"] td:nth-child(5)`
	pollTextFunc(t, bctx, instMessage, `the create's progress ("Creating AppInst...")`, 5*time.Second,
		func(s string) bool { return strings.HasPrefix(s, "Creating AppInst") })
	gate.Release()
	waitState(t, w, "i1", edgeproto.TrackedState_TRACKED_STATE_READY)
	start := time.Now()
	pollText(t, bctx, instRow, "READY", 5*time.Second)
	t.Logf("the page showed READY %v after the API did", time.Since(start).Round(time.Millisecond))
	pollText(t, bctx, instMessage, "ready", 5*time.Second)

	c, cancel := context.WithTimeout(bctx, 10*time.Second)
	defer cancel()
	html, err := chromedp.Run(c, chromedp.OuterHTML(chromedp.CSS("html")))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(html, secret) {
		t.Error("the page shows a secret")
	}
	if strings.Contains(html, "name=hidden") {
		t.Error("the page shows another organization's cluster")
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
	page, err := ui.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	pctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = page.Start(pctx); close(done) }()
	srv := httptest.NewServer(page)
	t.Cleanup(func() {
		stop() // ends the page's event streams
		<-done
		srv.CloseClientConnections()
		srv.Close()
	})
	return srv
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
