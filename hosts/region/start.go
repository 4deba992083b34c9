package region

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/edgekit/edgekit/internal/cmdutil"
)

// add registers a process of the region (not started yet).
func (u *upRun) add(name string, args ...string) *proc {
	p := &proc{name: name, exe: u.l.bin(), args: append(args, "--ready-file", u.l.readyFile(name)),
		log: u.l.logFile(name), ready: u.l.readyFile(name)}
	u.mu.Lock()
	u.procs[name] = p
	u.order = append(u.order, name)
	u.mu.Unlock()
	return p
}

// launch starts p and, in a goroutine, waits for it to be ready, printing
// the readiness line; wg and errs collect the outcome.
func (u *upRun) launch(ctx context.Context, p *proc, describe func(cmdutil.Ready) string, wg *sync.WaitGroup, errs *errList) {
	if err := p.start(); err != nil {
		errs.add(err)
		return
	}
	u.out.event("started", p.name, fmt.Sprintf("pid %d, log %s", p.pid(), u.rel(p.log)))
	wg.Go(func() {
		r, err := p.waitReady(ctx)
		if err != nil {
			errs.add(err)
			return
		}
		u.out.event("ready", p.name, describe(r))
	})
}

// rel names a path relative to the state directory.
func (u *upRun) rel(path string) string { return strings.TrimPrefix(path, u.l.dir+"/") }

// start starts every process, creates what the region needs in the
// controller on the first run, and waits until all is ready.
func (u *upRun) start(ctx context.Context) error {
	rctx, cancel := context.WithTimeoutCause(ctx, u.o.ReadyTimeout, fmt.Errorf("not ready within %v", u.o.ReadyTimeout))
	defer cancel()
	var (
		wg   sync.WaitGroup
		errs errList
	)
	// The FLUIDOS nodes and the controller depend on nothing.
	for _, id := range u.nodeIDs() {
		np := u.ports.nodes[id]
		args := []string{"fluidos-node", "--id", id, "--data-dir", u.l.node(id), "--dev-tls", u.l.fluidosTLS(),
			"--rear-listen", np.rear, "--api-listen", np.api, "--metrics-listen", np.metrics}
		switch id {
		case Provider:
			r := portRanges[Provider]
			args = append(args, "--blueprints", u.l.blueprints(), "--image", "kv="+u.l.kvImage(),
				"--port-range", fmt.Sprintf("%d-%d", r[0], r[1]))
		case KubernetesProvider:
			args = append(args, k8sProviderArgs(u.l, u.o.KubeconfigFile)...)
		case Consumer:
			var peers []string
			for _, p := range u.nodeIDs() {
				if p != Consumer {
					peers = append(peers, u.ports.nodes[p].rear)
				}
			}
			args = append(args, "--peers", strings.Join(peers, ","))
		}
		u.launch(rctx, u.add("fluidos-"+id, args...), func(r cmdutil.Ready) string {
			return fmt.Sprintf("REAR %s, API %s", r.Listeners["rear"], r.Listeners["api"])
		}, &wg, &errs)
	}
	// Each CCRM replica is its own etcd user, with the CCRM role.
	var ccrmUsers []string
	for i := range u.ports.ccrmMetrics {
		ccrmUsers = append(ccrmUsers, ccrmName(i))
	}
	ctrl := u.add("controller", "controller", "--data-dir", u.l.controller(), "--region", RegionName, "--dev-tls",
		"--etcd-ccrm-users", strings.Join(ccrmUsers, ","), "--listen", u.ports.controllerAPI, "--http-listen", u.ports.controllerHTTP,
		"--fluidos-nodes", strings.Join(u.nodeAPIs(), ","), "--fluidos-dev-tls", u.l.fluidosTLS())
	if err := ctrl.start(); err != nil {
		return err
	}
	u.out.event("started", ctrl.name, fmt.Sprintf("pid %d, log %s", ctrl.pid(), u.rel(ctrl.log)))
	cr, err := ctrl.waitReady(rctx)
	if err != nil {
		wg.Wait()
		return errors.Join(err, errs.err())
	}
	u.out.event("ready", ctrl.name, fmt.Sprintf("API %s, status page https://%s/ui/", cr.Listeners["api"], cr.Listeners["http"]))
	if err := u.bootstrap(rctx, cr, &wg, &errs); err != nil {
		errs.add(err)
	}
	wg.Wait()
	if err := errs.err(); err != nil {
		return err
	}
	u.out.printf("region ready in %.1fs\n", u.out.since().Seconds())
	return nil
}

// bootstrap connects to the controller, creates the flavor and the
// cloudlets (first run), starts the resource managers and waits for the
// cloudlets to be READY.
func (u *upRun) bootstrap(ctx context.Context, cr cmdutil.Ready, wg *sync.WaitGroup, errs *errList) error {
	a, err := dialController(cr.Listeners["api"], u.l.adminToken(), u.l.caFile())
	if err != nil {
		return err
	}
	u.api = a
	if err := ensureFlavor(ctx, a); err != nil {
		return err
	}
	for i, addr := range u.ports.ccrmMetrics {
		name := ccrmName(i)
		u.launch(ctx, u.add(name, "ccrm", "--etcd-endpoints", strings.Join(cr.Etcd, ","), "--controller", cr.Listeners["api"],
			"--region", RegionName, "--dev-tls", u.l.controllerTLS(), "--etcd-user", name, "--replica-id", name, "--state-dir", u.l.ccrmState(),
			"--metrics-listen", addr, "--lease-ttl", "5s", "--encryption-key-file", u.l.controllerKeys()),
			func(r cmdutil.Ready) string { return "metrics " + r.Listeners["metrics"] }, wg, errs)
	}
	since := map[string]time.Time{}
	for _, c := range u.cloudlets() {
		created, err := ensureCloudlet(ctx, a, c, u.l.accessKey(c.name))
		if err != nil {
			return err
		}
		if created {
			u.out.event("created", "cloudlet "+Operator+"/"+c.name, fmt.Sprintf("served by the %s, on the %s platform", c.manager(), c.platformType()))
		}
		if c.crm {
			args := []string{"crm", "--controller", cr.Listeners["api"], "--cloudlet", Operator + "/" + c.name,
				"--access-key-file", u.l.accessKey(c.name), "--platform", "local", "--state-dir", u.l.crmState(c.name),
				"--dev-tls", u.l.controllerTLS(), "--metrics-listen", u.ports.crmMetrics, "--stop-timeout", "10s"}
			for k, v := range platformProperties(c.name) {
				args = append(args, "--platform-property", k+"="+v)
			}
			since[c.name] = time.Now()
			u.launch(ctx, u.add("crm-"+c.name, args...), func(r cmdutil.Ready) string { return "metrics " + r.Listeners["metrics"] }, wg, errs)
		}
	}
	for _, c := range u.cloudlets() {
		wg.Go(func() {
			if err := waitCloudletReady(ctx, a, c.key(), since[c.name]); err != nil {
				errs.add(err)
				return
			}
			u.out.event("ready", "cloudlet "+Operator+"/"+c.name, fmt.Sprintf("READY, served by the %s on the %s platform", c.manager(), c.platformType()))
		})
	}
	return nil
}

// ccrmName is the name of the i-th CCRM replica: its replica id, process
// name and etcd user.
func ccrmName(i int) string { return "ccrm-" + string(rune('a'+i)) }

// errList collects errors from goroutines.
type errList struct {
	mu   sync.Mutex
	errs []error
}

func (e *errList) add(err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.errs = append(e.errs, err)
}

func (e *errList) err() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return errors.Join(e.errs...)
}

// supervise starts p again whenever it exits before ctx ends, after a
// back-off that doubles up to 30s (and starts again at 1s once p ran for
// a minute).
func (u *upRun) supervise(ctx context.Context, p *proc) {
	backoff := time.Second
	for {
		started := time.Now()
		select {
		case <-ctx.Done():
			return
		case <-p.exited():
		}
		if ctx.Err() != nil {
			return
		}
		if time.Since(started) > time.Minute {
			backoff = time.Second
		}
		u.out.event("exited", p.name, fmt.Sprintf("%v; starting it again in %v (see %s)", p.exitErr(), backoff, u.rel(p.log)))
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 30*time.Second)
		if err := p.start(); err != nil {
			u.out.event("failed", p.name, err.Error())
			continue
		}
		rctx, cancel := context.WithTimeout(ctx, u.o.ReadyTimeout)
		_, err := p.waitReady(rctx)
		cancel()
		if err == nil {
			u.rewriteInfo()
			u.out.event("ready", p.name, fmt.Sprintf("again, pid %d", p.pid()))
		}
	}
}

// rewriteInfo writes region.json again (a process was started again).
func (u *upRun) rewriteInfo() {
	u.mu.Lock()
	defer u.mu.Unlock()
	info := u.describeLocked()
	if err := info.write(u.l.info()); err != nil {
		u.out.printf("  warning: %v\n", err)
	}
}
