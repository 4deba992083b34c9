// Command webapp is the application the CRM's end-to-end tests deploy on
// the local platform: an HTTP server on 127.0.0.1:$PORT answering
//
//	/         "hello from <pid>"
//	/healthz  "ok"
//
// WEBAPP_READY_DELAY (a Go duration) delays listening, so that a create
// stays in progress that long; WEBAPP_PID_DIR names a directory where it
// records each start as a file "<instance>.<pid>" (the instance is the
// name of the directory holding its working directory, $HOME), so a test
// can count the processes an instance ever had. SIGTERM stops it.
package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "webapp:", err)
		os.Exit(1)
	}
}

func run() error {
	pid := os.Getpid()
	if dir := os.Getenv("WEBAPP_PID_DIR"); dir != "" {
		inst := filepath.Base(filepath.Dir(os.Getenv("HOME")))
		if err := os.WriteFile(filepath.Join(dir, inst+"."+strconv.Itoa(pid)), nil, 0o600); err != nil {
			return err
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if d := os.Getenv("WEBAPP_READY_DELAY"); d != "" {
		delay, err := time.ParseDuration(d)
		if err != nil {
			return fmt.Errorf("WEBAPP_READY_DELAY: %w", err)
		}
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return nil
		}
	}
	lis, err := net.Listen("tcp", "127.0.0.1:"+os.Getenv("PORT"))
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintf(w, "hello from %d", pid) })
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "ok") })
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.Serve(lis); err != http.ErrServerClosed {
		return err
	}
	return nil
}
