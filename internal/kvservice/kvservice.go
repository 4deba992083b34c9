// Package kvservice is a small key-value service over HTTP, the service
// a FLUIDOS node sells in edgekit's demos and tests (the program
// cmd/edgekit-kv, also the multi-call edgekit binary run under the name
// edgekit-kv): a blueprint renders it
// into an App that the lifecycle engine runs as a process, and the buyer
// reaches it with the credentials the seller hands over.
//
// It listens on 127.0.0.1:$PORT (as the local platform starts it) and
// serves:
//
//	GET    /healthz     200 "ok", without credentials (the health check)
//	GET    /kv/         the keys, one a line
//	PUT    /kv/{key}    stores the body (at most 1 MiB) under key
//	GET    /kv/{key}    the value, or 404
//	DELETE /kv/{key}    deletes key
//
// Every /kv route needs HTTP basic authentication with KV_USERNAME
// (default "admin") and KV_PASSWORD, which is required: without it the
// service refuses to start. The password is never printed. Values live in
// memory and are lost when the process ends.
//
// Blueprint is the ServiceBlueprint that sells it (blueprint.yaml, the one
// source of it: the operator guide runs that file, the region and the
// tests use it through Blueprint).
//
// For tests, KV_START_DELAY (a duration) delays listening, and
// KV_STOP_DELAY delays the exit after SIGTERM.
package kvservice

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
)

// maxValue bounds a stored value.
const maxValue = 1 << 20

// Main is the program: it serves until ctx ends, configured by the
// environment (PORT, KV_USERNAME, KV_PASSWORD...); it takes no arguments.
func Main(ctx context.Context, args []string, stderr io.Writer) error {
	if len(args) > 0 {
		return fmt.Errorf("unexpected arguments %q: the service is configured by its environment", args)
	}
	return Run(ctx, os.Getenv, stderr)
}

// Run serves until ctx ends, configured by getenv.
func Run(ctx context.Context, getenv func(string) string, log io.Writer) error {
	port := getenv("PORT")
	if port == "" {
		return errors.New("PORT is not set")
	}
	password := getenv("KV_PASSWORD")
	if password == "" {
		return errors.New("KV_PASSWORD is required: the service does not run without a password")
	}
	user := getenv("KV_USERNAME")
	if user == "" {
		user = "admin"
	}
	startDelay, err := duration(getenv, "KV_START_DELAY")
	if err != nil {
		return err
	}
	stopDelay, err := duration(getenv, "KV_STOP_DELAY")
	if err != nil {
		return err
	}
	select {
	case <-time.After(startDelay):
	case <-ctx.Done():
		return nil
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", port))
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: newStore(user, password).handler(), ReadHeaderTimeout: 5 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		<-ctx.Done()
		time.Sleep(stopDelay)
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	fmt.Fprintf(log, "edgekit-kv: serving on %s for user %q\n", ln.Addr(), user)
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	<-done
	fmt.Fprintln(log, "edgekit-kv: stopped")
	return nil
}

func duration(getenv func(string) string, name string) (time.Duration, error) {
	s := getenv(name)
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", name, err)
	}
	return d, nil
}

// store is the service: values by key, behind basic authentication.
type store struct {
	user, pass [sha256.Size]byte // hashes: compared in constant time

	mu     sync.Mutex
	values map[string][]byte
}

func newStore(user, password string) *store {
	return &store{user: sha256.Sum256([]byte(user)), pass: sha256.Sum256([]byte(password)), values: map[string][]byte{}}
}

func (s *store) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.Handle("GET /kv/{$}", s.auth(s.keys))
	mux.Handle("GET /kv/{key}", s.auth(s.get))
	mux.Handle("PUT /kv/{key}", s.auth(s.put))
	mux.Handle("DELETE /kv/{key}", s.auth(s.del))
	return mux
}

// auth admits requests whose basic credentials are the service's.
func (s *store) auth(next http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, p, ok := r.BasicAuth()
		uh, ph := sha256.Sum256([]byte(u)), sha256.Sum256([]byte(p))
		if !ok || subtle.ConstantTimeCompare(uh[:], s.user[:])&subtle.ConstantTimeCompare(ph[:], s.pass[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Basic realm="edgekit-kv"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		next(w, r)
	})
}

func (s *store) keys(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	keys := make([]string, 0, len(s.values))
	for k := range s.values {
		keys = append(keys, k)
	}
	s.mu.Unlock()
	slices.Sort(keys)
	if len(keys) > 0 {
		fmt.Fprintln(w, strings.Join(keys, "\n"))
	}
}

func (s *store) get(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	v, ok := s.values[r.PathValue("key")]
	s.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	_, _ = w.Write(v)
}

func (s *store) put(w http.ResponseWriter, r *http.Request) {
	v, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxValue))
	if err != nil {
		http.Error(w, fmt.Sprintf("a value is at most %d bytes", maxValue), http.StatusRequestEntityTooLarge)
		return
	}
	s.mu.Lock()
	s.values[r.PathValue("key")] = v
	s.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func (s *store) del(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	delete(s.values, r.PathValue("key"))
	s.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}
