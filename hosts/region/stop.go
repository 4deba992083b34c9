package region

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// stop stops the region: it powers off the application instances, stops
// the processes in order (resource managers and nodes, then the
// controller), stops any application process of the state directory still
// running and checks that every port is released.
func (u *upRun) stop() error {
	u.wg.Wait() // supervisors and OnReady end with Up's context
	u.out.reset()
	u.out.printf("stopping the region\n")
	var errs errList
	var appPorts []string
	if u.api != nil {
		ctx, cancel := context.WithTimeout(context.Background(), u.o.StopTimeout)
		if insts, err := listAppInsts(ctx, u.api); err == nil {
			for _, ai := range insts {
				for _, p := range ai.GetRuntimeInfo().GetPorts() {
					appPorts = append(appPorts, "127.0.0.1:"+strconv.Itoa(int(p)))
				}
			}
		}
		n, err := powerOff(ctx, u.api, u.l.poweredOff())
		cancel()
		if err != nil {
			errs.add(fmt.Errorf("powering off the app instances: %w", err))
		}
		if n > 0 {
			u.out.event("stopped", fmt.Sprintf("%d app instances", n), "powered off (the next up powers them on)")
		}
		u.api.Close()
	}
	_ = os.Remove(u.l.info())
	u.mu.Lock()
	var first, last []*proc
	for _, name := range u.order {
		if name == "controller" {
			last = append(last, u.procs[name])
		} else {
			first = append(first, u.procs[name])
		}
	}
	u.mu.Unlock()
	for _, group := range [][]*proc{first, last} {
		var wg sync.WaitGroup
		for _, p := range group {
			wg.Go(func() {
				pid := p.pid()
				if pid == 0 {
					return
				}
				if p.stop(u.o.StopTimeout) {
					errs.add(fmt.Errorf("%s (pid %d) did not stop within %v of SIGTERM: killed", p.name, pid, u.o.StopTimeout))
				}
				u.out.event("stopped", p.name, "pid "+strconv.Itoa(pid))
			})
		}
		wg.Wait()
	}
	if n := stopLeftovers(u.l.dir, 5*time.Second); n > 0 {
		u.out.event("stopped", fmt.Sprintf("%d leftover processes", n), "application processes still running under "+u.l.dir)
	}
	if busy := busyPorts(append(u.listened(), appPorts...), 3*time.Second); len(busy) > 0 {
		errs.add(fmt.Errorf("ports still in use after the stop: %s", strings.Join(busy, " ")))
	}
	err := errs.err()
	if err == nil {
		u.out.printf("region stopped in %.1fs; every process ended and every port is released; the state stays in %s\n",
			u.out.since().Seconds(), u.l.dir)
	}
	return err
}

// listened lists the addresses the region's processes said they listened
// on (in their ready files).
func (u *upRun) listened() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	var out []string
	for _, p := range u.procs {
		p.mu.Lock()
		for _, a := range p.state.Listeners {
			out = append(out, a)
		}
		p.mu.Unlock()
	}
	return out
}
