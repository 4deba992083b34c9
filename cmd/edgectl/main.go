// Command edgectl is the command-line client of the edgekit controller:
// create, update, delete, show and watch its objects. The commands live in
// internal/cli/edgectl; see docs/edgectl.md.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/edgekit/edgekit/internal/cli/edgectl"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := edgectl.Execute(ctx, edgectl.Options{}, os.Args[1:])
	stop()
	os.Exit(code)
}
