package kvservice

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/edgekit/edgekit/internal/testenv/logbuf"
)

func do(t *testing.T, method, url, user, pass, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if user != "" || pass != "" {
		req.SetBasicAuth(user, pass)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestStoreNeedsItsCredentials(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(newStore("alice", "s3cret-pass").handler())
	defer srv.Close()
	if code, _ := do(t, http.MethodGet, srv.URL+"/healthz", "", "", ""); code != http.StatusOK {
		t.Errorf("health check without credentials: %d", code)
	}
	for _, c := range []struct{ user, pass string }{{"", ""}, {"alice", "wrong"}, {"bob", "s3cret-pass"}} {
		if code, _ := do(t, http.MethodPut, srv.URL+"/kv/k", c.user, c.pass, "v"); code != http.StatusUnauthorized {
			t.Errorf("PUT as %q/%q: %d, want 401", c.user, c.pass, code)
		}
	}
	if code, _ := do(t, http.MethodPut, srv.URL+"/kv/greeting", "alice", "s3cret-pass", "hello"); code != http.StatusNoContent {
		t.Fatalf("PUT: %d", code)
	}
	if code, body := do(t, http.MethodGet, srv.URL+"/kv/greeting", "alice", "s3cret-pass", ""); code != http.StatusOK || body != "hello" {
		t.Errorf("GET: %d %q", code, body)
	}
	if code, body := do(t, http.MethodGet, srv.URL+"/kv/", "alice", "s3cret-pass", ""); code != http.StatusOK || body != "greeting\n" {
		t.Errorf("keys: %d %q", code, body)
	}
	do(t, http.MethodDelete, srv.URL+"/kv/greeting", "alice", "s3cret-pass", "")
	if code, _ := do(t, http.MethodGet, srv.URL+"/kv/greeting", "alice", "s3cret-pass", ""); code != http.StatusNotFound {
		t.Errorf("GET after DELETE: %d", code)
	}
}

func TestRunRefusesToStartWithoutAPassword(t *testing.T) {
	t.Parallel()
	env := map[string]string{"PORT": "1"}
	err := Run(context.Background(), func(k string) string { return env[k] }, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "KV_PASSWORD is required") {
		t.Fatalf("err = %v", err)
	}
}

func TestRunServesUntilCancelledAndNeverPrintsThePassword(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	env := map[string]string{"PORT": port, "KV_PASSWORD": "planted-secret-123", "KV_START_DELAY": "10ms"}
	ctx, cancel := context.WithCancel(context.Background())
	var log logbuf.Buffer
	done := make(chan error, 1)
	go func() { done <- Run(ctx, func(k string) string { return env[k] }, &log) }()
	url := "http://127.0.0.1:" + port
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Get(url + "/healthz")
		if err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not serving: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if code, _ := do(t, http.MethodPut, url+"/kv/a", "admin", "planted-secret-123", "1"); code != http.StatusNoContent {
		t.Errorf("PUT as the default user: %d", code)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if strings.Contains(log.String(), "planted-secret-123") {
		t.Errorf("the password was printed: %q", log.String())
	}
}
