// Command edgekit-demo runs the lifecycle engine alone on this host, in one
// process and with no host around it: the shortest example of embedding
// the engine ("edgekit up" runs a whole region). It brings a cloudlet
// (this machine, through the local platform) under management, creates a
// cluster on it, deploys an application as a real process, checks that it
// answers over HTTP, updates its environment with a list action, and
// deletes everything again, printing every report the engine sends as it
// happens.
//
// Usage:
//
//	go run ./cmd/edgekit-demo [-state-dir DIR] [-keep] [-v]
//
// The application is this same binary started as "edgekit-demo serve": a
// small HTTP server on $PORT answering /healthz and /.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/edgekit/edgekit/internal/cmdutil"
	"github.com/edgekit/edgekit/internal/demoapp"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "serve" {
		os.Exit(cmdutil.Run("serve", demoapp.Main, os.Args[2:], os.Stderr))
	}
	fs := flag.NewFlagSet("edgekit-demo", flag.ContinueOnError)
	stateDir := fs.String("state-dir", "", "directory for the local platform's state (default: a temporary directory, removed at the end)")
	keep := fs.Bool("keep", false, "leave the cloudlet, cluster and application running instead of deleting them")
	verbose := fs.Bool("v", false, "also print the engine's structured logs")
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	logOut := io.Discard
	if *verbose {
		logOut = os.Stderr
	}
	d := &demo{
		out:  os.Stdout,
		log:  slog.New(slog.NewTextHandler(logOut, &slog.HandlerOptions{Level: slog.LevelDebug})),
		keep: *keep,
	}
	if err := d.run(ctx, *stateDir); err != nil {
		fmt.Fprintln(os.Stderr, "edgekit-demo:", err)
		os.Exit(1)
	}
}
