package demoapp_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/edgekit/edgekit/internal/demoapp"
)

func TestHandler(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(demoapp.Handler("bonjour"))
	defer srv.Close()
	for path, want := range map[string]string{"/healthz": "ok\n", "/": "bonjour from pid " + strconv.Itoa(os.Getpid()) + "\n"} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(body) != want {
			t.Errorf("GET %s = %q, want %q", path, body, want)
		}
	}
}

// Main serves on the port it is given and returns once its context ends.
func TestMainServesUntilCancelled(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- demoapp.Main(ctx, []string{"--port", port}, io.Discard) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Get("http://127.0.0.1:" + port + "/")
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if !strings.HasPrefix(string(body), "hello from pid") {
				t.Fatalf("GET / = %q", body)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not serving within 10s: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Main: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Main did not return within 10s of its context's end")
	}
}

func TestMainNeedsAPort(t *testing.T) {
	t.Setenv("PORT", "")
	if err := demoapp.Main(context.Background(), nil, io.Discard); err == nil || !strings.Contains(err.Error(), "PORT") {
		t.Fatalf("Main without a port: %v", err)
	}
}
