package local

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
)

// loopback is the only address the platform hands out.
const loopback = "127.0.0.1"

// appOp is what every application operation resolves first.
type appOp struct {
	cloudlet  string // reservation table
	owner     string // reservation owner of the instance's ports
	key       string // org/name, for logs and errors
	clusterID string // the cluster's org/name, for errors
	org, name string
	loc       loc // the instance
	cluster   loc
	statePath string
	rng       portRange // the cluster's port range, once loaded
	quota     *quota    // the cluster's quota, once loaded; nil for none
}

func (p *Platform) resolveApp(cluster *edgeproto.ClusterInst, inst *edgeproto.AppInst) (appOp, error) {
	if cluster == nil || inst == nil {
		return appOp{}, fmt.Errorf("%w: nil cluster or application instance", ErrInvalidObject)
	}
	if cluster.GetCloudletKey() == nil && inst.GetCloudletKey() != nil {
		cluster = &edgeproto.ClusterInst{Key: cluster.GetKey(), CloudletKey: inst.GetCloudletKey()}
	}
	cl, err := p.clusterLoc(cluster)
	if err != nil {
		return appOp{}, err
	}
	l, err := p.appLoc(cluster, inst)
	if err != nil {
		return appOp{}, err
	}
	return appOp{
		cloudlet:  cloudletID(cluster.GetCloudletKey()),
		owner:     appOwner(inst.GetKey()),
		key:       appInstString(inst.GetKey()),
		clusterID: clusterString(cluster.GetKey()),
		org:       inst.GetKey().GetOrganization(),
		name:      inst.GetKey().GetName(),
		loc:       l,
		cluster:   cl,
		statePath: filepath.Join(l.dir, appStateFile),
	}, nil
}

// loadCluster fills op.rng from the record of the instance's cluster,
// which must exist and not be being deleted.
func (p *Platform) loadCluster(op *appOp) error {
	var rec clusterRecord
	ok, err := p.readRecord(filepath.Join(op.cluster.dir, clusterFile), &rec)
	switch {
	case err != nil:
		return err
	case !ok:
		return fmt.Errorf("%w: %s", ErrClusterNotFound, op.clusterID)
	case rec.Phase == phaseDeleting:
		return fmt.Errorf("%w: %s is being deleted", ErrClusterNotFound, op.clusterID)
	}
	op.rng = portRange{rec.PortFirst, rec.PortLast}
	op.quota = rec.Quota
	if !op.rng.valid() {
		return fmt.Errorf("%w: %s has no port range yet (its create did not finish)", ErrClusterNotFound, op.clusterID)
	}
	return nil
}

// prepare runs the first steps of a create or update: resolve, lock,
// check the cluster, read the App's launch spec and the instance's record.
func (p *Platform) prepare(ctx context.Context, cluster *edgeproto.ClusterInst, app *edgeproto.App, inst *edgeproto.AppInst, res executor.Reservations) (op appOp, spec launchSpec, rec appRecord, had bool, unlock func(), err error) {
	if res == nil {
		err = fmt.Errorf("%w: no reservations store", ErrInvalidObject)
		return
	}
	op, err = p.resolveApp(cluster, inst)
	if unlock, err = p.begin(ctx, op.loc, err); err != nil {
		return
	}
	defer func() {
		if err != nil {
			unlock()
		}
	}()
	p.removeTemps(ctx, op.loc.dir, appStateFile)
	if err = p.loadCluster(&op); err != nil {
		return
	}
	if spec, err = newLaunchSpec(app, p.key); err != nil {
		return
	}
	had, err = p.readRecord(op.statePath, &rec)
	return
}

// CreateAppInst starts the application's command as a process in the
// cluster, with its environment and allocated ports, and waits for its
// health check. When the instance's record names a live process that is
// provably the one it started (see the package doc) it adopts it after
// its health check passes (again, if it passed once); every other process carrying the instance's marker is a
// leftover of an interrupted start and is stopped before a new one starts.
// On a failed start or health check the process is stopped and its ports
// released before the error is returned. On success it sets inst.Uri
// (127.0.0.1) and inst.MappedPorts (public_port set). An unreadable record
// fails the create (the engine's undo, a delete, recovers the instance).
func (p *Platform) CreateAppInst(ctx context.Context, cluster *edgeproto.ClusterInst, app *edgeproto.App, inst *edgeproto.AppInst, res executor.Reservations, pr executor.Progress) (*edgeproto.AppInstRuntime, error) {
	op, spec, rec, had, unlock, err := p.prepare(ctx, cluster, app, inst, res)
	if err != nil {
		return nil, err
	}
	defer unlock()
	off := powerOff(inst.GetPowerState())
	if had {
		st, why := p.checkRecorded(&rec, op.loc.mark)
		switch {
		case st == procForeign:
			return nil, foreignError("application instance "+op.key, rec.Pid, why)
		case st == procOurs && (rec.Phase == phaseReady || rec.ConfigHash == spec.hash):
			step(pr, "Adopting running process")
			if err := p.adopt(ctx, op, app, &rec, res, pr, true); err != nil {
				return nil, err
			}
			return rec.publish(inst), nil
		case rec.Phase == phaseOff && off:
			if _, err := p.stopMarked(ctx, op.loc.mark, nil); err != nil {
				return nil, err
			}
			p.adoptPorts(ctx, res, op, rec.Ports)
			return rec.publish(inst), nil
		case rec.Pid != 0:
			step(pr, "Cleaning up stale process record")
			p.log.InfoContext(ctx, "stale process record: process gone, pid reused or configuration changed", "appinst", op.key, "pid", rec.Pid)
		}
	}
	if err := p.stopLeftovers(ctx, op, pr, ""); err != nil {
		return nil, err
	}
	rec, err = p.launch(ctx, op, app, spec, res, pr, off, had && rec.Created)
	if err != nil {
		return nil, err
	}
	return rec.publish(inst), nil
}

// UpdateAppInst applies the instance's power state and configuration:
// powered off stops the process (keeping its ports); powered on starts it
// when it is not running, or restarts it when the command, arguments,
// environment or ports of app changed; a reboot request restarts it. An
// instance that was never created is ErrInstanceNotFound.
func (p *Platform) UpdateAppInst(ctx context.Context, cluster *edgeproto.ClusterInst, app *edgeproto.App, inst *edgeproto.AppInst, res executor.Reservations, pr executor.Progress) (*edgeproto.AppInstRuntime, error) {
	op, spec, rec, had, unlock, err := p.prepare(ctx, cluster, app, inst, res)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if !had {
		return nil, fmt.Errorf("%w: %s was never created on this platform", ErrInstanceNotFound, op.key)
	}
	st, why := p.checkRecorded(&rec, op.loc.mark)
	if st == procForeign {
		return nil, foreignError("application instance "+op.key, rec.Pid, why)
	}
	running := st == procOurs
	ps := inst.GetPowerState()

	if powerOff(ps) {
		step(pr, "Stopping process")
		if _, err := p.stopMarked(ctx, op.loc.mark, nil); err != nil {
			return nil, err
		}
		p.log.InfoContext(ctx, "application instance powered off", "appinst", op.key)
		rec.Pid, rec.StartTime, rec.Exe, rec.Phase, rec.Created = 0, 0, "", phaseOff, true
		if err := p.writeRecord(ctx, op.statePath, &rec); err != nil {
			return nil, err
		}
		return rec.publish(inst), nil
	}

	reboot := ps == edgeproto.PowerState_POWER_STATE_REBOOT_REQUESTED || ps == edgeproto.PowerState_POWER_STATE_REBOOTING
	if running && !reboot && rec.ConfigHash == spec.hash && rec.Phase == phaseReady {
		if err := p.adopt(ctx, op, app, &rec, res, pr, false); err != nil {
			return nil, err
		}
		return rec.publish(inst), nil
	}
	if err := p.stopLeftovers(ctx, op, pr, "Stopping process"); err != nil {
		return nil, err
	}
	rec, err = p.launch(ctx, op, app, spec, res, pr, false, rec.Created)
	if err != nil {
		return nil, err
	}
	return rec.publish(inst), nil
}

// DeleteAppInst stops every process carrying the instance's marker
// (SIGTERM to each process group, then SIGKILL after the grace period),
// releases its ports and removes its directory with its logs. Deleting an
// absent instance, or one whose key could never have been created,
// succeeds. An unreadable record does not stop the delete: the processes
// are found by their marker, which is what the record would have named.
func (p *Platform) DeleteAppInst(ctx context.Context, cluster *edgeproto.ClusterInst, app *edgeproto.App, inst *edgeproto.AppInst, res executor.Reservations, pr executor.Progress) error {
	op, err := p.resolveApp(cluster, inst)
	if errors.Is(err, errNeverCreatable) {
		return nil
	}
	unlock, err := p.begin(ctx, op.loc, err)
	if err != nil {
		return err
	}
	defer unlock()
	var rec appRecord
	had, err := p.readRecord(op.statePath, &rec)
	if err != nil {
		p.log.WarnContext(ctx, "record unreadable: stopping the instance's processes found by their marker", "appinst", op.key, "error", err)
	}
	if had {
		if st, why := p.checkRecorded(&rec, op.loc.mark); st == procForeign {
			return foreignError("application instance "+op.key, rec.Pid, why)
		}
	}
	if err := p.stopLeftovers(ctx, op, pr, "Stopping process"); err != nil {
		return err
	}
	p.at(hookAppStopped)
	step(pr, "Releasing ports")
	if err := releasePorts(ctx, res, op.cloudlet, op.owner); err != nil {
		return err
	}
	if err := p.removeAll(op.loc.dir); err != nil {
		return err
	}
	p.log.InfoContext(ctx, "application instance deleted", "appinst", op.key)
	return nil
}

// stopLeftovers stops every process carrying the instance's marker,
// announcing the step when msg is set and something runs.
func (p *Platform) stopLeftovers(ctx context.Context, op appOp, pr executor.Progress, msg string) error {
	if msg != "" {
		step(pr, msg)
	}
	how, err := p.stopMarked(ctx, op.loc.mark, nil)
	switch {
	case err != nil:
		return err
	case how == stopKilled:
		p.log.WarnContext(ctx, "process did not exit after SIGTERM; killed", "appinst", op.key, "grace", p.cfg.StopGrace)
	case how == stopTerminated && msg == "":
		p.log.InfoContext(ctx, "stopped processes of an interrupted start", "appinst", op.key)
	}
	return nil
}

// adopt keeps the recorded process: it stops processes of the instance's
// other launches, holds its ports again and, when the create that started
// it was interrupted before the process was healthy, or recheck is set (a
// create adopting a process that was healthy once: it may have hung since,
// while nothing watched it), waits for its health check as that create
// would have.
func (p *Platform) adopt(ctx context.Context, op appOp, app *edgeproto.App, rec *appRecord, res executor.Reservations, pr executor.Progress, recheck bool) error {
	if _, err := p.stopMarked(ctx, op.loc.mark, func(f found) bool { return f.launch == rec.Launch }); err != nil {
		return err
	}
	p.adoptPorts(ctx, res, op, rec.Ports)
	if rec.Phase != phaseReady || recheck {
		firsts := make([]int, len(rec.Mapped))
		for i, m := range rec.Mapped {
			firsts[i] = int(m.Public)
		}
		if err := p.awaitHealthy(ctx, op, app, rec, firsts, pr); err != nil {
			p.failLaunch(ctx, op, res, rec)
			return err
		}
	}
	p.log.InfoContext(ctx, "application instance adopted", "appinst", op.key, "pid", rec.Pid)
	return nil
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
	if r.Pid != 0 && r.Phase != phaseOff {
		rt.Pids = []int64{int64(r.Pid)}
	}
	for _, q := range r.Ports {
		rt.Ports = append(rt.Ports, uint32(q))
	}
	return rt
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
	ok, err := p.readRecord(op.statePath, &rec)
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
