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
