package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/edgekit/edgekit/hosts/region"
	"github.com/edgekit/edgekit/internal/cmdutil"
)

// defaultStateDir is $XDG_STATE_HOME/edgekit/region, else
// ~/.local/state/edgekit/region.
func defaultStateDir() string {
	if d := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "edgekit", "region")
	}
	if h, err := os.UserHomeDir(); err == nil && filepath.IsAbs(h) {
		return filepath.Join(h, ".local", "state", "edgekit", "region")
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("edgekit-region-%d", os.Getuid()))
}

func upMain(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("up", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o region.Options
	tour := false
	fs.StringVar(&o.StateDir, "state-dir", defaultStateDir(), "the region's state directory: new, empty, or one an earlier up used (it resumes that region)")
	fs.BoolVar(&o.Fresh, "fresh", false, "delete what an earlier up left in --state-dir, and start a new region")
	fs.IntVar(&o.BasePort, "base-port", region.DefaultBasePort, "the controller's API listens on base+1, its status page and /metrics on base+2, and so on (see docs); 0 picks free ports")
	fs.StringVar(&o.Context, "context", region.DefaultContext, "name of the edgectl context to write (and make current)")
	fs.StringVar(&o.KubeconfigFile, "kubeconfig", "", "a kubeconfig: add the cloudlet operator/k8s1 on its cluster (platform kubernetes, served by the CCRM), with the file's content as its KUBECONFIG access variable, and the FLUIDOS node provider-k8s selling slices of that cluster and a MySQL Service on it (the tour buys both)")
	fs.BoolVar(&tour, "tour", false, "run the tour once the region is ready (the region stays up after it)")
	fs.DurationVar(&o.ReadyTimeout, "ready-timeout", region.DefaultReadyTimeout, "give up when the region is not ready within this long")
	fs.DurationVar(&o.StopTimeout, "stop-timeout", region.DefaultStopTimeout, "how long each process may take to stop before it is killed")
	if err := cmdutil.Parse(fs, args); err != nil {
		return err
	}
	o.Out = os.Stdout
	if tour {
		o.OnReady = func(ctx context.Context, info *region.Info) {
			if err := region.Tour(ctx, info, os.Stdout); err != nil && ctx.Err() == nil {
				fmt.Fprintln(stderr, "edgekit up: the tour failed:", err)
			}
		}
	}
	forceOnSecondSignal(stderr)
	return region.Up(ctx, o)
}

func tourMain(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("tour", flag.ContinueOnError)
	fs.SetOutput(stderr)
	stateDir := fs.String("state-dir", defaultStateDir(), "the state directory of the running region (edgekit up --state-dir)")
	if err := cmdutil.Parse(fs, args); err != nil {
		return err
	}
	info, err := region.ReadInfo(*stateDir)
	if err != nil {
		return err
	}
	return region.Tour(ctx, info, os.Stdout)
}
