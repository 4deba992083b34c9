package region

import (
	"context"
	"fmt"
	"os"

	"github.com/edgekit/edgekit/internal/cli/clientconfig"
)

// serve resumes what the last stop powered off, describes the region
// (region.json, the edgectl context, the summary), runs OnReady and
// supervises the processes until ctx ends.
func (u *upRun) serve(ctx context.Context) error {
	pctx, cancel := context.WithTimeout(ctx, u.o.ReadyTimeout)
	n, err := powerOn(pctx, u.api, u.l.poweredOff())
	cancel()
	if err != nil {
		u.out.printf("  warning: powering on what the last stop powered off: %v\n", err)
	}
	if n > 0 {
		u.out.event("resumed", fmt.Sprintf("%d app instances", n), "powered on again")
	}
	u.mu.Lock()
	info := u.describeLocked()
	u.mu.Unlock()
	if err := info.write(u.l.info()); err != nil {
		return fmt.Errorf("region: %w", err)
	}
	if err := u.writeContext(); err != nil {
		return err
	}
	u.summary(info)
	u.mu.Lock()
	for _, name := range u.order {
		u.wg.Go(func() { u.supervise(ctx, u.procs[name]) })
	}
	u.mu.Unlock()
	if u.o.OnReady != nil {
		u.wg.Go(func() { u.o.OnReady(ctx, info) })
	}
	<-ctx.Done()
	return nil
}

// describeLocked builds the Info of the running region; u.mu is held.
func (u *upRun) describeLocked() *Info {
	info := &Info{PID: os.Getpid(), StateDir: u.l.dir, Region: RegionName, Executable: u.l.bin(),
		Controller: u.ports.controllerAPI, StatusPage: "https://" + u.ports.controllerHTTP + "/ui/",
		AdminTokenFile: u.l.adminToken(), CAFile: u.l.caFile(), EdgectlConfig: u.o.EdgectlConfig, EdgectlContext: u.o.Context,
		FluidosTLSDir: u.l.fluidosTLS(), Nodes: map[string]NodeInfo{}}
	if len(u.kubeconfig) > 0 {
		info.KubeconfigFile = u.o.KubeconfigFile
	}
	for _, c := range u.cloudlets() {
		info.Cloudlets = append(info.Cloudlets, CloudletInfo{Organization: Operator, Name: c.name, Manager: c.manager(), Platform: c.platformType()})
	}
	for _, id := range u.nodeIDs() {
		np := u.ports.nodes[id]
		info.Nodes[id] = NodeInfo{REAR: np.rear, API: np.api}
	}
	for _, name := range u.order {
		p := u.procs[name]
		p.mu.Lock()
		pi := ProcessInfo{Name: name, Log: p.log, Listeners: p.state.Listeners}
		if p.cmd != nil {
			pi.PID = p.cmd.Process.Pid
		}
		p.mu.Unlock()
		info.Processes = append(info.Processes, pi)
	}
	return info
}

// writeContext writes the edgectl context of the region and makes it
// current.
func (u *upRun) writeContext() error {
	cfg, err := clientconfig.Load(u.o.EdgectlConfig)
	if err != nil {
		return err
	}
	cfg.Set(clientconfig.Context{Name: u.o.Context, Addr: u.ports.controllerAPI, TokenFile: u.l.adminToken(), CAFile: u.l.caFile()})
	cfg.CurrentContext = u.o.Context
	return cfg.Save(u.o.EdgectlConfig)
}

// summary tells the user how to reach the region.
func (u *upRun) summary(info *Info) {
	u.out.printf(`
  edgectl       context %q (now current) in %s
                  edgectl show cloudlets        (edgectl: go run ./cmd/edgectl in the source tree, or %s edgectl)
  status page   %s   (log in with the admin token)
  admin token   %s
  FLUIDOS       edgectl fluidos --node %s --dev-tls %s show flavors --peers
  the tour      edgekit tour --state-dir %s   (or edgekit up --tour)
  logs          %s
Ctrl-C stops the region; the state stays in %s for the next edgekit up.
`, info.EdgectlContext, info.EdgectlConfig, info.Executable, info.StatusPage, info.AdminTokenFile, info.Nodes[Consumer].API,
		info.FluidosTLSDir, u.l.dir, u.l.path("logs"), u.l.dir)
}
