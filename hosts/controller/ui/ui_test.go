package ui_test

import (
	"bufio"
	"context"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/edgekit/edgekit/hosts/controller/ui"
	"github.com/edgekit/edgekit/hosts/controller/ui/uitest"
)

type org string

func (o org) Sees(x string) bool { return o == "admin" || string(o) == x }

func TestLoginEventsAndVisibility(t *testing.T) {
	t.Parallel()
	emit := make(chan ui.Emitter, 1)
	srv, err := ui.New(ui.Config{
		Authenticate: func(tok string) (ui.Viewer, bool) {
			switch tok {
			case "dev-token":
				return org("dev"), true
			case "admin-token":
				return org("admin"), true
			}
			return nil, false
		},
		Sources: []ui.Source{ui.SourceFunc(func(ctx context.Context, out ui.Emitter) error {
			out.Put(ui.Row{Kind: "ClusterInst", Key: "c1", Org: "dev", State: "READY"})
			out.Put(ui.Row{Kind: "ClusterInst", Key: "c2", Org: "other", State: "READY"})
			emit <- out
			<-ctx.Done()
			return nil
		})},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = srv.Start(ctx); close(done) }()
	out := <-emit
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		cancel()
		<-done
		hs.CloseClientConnections()
		hs.Close()
	})
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar, Timeout: 10 * time.Second}

	if resp, err := client.Get(hs.URL + "/ui/events"); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("events without a session: %v %v", resp.Status, err)
	}
	if resp, err := client.PostForm(hs.URL+"/ui/login", url.Values{"token": {"wrong"}}); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("login with a wrong token: %v %v", resp.Status, err)
	}
	resp, err := client.PostForm(hs.URL+"/ui/login", url.Values{"token": {"dev-token"}})
	if err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("login: %v %v", resp.Status, err)
	}
	cookie := resp.Header.Get("Set-Cookie")
	if !strings.Contains(cookie, "HttpOnly") || !strings.Contains(cookie, "SameSite=Strict") || strings.Contains(cookie, "dev-token") {
		t.Errorf("session cookie %q", cookie)
	}
	resp, err = client.Get(hs.URL + "/ui/events")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("events: %v %v", resp.Status, err)
	}
	defer resp.Body.Close()
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "data: ") {
				lines <- sc.Text()
			}
		}
		close(lines)
	}()
	next := func() string {
		select {
		case l := <-lines:
			return l
		case <-time.After(10 * time.Second):
			t.Fatal("no event within 10s")
			return ""
		}
	}
	snap := next()
	if !strings.Contains(snap, `"key":"c1"`) || strings.Contains(snap, `"key":"c2"`) {
		t.Fatalf("snapshot %s: want c1 and not another organization's c2", snap)
	}
	out.Put(ui.Row{Kind: "ClusterInst", Key: "c2", Org: "other", State: "DELETING"}) // not for dev
	out.Put(ui.Row{Kind: "ClusterInst", Key: "c1", Org: "dev", State: "UPDATING"})
	if got := next(); !strings.Contains(got, `"key":"c1"`) || !strings.Contains(got, "UPDATING") {
		t.Fatalf("event %s: want c1 UPDATING (and nothing of c2 before it)", got)
	}
	out.Delete("ClusterInst", "c1")
	if got := next(); !strings.Contains(got, `"key":"c1"`) {
		t.Fatalf("delete event %s", got)
	}
}

// watchedSource is a source that runs only while watched: it reports each
// run's start and end, and puts a row while it runs.
type watchedSource struct {
	started, stopped chan struct{}
}

func (w *watchedSource) WhileWatched() bool { return true }

func (w *watchedSource) Run(ctx context.Context, out ui.Emitter) error {
	w.started <- struct{}{}
	out.Put(ui.Row{Kind: "Solver", Key: "polled", State: "SOLVED"})
	<-ctx.Done()
	out.Delete("Solver", "polled")
	w.stopped <- struct{}{}
	return nil
}

// A source that runs only while watched (one that polls) does not run
// while no page is open, starts with the first page, keeps running while
// any page is open, and stops after the last one closes.
func TestWhileWatchedSourcesRunOnlyWhileSomeoneWatches(t *testing.T) {
	t.Parallel()
	src := &watchedSource{started: make(chan struct{}, 10), stopped: make(chan struct{}, 10)}
	always := make(chan struct{})
	srv, err := ui.New(ui.Config{
		Authenticate: func(tok string) (ui.Viewer, bool) { return org("admin"), tok == "admin-token" },
		Sources: []ui.Source{src, ui.SourceFunc(func(ctx context.Context, out ui.Emitter) error {
			out.Put(ui.Row{Kind: "ClusterInst", Key: "c1", State: "READY"})
			close(always)
			<-ctx.Done()
			return nil
		})},
		Linger: 50 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = srv.Start(ctx); close(done) }()
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		cancel()
		<-done
		hs.CloseClientConnections()
		hs.Close()
	})
	page := uitest.NewClient(t, hs.URL+"/ui/", nil)
	page.Login("admin-token")
	wait := func(ch chan struct{}, what string) {
		t.Helper()
		select {
		case <-ch:
		case <-time.After(10 * time.Second):
			t.Fatalf("the source did not %s within 10s", what)
		}
	}
	// Nobody watches (a login is no watch): the other source runs, this
	// one does not.
	<-always
	select {
	case <-src.started:
		t.Fatal("the source runs while nobody watches")
	case <-time.After(300 * time.Millisecond):
	}

	// A page opens: the source starts and its row follows the snapshot.
	first := page.Open()
	wait(src.started, "start when a page opened")
	if snap := first.Next(10 * time.Second); !strings.Contains(snap, `"key":"c1"`) {
		t.Fatalf("snapshot %s", snap)
	}
	if ev := first.Next(10 * time.Second); !strings.Contains(ev, `"key":"polled"`) {
		t.Fatalf("event %s: want the source's row", ev)
	}
	// A second page opens and the first closes: it keeps running.
	second := page.Open()
	if snap := second.Next(10 * time.Second); !strings.Contains(snap, `"key":"polled"`) {
		t.Fatalf("the second page's snapshot %s lacks the running source's row", snap)
	}
	first.Close()
	select {
	case <-src.stopped:
		t.Fatal("the source stopped while a page was still open")
	case <-time.After(300 * time.Millisecond):
	}
	// The last page closes: the source stops (and withdraws its row).
	second.Close()
	wait(src.stopped, "stop after the last page closed")
	// Another page: a new run.
	third := page.Open()
	wait(src.started, "start again when a page opened")
	if snap := third.Next(10 * time.Second); strings.Contains(snap, `"key":"polled"`) {
		t.Fatalf("snapshot %s: the stopped source's row stayed", snap)
	}
	// The server stops while a page watches: the source stops and Start
	// returns.
	cancel()
	wait(src.stopped, "stop with the server")
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Start did not return within 10s of its context's end while a page was open")
	}
}

// An object's detail (fields, Info, history) is served by /ui/object to
// the viewers that may see its row, and is never in the event streams.
func TestObjectDetail(t *testing.T) {
	t.Parallel()
	detail := func(v string) *ui.Detail {
		return &ui.Detail{Fields: []byte(`{"marker":"` + v + `"}`),
			History: []ui.Operation{{Request: 3, Steps: []ui.Step{{State: "CREATING"}, {State: "READY"}}}}}
	}
	emit := make(chan ui.Emitter, 1)
	hs := uitest.Serve(t, ui.Config{
		Authenticate: func(tok string) (ui.Viewer, bool) { return org(tok), true },
		Sources: []ui.Source{ui.SourceFunc(func(ctx context.Context, out ui.Emitter) error {
			out.Put(ui.Row{Kind: "ClusterInst", Key: "c1", Org: "dev", State: "READY", Detail: detail("dev-detail")})
			out.Put(ui.Row{Kind: "ClusterInst", Key: "c2", Org: "other", State: "READY", Detail: detail("other-detail")})
			emit <- out
			<-ctx.Done()
			return nil
		})},
	})
	anon := uitest.NewClient(t, hs.URL+"/ui/", nil)
	if code, _ := anon.Object("ClusterInst", "c1"); code != http.StatusUnauthorized {
		t.Errorf("an object without a session: %d, want 401", code)
	}
	dev := uitest.NewClient(t, hs.URL+"/ui/", nil)
	dev.Login("dev")
	stream := dev.Open()
	// Wait until the source's rows are in: the snapshot may come first.
	deadline := time.Now().Add(10 * time.Second)
	var code int
	var body string
	for time.Now().Before(deadline) {
		if code, body = dev.Object("ClusterInst", "c1"); code == http.StatusOK {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if code != http.StatusOK || !strings.Contains(body, "dev-detail") || !strings.Contains(body, `"READY"`) {
		t.Fatalf("the developer's cluster: %d %s", code, body)
	}
	if code, body := dev.Object("ClusterInst", "c2"); code != http.StatusNotFound || strings.Contains(body, "other-detail") {
		t.Errorf("another organization's cluster: %d %s, want 404 and nothing of it", code, body)
	}
	if code, _ := dev.Object("ClusterInst", "nosuch"); code != http.StatusNotFound {
		t.Errorf("no such cluster: %d, want 404", code)
	}
	if code, body := dev.Object("", "c1"); code != http.StatusBadRequest || !strings.Contains(body, "kind and key") {
		t.Errorf("no kind: %d %q, want 400 naming what is missing", code, body)
	}
	// Read until c1 came (in the snapshot, or in a put after it).
	for i := 0; ; i++ {
		ev := stream.Next(10 * time.Second)
		if strings.Contains(ev, "detail") {
			t.Errorf("an event carries a detail: %s", ev)
		}
		if strings.Contains(ev, `"key":"c1"`) {
			break
		}
		if i == 10 {
			t.Fatal("no event carries c1")
		}
	}

	// A change of the detail alone (the history grew) is announced by a
	// "detail" event naming the object, which a page showing it refetches.
	out := <-emit
	out.Put(ui.Row{Kind: "ClusterInst", Key: "c1", Org: "dev", State: "READY", Detail: detail("dev-detail-2")})
	if ev := stream.NextEvent(10 * time.Second); ev.Name != "detail" || ev.Data != `{"key":"c1","kind":"ClusterInst"}` {
		t.Errorf("after a change of its detail: event %q %s, want detail naming c1", ev.Name, ev.Data)
	}
	if _, body := dev.Object("ClusterInst", "c1"); !strings.Contains(body, "dev-detail-2") {
		t.Errorf("the new detail is not served: %s", body)
	}
	// A change of the row is a put, without the detail.
	out.Put(ui.Row{Kind: "ClusterInst", Key: "c1", Org: "dev", State: "UPDATING", Detail: detail("dev-detail-3")})
	if ev := stream.NextEvent(10 * time.Second); ev.Name != "put" || !strings.Contains(ev.Data, "UPDATING") || strings.Contains(ev.Data, "dev-detail") {
		t.Errorf("after a change of its row: event %q %s, want put with the row only", ev.Name, ev.Data)
	}
}
