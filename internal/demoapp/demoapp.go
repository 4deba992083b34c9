// Package demoapp is the small HTTP application the demos and the tour
// deploy as a real process: it listens on 127.0.0.1:$PORT (the port the
// local platform hands an instance), answers /healthz with "ok" and / with
// "<greeting> from pid <pid>", the greeting being $GREETING ("hello" when
// unset), until its context ends (SIGTERM, SIGINT).
package demoapp

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/edgekit/edgekit/internal/cmdutil"
)

// Main serves until ctx ends; it is a cmdutil.MainFunc ("edgekit serve",
// "edgekit-demo serve"). --port overrides $PORT.
func Main(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	port := fs.String("port", os.Getenv("PORT"), "port to listen on, on 127.0.0.1 (default $PORT)")
	if err := cmdutil.Parse(fs, args); err != nil {
		return err
	}
	if *port == "" {
		return errors.New("no port: set PORT or give --port")
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", *port))
	if err != nil {
		return err
	}
	greeting := os.Getenv("GREETING")
	if greeting == "" {
		greeting = "hello"
	}
	srv := &http.Server{Handler: Handler(greeting), ReadHeaderTimeout: 5 * time.Second}
	stop := context.AfterFunc(ctx, func() {
		shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	})
	defer stop()
	fmt.Fprintf(stderr, "serving on %s\n", ln.Addr())
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Handler answers /healthz with "ok" and every other path with
// "<greeting> from pid <pid>".
func Handler(greeting string) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, "%s from pid %d\n", greeting, os.Getpid())
	})
	return mux
}

// Get returns the body of a GET of url (trimmed; at most 4 KiB read),
// within 10s and without any proxy: how the demos call the application.
// An answer other than 200 OK is an error.
func Get(ctx context.Context, url string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := (&http.Client{Transport: &http.Transport{Proxy: nil}}).Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return strings.TrimSpace(string(b)), nil
}
