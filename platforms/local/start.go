package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
)

// launch reserves ports, records the launch, starts the process (unless
// off), records it and waits for its health check, writing the record at
// each step so that a kill at any instant leaves either nothing running or
// a process whose marker names this launch. On failure it leaves nothing
// of this launch running and no ports held; created says the instance was
// ready before (an update), in which case its record stays, not running.
func (p *Platform) launch(ctx context.Context, op appOp, app *edgeproto.App, spec launchSpec, res executor.Reservations, pr executor.Progress, off, created bool) (_ appRecord, err error) {
	needs, err := portNeeds(app)
	if err != nil {
		return appRecord{}, err
	}
	req, err := appRequests(app)
	if err != nil {
		return appRecord{}, err
	}
	step(pr, "Checking the cluster's quota")
	release, err := p.admit(ctx, op, req)
	if err != nil {
		return appRecord{}, err
	}
	// Held until this launch's record (with its requests) is written.
	defer func() { release() }()
	launchID, err := newLaunchID()
	if err != nil {
		return appRecord{}, err
	}
	step(pr, "Reserving ports")
	firsts, err := p.allocatePorts(ctx, res, op, needs)
	if err != nil {
		return appRecord{}, err
	}
	rec := appRecord{
		Format:       stateFileFormat,
		Organization: op.org,
		Name:         op.name,
		AppOrg:       app.GetKey().GetOrganization(),
		AppName:      app.GetKey().GetName(),
		AppVersion:   app.GetKey().GetVersion(),
		Phase:        phaseCreating,
		Created:      created,
		Launch:       launchID,
		ConfigHash:   spec.hash,
		Mapped:       mapPorts(app, firsts, needs),
		CPU:          req.CPU,
		Memory:       req.Memory,
	}
	for i, f := range firsts {
		for q := f; q < f+needs[i]; q++ {
			rec.Ports = append(rec.Ports, q)
		}
	}
	defer func() {
		if err != nil {
			p.failLaunch(ctx, op, res, &rec)
		}
	}()
	pb, check, err := healthProbe(app, firsts)
	if err != nil {
		return appRecord{}, err
	}
	if err := p.mkdir(op.loc.dir); err != nil {
		return appRecord{}, err
	}
	if off {
		rec.Phase, rec.Created = phaseOff, true
		if err := p.writeRecord(ctx, op.statePath, &rec); err != nil {
			return appRecord{}, err
		}
		return rec, nil
	}
	// The intent: ports, launch id and requests on disk before anything
	// runs; from then on the quota counts this instance.
	if err := p.writeRecord(ctx, op.statePath, &rec); err != nil {
		return appRecord{}, err
	}
	release()
	release = func() {}
	p.at(hookAppIntent)
	work := filepath.Join(op.loc.dir, appWorkDir)
	if err := p.mkdir(work); err != nil {
		return appRecord{}, err
	}

	step(pr, "Starting process")
	env := spec.environ(p.cfg.InheritEnv, work, rec.Mapped, firsts, p.marker(launchID, op.loc.mark))
	s, err := startProcess(procSpec{
		path:   spec.path,
		args:   spec.args,
		env:    env,
		dir:    work,
		stdout: filepath.Join(op.loc.dir, stdoutLogFile),
		stderr: filepath.Join(op.loc.dir, stderrLogFile),
	})
	if err != nil {
		return appRecord{}, fmt.Errorf("application instance %s: %w", op.key, err)
	}
	p.at(hookAppStarted)
	rec.Pid, rec.StartTime, rec.Exe, rec.BootID, rec.StartedAt = s.pid, s.startTime, s.exe, bootID(), time.Now().UTC()
	if err := p.writeRecord(ctx, op.statePath, &rec); err != nil {
		return appRecord{}, err
	}
	p.at(hookAppRecorded)
	p.log.InfoContext(ctx, "process started", "appinst", op.key, "pid", s.pid, "command", filepath.Base(spec.path), "ports", rec.Ports)
	if check {
		if err := p.waitHealthy(ctx, op, pb, &rec, pr); err != nil {
			return appRecord{}, err
		}
	} else if !alive(s.pid, s.startTime) {
		return appRecord{}, fmt.Errorf("application instance %s: %w: process exited right after start", op.key, ErrStart)
	}
	if err := p.markReady(ctx, op, &rec); err != nil {
		return appRecord{}, err
	}
	return rec, nil
}

// awaitHealthy finishes the health check of an adopted process whose
// create was interrupted, and records it ready.
func (p *Platform) awaitHealthy(ctx context.Context, op appOp, app *edgeproto.App, rec *appRecord, firsts []int, pr executor.Progress) error {
	pb, check, err := healthProbe(app, firsts)
	if err != nil {
		return err
	}
	if check {
		if err := p.waitHealthy(ctx, op, pb, rec, pr); err != nil {
			return err
		}
	}
	return p.markReady(ctx, op, rec)
}

func (p *Platform) waitHealthy(ctx context.Context, op appOp, pb probe, rec *appRecord, pr executor.Progress) error {
	step(pr, "Waiting for health check")
	pid, start := rec.Pid, rec.StartTime
	if err := waitHealthy(ctx, pb, p.cfg.HealthInterval, p.cfg.HealthTimeout, func() bool { return alive(pid, start) }); err != nil {
		p.log.WarnContext(ctx, "health check failed; stopping process", "appinst", op.key, "pid", pid, "error", err)
		return fmt.Errorf("application instance %s: %w", op.key, err)
	}
	return nil
}

func (p *Platform) markReady(ctx context.Context, op appOp, rec *appRecord) error {
	rec.Phase, rec.Created = phaseReady, true
	return p.writeRecord(ctx, op.statePath, rec)
}

// failLaunch undoes a failed launch: it stops the launch's processes,
// releases the instance's ports and removes its record, or, for an
// instance that was ready before, records it as not running. It runs even
// when ctx ended.
func (p *Platform) failLaunch(ctx context.Context, op appOp, res executor.Reservations, rec *appRecord) {
	ctx = context.WithoutCancel(ctx)
	if _, err := p.stopMarked(ctx, op.loc.mark, func(f found) bool { return f.launch != rec.Launch }); err != nil {
		p.log.WarnContext(ctx, "stopping the process of a failed start", "appinst", op.key, "error", err)
	}
	if err := releasePorts(ctx, res, op.cloudlet, op.owner); err != nil {
		p.log.WarnContext(ctx, "releasing ports after a failed start", "appinst", op.key, "error", err)
	}
	if rec.Created {
		rec.Pid, rec.StartTime, rec.Exe, rec.Ports, rec.Mapped = 0, 0, "", nil, nil
		if err := p.writeRecord(ctx, op.statePath, rec); err != nil {
			p.log.WarnContext(ctx, "recording a failed restart", "appinst", op.key, "error", err)
		}
		return
	}
	if err := os.Remove(op.statePath); err != nil && !errors.Is(err, os.ErrNotExist) {
		p.log.WarnContext(ctx, "removing the record of a failed start", "appinst", op.key, "error", p.stateErr("removing", err))
	}
}

// allocatePorts reserves ports for needs and skips the ones something on
// the host already listens on: every port of the cluster's range is tried
// before it reports that none is left.
func (p *Platform) allocatePorts(ctx context.Context, res executor.Reservations, op appOp, needs []int) ([]int, error) {
	skip := map[int]bool{}
	for range op.rng.size() + 1 { // each round skips at least one more port
		firsts, err := reserveAppPorts(ctx, res, op.cloudlet, op.owner, op.rng, needs, skip)
		if err != nil {
			_ = releasePorts(context.WithoutCancel(ctx), res, op.cloudlet, op.owner)
			if len(skip) > 0 && errors.Is(err, ErrNoFreePorts) {
				return nil, fmt.Errorf("%w (%d ports of the range are in use on the host)", err, len(skip))
			}
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
	return nil, fmt.Errorf("%w: in cluster range %s", ErrNoFreePorts, op.rng)
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
