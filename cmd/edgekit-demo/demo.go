package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
	"github.com/edgekit/edgekit/fieldmap"
	"github.com/edgekit/edgekit/platforms"
	_ "github.com/edgekit/edgekit/platforms/local" // registers "local"
)

// demo plays the controller: it keeps the objects, submits state changes to
// the engine and applies the engine's Info reports back to the objects.
type demo struct {
	out  io.Writer
	log  *slog.Logger
	keep bool

	mu sync.Mutex // serialises printing

	cloudlets *executor.Cache[*edgeproto.Cloudlet]
	clusters  *executor.Cache[*edgeproto.ClusterInst]
	apps      *executor.Cache[*edgeproto.App]
	appInsts  *executor.Cache[*edgeproto.AppInst]

	cloudletInfos *executor.Cache[*edgeproto.CloudletInfo]
	clusterInfos  *executor.Cache[*edgeproto.ClusterInstInfo]
	appInstInfos  *executor.Cache[*edgeproto.AppInstInfo]

	engine *executor.Engine
}

func (d *demo) printf(format string, args ...any) {
	d.mu.Lock()
	defer d.mu.Unlock()
	fmt.Fprintf(d.out, format, args...)
}

func (d *demo) run(ctx context.Context, stateDir string) error {
	if stateDir == "" {
		dir, err := os.MkdirTemp("", "edgekit-demo-")
		if err != nil {
			return err
		}
		if !d.keep {
			defer os.RemoveAll(dir)
		}
		stateDir = dir
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("locating this program to run as the demo app: %w", err)
	}

	d.cloudlets = executor.NewCache[*edgeproto.Cloudlet]()
	d.clusters = executor.NewCache[*edgeproto.ClusterInst]()
	d.apps = executor.NewCache[*edgeproto.App]()
	d.appInsts = executor.NewCache[*edgeproto.AppInst]()
	d.cloudletInfos = executor.NewCache[*edgeproto.CloudletInfo]()
	d.clusterInfos = executor.NewCache[*edgeproto.ClusterInstInfo]()
	d.appInstInfos = executor.NewCache[*edgeproto.AppInstInfo]()
	d.watchReports()

	platform, err := platforms.New("local", platforms.Config{Dir: stateDir, Logger: d.log})
	if err != nil {
		return err
	}
	d.engine, err = executor.New(executor.Config{
		Platform: platform,
		Objects: executor.Objects{
			Cloudlets:    executor.CacheGetter[*edgeproto.CloudletKey](d.cloudlets),
			ClusterInsts: executor.CacheGetter[*edgeproto.ClusterKey](d.clusters),
			Apps:         executor.CacheGetter[*edgeproto.AppKey](d.apps),
			AppInsts:     executor.CacheGetter[*edgeproto.AppInstKey](d.appInsts),
		},
		CloudletInfos:    d.cloudletInfos,
		ClusterInstInfos: d.clusterInfos,
		AppInstInfos:     d.appInstInfos,
		Settings: &edgeproto.Settings{
			CreateAppInstTimeout: durationpb.New(30 * time.Second),
		},
		Logger: d.log,
	})
	if err != nil {
		return err
	}
	engineCtx, stopEngine := context.WithCancel(context.Background())
	engineDone := make(chan error, 1)
	go func() { engineDone <- d.engine.Start(engineCtx) }()
	defer func() {
		stopEngine()
		<-engineDone
	}()

	d.printf("edgekit demo: local platform, state in %s\n\n", stateDir)
	if err := d.lifecycle(ctx, self); err != nil {
		return err
	}
	if d.keep {
		d.printf("\nleft running (-keep); state in %s\n", stateDir)
		return nil
	}
	d.printf("\ndone: everything created was deleted again\n")
	return nil
}

// watchReports prints every report as the engine sends it.
func (d *demo) watchReports() {
	d.cloudletInfos.OnChange(func(key string, info *edgeproto.CloudletInfo, fm *fieldmap.FieldMap) {
		d.report("Cloudlet", key, info.GetState().String(), info.GetStatus(), info.GetErrors(), fm)
	})
	d.clusterInfos.OnChange(func(key string, info *edgeproto.ClusterInstInfo, fm *fieldmap.FieldMap) {
		d.report("ClusterInst", key, info.GetState().String(), info.GetStatus(), info.GetErrors(), fm)
	})
	d.appInstInfos.OnChange(func(key string, info *edgeproto.AppInstInfo, fm *fieldmap.FieldMap) {
		d.report("AppInst", key, info.GetState().String(), info.GetStatus(), info.GetErrors(), fm)
	})
}

func (d *demo) report(kind, key, state string, status *edgeproto.StatusInfo, errs []string, fm *fieldmap.FieldMap) {
	line := fmt.Sprintf("  %-11s %-34s %-12s", kind, key, shortState(state))
	if s := status.Render(); s != "" {
		line += " " + s
	}
	if len(errs) > 0 {
		line += " errors: " + strings.Join(errs, "; ")
	}
	d.printf("%s  (flags %s)\n", line, strings.Trim(fm.String(), "[]"))
}

func shortState(s string) string {
	for _, p := range []string{"TRACKED_STATE_", "CLOUDLET_STATE_"} {
		s = strings.TrimPrefix(s, p)
	}
	return s
}

// wait waits for h and names the step that failed.
func wait(ctx context.Context, what string, h *executor.Handle, err error) error {
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if err := h.Wait(ctx); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}
