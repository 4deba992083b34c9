// Command edgekit is the whole of edgekit in one program: one command runs
// a region on this machine, and the same binary is each of the region's
// programs.
//
//	edgekit up [--state-dir DIR] [--fresh] [--base-port N] [--kubeconfig FILE] [--tour]   run a whole region until Ctrl-C
//	edgekit tour [--state-dir DIR]                                   the scripted tour, against a running region
//	edgekit controller|crm|ccrm|fluidos-node [flags]                 one host: the flags of cmd/controller, cmd/crm...
//	edgekit edgectl ...                                              the command-line client (cmd/edgectl)
//	edgekit serve [--port N]                                         the small web application the tour deploys
//
// "up" runs every process of the region as this same binary (copied into
// the state directory, so that it outlives a "go run" build): a new user
// needs Go and nothing else. Run under the name edgekit-kv (a link "up"
// makes), the binary is the key-value service the region's FLUIDOS
// provider sells (cmd/edgekit-kv). See hosts/region.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"syscall"

	"github.com/edgekit/edgekit/hosts/ccrm"
	"github.com/edgekit/edgekit/hosts/controller"
	"github.com/edgekit/edgekit/hosts/crm"
	"github.com/edgekit/edgekit/hosts/fluidos/node"
	"github.com/edgekit/edgekit/hosts/region"
	"github.com/edgekit/edgekit/internal/cli/edgectl"
	"github.com/edgekit/edgekit/internal/cmdutil"
	"github.com/edgekit/edgekit/internal/demoapp"
	"github.com/edgekit/edgekit/internal/kvservice"
	_ "github.com/edgekit/edgekit/platforms/fake"       // registers "fake"
	_ "github.com/edgekit/edgekit/platforms/kubernetes" // registers "kubernetes"
	_ "github.com/edgekit/edgekit/platforms/local"      // registers "local"
)

// command is one subcommand.
type command struct {
	main  cmdutil.MainFunc
	short string
}

var commands = map[string]command{
	"up":           {upMain, "run a whole region on this machine until Ctrl-C"},
	"tour":         {tourMain, "the scripted tour, against the region running on a state directory"},
	"controller":   {controller.Main, "the region's controller (the flags of cmd/controller)"},
	"crm":          {crm.Main, "the resource manager of one edge site (the flags of cmd/crm)"},
	"ccrm":         {ccrm.Main, "one replica of the CCRM (the flags of cmd/ccrm)"},
	"fluidos-node": {node.Main, "a FLUIDOS node (the flags of cmd/fluidos-node)"},
	"serve":        {demoapp.Main, "the small web application the tour deploys"},
	"edgectl":      {edgectlMain, "the command-line client (see docs/edgectl.md)"},
}

func main() {
	if filepath.Base(os.Args[0]) == region.KVImageName {
		os.Exit(cmdutil.Run(region.KVImageName, kvservice.Main, os.Args[1:], os.Stderr))
	}
	if len(os.Args) < 2 {
		usage(os.Stderr)
		os.Exit(2)
	}
	name := os.Args[1]
	switch name {
	case "help", "-h", "--help":
		usage(os.Stdout)
		return
	}
	c, ok := commands[name]
	if !ok {
		fmt.Fprintf(os.Stderr, "edgekit: unknown command %q\n", name)
		usage(os.Stderr)
		os.Exit(2)
	}
	os.Exit(cmdutil.Run("edgekit "+name, c.main, os.Args[2:], os.Stderr))
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: edgekit COMMAND [flags]   (edgekit COMMAND -h for its flags)")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-13s %s\n", n, commands[n].short)
	}
}

// edgectlMain runs edgectl with its own exit codes.
func edgectlMain(ctx context.Context, args []string, _ io.Writer) error {
	if code := edgectl.Execute(ctx, edgectl.Options{}, args); code != 0 {
		os.Exit(code)
	}
	return nil
}

// forceOnSecondSignal ends the program at once on a second SIGINT or
// SIGTERM (the first one ends ctx: the graceful stop).
func forceOnSecondSignal(stderr io.Writer) {
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ch
		<-ch
		fmt.Fprintln(stderr, "edgekit up: stopping at once; the processes end on their own, application processes stay and the next up adopts them")
		os.Exit(130)
	}()
}
