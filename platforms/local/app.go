package local

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
)

// loopback is the only address the platform hands out.
const loopback = "127.0.0.1"

// appOp is what every application operation resolves first.
type appOp struct {
	cloudlet   string // reservation table
	owner      string // reservation owner of the instance's ports
	key        string // org/name, for logs
	org, name  string
	dir        string // application directory
	statePath  string
	rng        portRange // the cluster's port range
	clusterDir string
}

func (p *Platform) resolveApp(cluster *edgeproto.ClusterInst, inst *edgeproto.AppInst) (appOp, error) {
	if cluster == nil || inst == nil {
		return appOp{}, fmt.Errorf("%w: nil cluster or application instance", ErrInvalidObject)
	}
	if cluster.GetCloudletKey() == nil && inst.GetCloudletKey() != nil {
		cluster = &edgeproto.ClusterInst{Key: cluster.GetKey(), CloudletKey: inst.GetCloudletKey()}
	}
	dir, err := p.appDir(cluster, inst)
	if err != nil {
		return appOp{}, err
	}
	cdir, err := p.clusterDir(cluster)
	if err != nil {
		return appOp{}, err
	}
	return appOp{
		cloudlet:   cloudletID(cluster.GetCloudletKey()),
		owner:      appOwner(inst.GetKey()),
		key:        appInstString(inst.GetKey()),
		org:        inst.GetKey().GetOrganization(),
		name:       inst.GetKey().GetName(),
		dir:        dir,
		statePath:  filepath.Join(dir, appStateFile),
		clusterDir: cdir,
	}, nil
}

// loadCluster fills op.rng from the cluster record.
func (p *Platform) loadCluster(op *appOp, cluster *edgeproto.ClusterInst, inst *edgeproto.AppInst) error {
	if cluster.GetCloudletKey() == nil && inst.GetCloudletKey() != nil {
		cluster = &edgeproto.ClusterInst{Key: cluster.GetKey(), CloudletKey: inst.GetCloudletKey()}
	}
	_, rec, err := p.readCluster(cluster)
	if err != nil {
		return err
	}
	op.rng = portRange{rec.PortFirst, rec.PortLast}
	if !op.rng.valid() {
		return fmt.Errorf("%w: cluster %s has no valid port range", ErrState, clusterString(cluster.GetKey()))
	}
	return nil
}

// CreateAppInst starts the application's command as a process in the
// cluster, with its environment and allocated ports, and waits for its
// health check. When a record of the instance exists and its process is
// alive (same pid, same start time) it adopts it without starting a
// second one; a record whose process is gone is cleaned up and the
// process started again. On a failed start or health check the process is
// stopped and its ports released before the error is returned. On success
// it sets inst.Uri (127.0.0.1) and inst.MappedPorts (public_port set).
func (p *Platform) CreateAppInst(ctx context.Context, cluster *edgeproto.ClusterInst, app *edgeproto.App, inst *edgeproto.AppInst, res executor.Reservations, pr executor.Progress) (*edgeproto.AppInstRuntime, error) {
	if res == nil {
		return nil, fmt.Errorf("%w: no reservations store", ErrInvalidObject)
	}
	op, err := p.resolveApp(cluster, inst)
	if err != nil {
		return nil, err
	}
	unlock, err := p.locks.lock(ctx, op.dir)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := p.loadCluster(&op, cluster, inst); err != nil {
		return nil, err
	}
	spec, err := newLaunchSpec(app)
	if err != nil {
		return nil, err
	}

	var rec appRecord
	had, err := readJSON(op.statePath, &rec)
	if err != nil {
		return nil, err
	}
	if had {
		if rec.Pid != 0 && isOurs(rec.Pid, rec.StartTime) {
			step(pr, "Adopting running process")
			p.adoptPorts(ctx, res, op, rec.Ports)
			p.log.InfoContext(ctx, "application instance adopted", "appinst", op.key, "pid", rec.Pid)
			return rec.publish(inst), nil
		}
		if rec.PoweredOff && powerOff(inst.GetPowerState()) {
			p.adoptPorts(ctx, res, op, rec.Ports)
			return rec.publish(inst), nil
		}
		if rec.Pid != 0 {
			step(pr, "Cleaning up stale process record")
			p.log.InfoContext(ctx, "stale process record: process gone or pid reused", "appinst", op.key, "pid", rec.Pid)
		}
		if err := os.Remove(op.statePath); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: %w", ErrState, err)
		}
	}
	rec, err = p.launch(ctx, op, app, spec, res, pr, powerOff(inst.GetPowerState()))
	if err != nil {
		return nil, err
	}
	return rec.publish(inst), nil
}

// UpdateAppInst applies the instance's power state and configuration:
// powered off stops the process (keeping its ports); powered on starts it
// when it is not running, or restarts it when the command, arguments,
// environment or ports of app changed; a reboot request restarts it.
func (p *Platform) UpdateAppInst(ctx context.Context, cluster *edgeproto.ClusterInst, app *edgeproto.App, inst *edgeproto.AppInst, res executor.Reservations, pr executor.Progress) (*edgeproto.AppInstRuntime, error) {
	if res == nil {
		return nil, fmt.Errorf("%w: no reservations store", ErrInvalidObject)
	}
	op, err := p.resolveApp(cluster, inst)
	if err != nil {
		return nil, err
	}
	unlock, err := p.locks.lock(ctx, op.dir)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := p.loadCluster(&op, cluster, inst); err != nil {
		return nil, err
	}
	spec, err := newLaunchSpec(app)
	if err != nil {
		return nil, err
	}
	var rec appRecord
	if _, err := readJSON(op.statePath, &rec); err != nil {
		return nil, err
	}
	running := rec.Pid != 0 && isOurs(rec.Pid, rec.StartTime)
	ps := inst.GetPowerState()

	if powerOff(ps) {
		if running {
			step(pr, "Stopping process")
			if _, err := stopProcess(ctx, rec.Pid, rec.StartTime, p.stopPolicy()); err != nil {
				return nil, err
			}
			p.log.InfoContext(ctx, "application instance powered off", "appinst", op.key, "pid", rec.Pid)
		}
		if rec.Format == 0 {
			// No record: keep nothing running, hold no ports.
			return &edgeproto.AppInstRuntime{}, nil
		}
		rec.Pid, rec.StartTime, rec.StartedAt, rec.PoweredOff = 0, 0, time.Time{}, true
		if err := writeJSON(op.statePath, &rec); err != nil {
			return nil, err
		}
		return rec.publish(inst), nil
	}

	reboot := ps == edgeproto.PowerState_POWER_STATE_REBOOT_REQUESTED || ps == edgeproto.PowerState_POWER_STATE_REBOOTING
	if running && !reboot && rec.ConfigHash == spec.hash {
		p.adoptPorts(ctx, res, op, rec.Ports)
		return rec.publish(inst), nil
	}
	if running {
		step(pr, "Stopping process")
		if _, err := stopProcess(ctx, rec.Pid, rec.StartTime, p.stopPolicy()); err != nil {
			return nil, err
		}
	}
	if err := os.Remove(op.statePath); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %w", ErrState, err)
	}
	rec, err = p.launch(ctx, op, app, spec, res, pr, false)
	if err != nil {
		return nil, err
	}
	return rec.publish(inst), nil
}

// DeleteAppInst stops the instance's process group (SIGTERM, then SIGKILL
// after the grace period), releases its ports and removes its directory
// with its logs. Deleting an absent instance succeeds.
func (p *Platform) DeleteAppInst(ctx context.Context, cluster *edgeproto.ClusterInst, app *edgeproto.App, inst *edgeproto.AppInst, res executor.Reservations, pr executor.Progress) error {
	op, err := p.resolveApp(cluster, inst)
	if err != nil {
		return err
	}
	unlock, err := p.locks.lock(ctx, op.dir)
	if err != nil {
		return err
	}
	defer unlock()
	var rec appRecord
	if _, err := readJSON(op.statePath, &rec); err != nil {
		return err
	}
	if rec.Pid != 0 {
		step(pr, "Stopping process")
		how, err := stopProcess(ctx, rec.Pid, rec.StartTime, p.stopPolicy())
		if err != nil {
			return err
		}
		if how == stopKilled {
			p.log.WarnContext(ctx, "process did not exit after SIGTERM; killed", "appinst", op.key, "pid", rec.Pid, "grace", p.cfg.StopGrace)
		}
	}
	step(pr, "Releasing ports")
	if err := releasePorts(ctx, res, op.cloudlet, op.owner); err != nil {
		return err
	}
	if err := os.RemoveAll(op.dir); err != nil {
		return fmt.Errorf("%w: removing application directory: %w", ErrState, err)
	}
	p.log.InfoContext(ctx, "application instance deleted", "appinst", op.key)
	return nil
}

// launch reserves ports, starts the process (unless off), records it and
// waits for its health check. On failure it leaves nothing running and no
// ports held.
func (p *Platform) launch(ctx context.Context, op appOp, app *edgeproto.App, spec launchSpec, res executor.Reservations, pr executor.Progress, off bool) (rec appRecord, err error) {
	needs, err := portNeeds(app)
	if err != nil {
		return appRecord{}, err
	}
	step(pr, "Reserving ports")
	firsts, err := p.allocatePorts(ctx, res, op, needs)
	if err != nil {
		return appRecord{}, err
	}
	defer func() {
		if err != nil {
			if rerr := releasePorts(context.WithoutCancel(ctx), res, op.cloudlet, op.owner); rerr != nil {
				p.log.WarnContext(ctx, "releasing ports after a failed start", "appinst", op.key, "error", rerr)
			}
		}
	}()
	pb, check, err := healthProbe(app, firsts)
	if err != nil {
		return appRecord{}, err
	}
	work := filepath.Join(op.dir, appWorkDir)
	if err := os.MkdirAll(work, 0o700); err != nil {
		return appRecord{}, fmt.Errorf("%w: application directory: %w", ErrState, err)
	}
	rec = appRecord{
		Format:       stateFileFormat,
		Organization: op.org,
		Name:         op.name,
		ConfigHash:   spec.hash,
		PoweredOff:   off,
	}
	rec.Mapped = mapPorts(app, firsts, needs)
	for i, f := range firsts {
		for q := f; q < f+needs[i]; q++ {
			rec.Ports = append(rec.Ports, q)
		}
	}
	if off {
		if err := writeJSON(op.statePath, &rec); err != nil {
			return appRecord{}, err
		}
		return rec, nil
	}

	step(pr, "Starting process")
	env := spec.environ(p.cfg.InheritEnv, work, rec.Mapped, firsts)
	pid, start, err := startProcess(procSpec{
		path:   spec.path,
		args:   spec.args,
		env:    env,
		dir:    work,
		stdout: filepath.Join(op.dir, stdoutLogFile),
		stderr: filepath.Join(op.dir, stderrLogFile),
	})
	if err != nil {
		return appRecord{}, fmt.Errorf("application instance %s: %w", op.key, err)
	}
	rec.Pid, rec.StartTime, rec.StartedAt = pid, start, time.Now().UTC()
	cleanup := func() {
		// The context may have ended: stopping must still happen.
		if _, serr := stopProcess(context.WithoutCancel(ctx), pid, start, p.stopPolicy()); serr != nil {
			p.log.WarnContext(ctx, "stopping process after a failed start", "appinst", op.key, "pid", pid, "error", serr)
		}
		_ = os.Remove(op.statePath)
	}
	if err := writeJSON(op.statePath, &rec); err != nil {
		cleanup()
		return appRecord{}, err
	}
	p.log.InfoContext(ctx, "process started", "appinst", op.key, "pid", pid, "command", spec.path, "ports", rec.Ports)

	if check {
		step(pr, "Waiting for health check")
		alive := func() bool { return isOurs(pid, start) }
		if err := waitHealthy(ctx, pb, p.cfg.HealthInterval, p.cfg.HealthTimeout, alive); err != nil {
			p.log.WarnContext(ctx, "health check failed; stopping process", "appinst", op.key, "pid", pid, "error", err)
			cleanup()
			return appRecord{}, fmt.Errorf("application instance %s: %w", op.key, err)
		}
	} else if !isOurs(pid, start) {
		cleanup()
		return appRecord{}, fmt.Errorf("application instance %s: %w: process exited right after start", op.key, ErrStart)
	}
	return rec, nil
}

// allocatePorts reserves ports for needs and skips ports that something on
// the host already listens on, retrying a few times.
func (p *Platform) allocatePorts(ctx context.Context, res executor.Reservations, op appOp, needs []int) ([]int, error) {
	skip := map[int]bool{}
	for range 5 {
		firsts, err := reserveAppPorts(ctx, res, op.cloudlet, op.owner, op.rng, needs, skip)
		if err != nil {
			return nil, err
		}
		busy := busyPorts(firsts, needs)
		if len(busy) == 0 {
			return firsts, nil
		}
		p.log.InfoContext(ctx, "ports busy on the host; picking others", "appinst", op.key, "ports", busy)
		for _, q := range busy {
			skip[q] = true
		}
	}
	_ = releasePorts(context.WithoutCancel(ctx), res, op.cloudlet, op.owner)
	return nil, fmt.Errorf("%w: ports of cluster range %s keep being busy on the host", ErrNoFreePorts, op.rng)
}

// adoptPorts makes the reservation store hold an adopted instance's ports
// again; a conflict is logged, since the process already listens there.
func (p *Platform) adoptPorts(ctx context.Context, res executor.Reservations, op appOp, ports []int) {
	conflicts, err := rereservePorts(ctx, res, op.cloudlet, op.owner, ports)
	if err != nil {
		p.log.WarnContext(ctx, "re-reserving ports of an adopted process", "appinst", op.key, "error", err)
		return
	}
	if len(conflicts) > 0 {
		p.log.WarnContext(ctx, "ports of an adopted process are reserved by another owner", "appinst", op.key, "ports", conflicts)
	}
}

// publish records where the instance is reached on inst (uri and mapped
// ports; inst is the caller's working copy) and returns the runtime info.
func (r *appRecord) publish(inst *edgeproto.AppInst) *edgeproto.AppInstRuntime {
	inst.Uri = loopback
	inst.MappedPorts = r.ports()
	return r.runtime()
}

// ports is the declared ports of a record with their public ports.
func (r *appRecord) ports() []*edgeproto.Port {
	out := make([]*edgeproto.Port, 0, len(r.Mapped))
	for _, m := range r.Mapped {
		out = append(out, &edgeproto.Port{Proto: m.Proto, InternalPort: m.Internal, EndPort: m.EndPort, PublicPort: m.Public})
	}
	return out
}

// runtime is the runtime info of a record.
func (r *appRecord) runtime() *edgeproto.AppInstRuntime {
	rt := &edgeproto.AppInstRuntime{}
	if r.Pid != 0 && !r.PoweredOff {
		rt.Pids = []int64{int64(r.Pid)}
	}
	for _, q := range r.Ports {
		rt.Ports = append(rt.Ports, uint32(q))
	}
	return rt
}

// mapPorts pairs each declared port with its host ports.
func mapPorts(app *edgeproto.App, firsts, needs []int) []mappedPort {
	declared := app.GetPorts()
	if len(declared) == 0 {
		return []mappedPort{{Proto: edgeproto.PortProtocol_PORT_PROTOCOL_TCP, Public: int32(firsts[0])}}
	}
	out := make([]mappedPort, len(declared))
	for i, pt := range declared {
		out[i] = mappedPort{Proto: pt.GetProto(), Internal: pt.GetInternalPort(), EndPort: pt.GetEndPort(), Public: int32(firsts[i])}
		if needs[i] > 1 {
			out[i].PublicEnd = int32(firsts[i] + needs[i] - 1)
		}
	}
	return out
}

// MappedPorts returns the declared ports of a running (or powered off)
// instance with public_port set to where they are reached on 127.0.0.1
// (a range internal_port..end_port is reached at public_port onwards). It
// returns nil for an absent instance.
func (p *Platform) MappedPorts(cluster *edgeproto.ClusterInst, inst *edgeproto.AppInst) ([]*edgeproto.Port, error) {
	op, err := p.resolveApp(cluster, inst)
	if err != nil {
		return nil, err
	}
	var rec appRecord
	ok, err := readJSON(op.statePath, &rec)
	if err != nil || !ok {
		return nil, err
	}
	return rec.ports(), nil
}

func powerOff(ps edgeproto.PowerState) bool {
	return slices.Contains([]edgeproto.PowerState{
		edgeproto.PowerState_POWER_STATE_POWER_OFF_REQUESTED,
		edgeproto.PowerState_POWER_STATE_POWERING_OFF,
		edgeproto.PowerState_POWER_STATE_POWER_OFF,
	}, ps)
}
