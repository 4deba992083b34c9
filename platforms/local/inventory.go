package local

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
)

// ListInsts reports the clusters and application instances of a cloudlet
// as the state directory and the host show them, whatever the engine
// remembers (executor.InventoryPlatform):
//
//   - a cluster with a record is READY (also when its delete was
//     interrupted: it exists until a delete finishes), or CREATING when its
//     create stopped before its port range was recorded; a cluster
//     directory without a record is CREATING when its name can be read back
//     into a key;
//   - an instance with a record is READY once it was ready (or powered off)
//     once, and CREATING when its create stopped before that; its runtime
//     info lists its pid only while that process runs and is provably the
//     platform's;
//   - processes carrying a marker of the cloudlet for an instance without a
//     record (its state file was lost) are reported as a CREATING
//     instance, keyed from the marker, so that the engine undoes them.
//
// An unreadable record (truncated, garbage, another format) affects its
// object only, and is logged with the file it names: an instance's is
// listed as CREATING, keyed from its directory's name, with the
// processes its marker finds, so that the engine's create of it fails
// naming the file (the instance is reported in error, and its undo stops
// what runs) and a delete stops it; a cluster's is listed as READY, keyed
// from its directory's name, without resources (nothing is undone on the
// strength of a record that cannot be read; creates of instances on it
// fail naming the file until a delete of the cluster). An object whose
// record is unreadable and whose directory name cannot be read back into
// a key (a name too long, stored hashed) is left out and logged: leaving
// it out never makes the engine delete anything. Processes carrying a
// marker whose instance cannot be named make ListInsts fail. A cloudlet
// that was never initialised has an empty inventory.
func (p *Platform) ListInsts(ctx context.Context, cloudlet *edgeproto.Cloudlet) (*executor.Inventory, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	return p.inventory(ctx, cloudlet.GetKey())
}

func (p *Platform) inventory(ctx context.Context, ck *edgeproto.CloudletKey) (*executor.Inventory, error) {
	inv := &executor.Inventory{}
	l, err := p.cloudletLoc(ck)
	if errors.Is(err, errNeverCreatable) {
		return inv, nil
	}
	if err != nil {
		return nil, err
	}
	unlock, err := p.lockShared(ctx, l)
	if err != nil {
		return nil, err
	}
	defer unlock()
	procs, err := p.scan(l.mark)
	if err != nil {
		return nil, err
	}
	running := map[string][]found{}
	for _, f := range procs {
		running[f.mark] = append(running[f.mark], f)
	}
	seen := map[string]bool{}
	var errs []error

	ents, err := os.ReadDir(filepath.Join(l.dir, clustersDir))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, p.stateErr("listing", err)
	}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		cdir := filepath.Join(l.dir, clustersDir, e.Name())
		cmark := l.mark + "/" + e.Name()
		ckey, err := p.listCluster(ctx, inv, ck, cdir, e.Name())
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if ckey == nil {
			// Left out (logged): its instances cannot be keyed either.
			for _, a := range appDirs(cdir) {
				seen[cmark+"/"+a] = true
			}
			continue
		}
		apps, err := os.ReadDir(filepath.Join(cdir, appsDir))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, p.stateErr("listing", err))
			continue
		}
		for _, a := range apps {
			if !a.IsDir() {
				continue
			}
			imark := cmark + "/" + a.Name()
			seen[imark] = true
			if err := p.listInstance(ctx, inv, ck, ckey, filepath.Join(cdir, appsDir, a.Name()), imark, running[imark]); err != nil {
				errs = append(errs, err)
			}
		}
	}
	// Processes of an instance whose directory is gone.
	for mark, ps := range running {
		if seen[mark] {
			continue
		}
		parts := strings.Split(mark, "/")
		var corg, cname, iorg, iname string
		ok := len(parts) == 3
		if ok {
			var ok1, ok2 bool
			corg, cname, ok1 = parseDirName(parts[1])
			iorg, iname, ok2 = parseDirName(parts[2])
			ok = ok1 && ok2
		}
		if !ok {
			errs = append(errs, fmt.Errorf("%w: process %d carries the marker of %s, which has no directory and whose key cannot be read back", ErrState, ps[0].pid, mark))
			continue
		}
		inv.AppInsts = append(inv.AppInsts, &edgeproto.AppInst{
			Key:         &edgeproto.AppInstKey{Organization: iorg, Name: iname},
			ClusterKey:  &edgeproto.ClusterKey{Organization: corg, Name: cname},
			CloudletKey: ck.Clone(),
			State:       edgeproto.TrackedState_TRACKED_STATE_CREATING,
			RuntimeInfo: &edgeproto.AppInstRuntime{Pids: pidsOf(ps)},
		})
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("listing cloudlet %s: %w", cloudletID(ck), errors.Join(errs...))
	}
	sort.Slice(inv.Clusters, func(i, j int) bool {
		return executor.KeyString(inv.Clusters[i]) < executor.KeyString(inv.Clusters[j])
	})
	sort.Slice(inv.AppInsts, func(i, j int) bool {
		return executor.KeyString(inv.AppInsts[i]) < executor.KeyString(inv.AppInsts[j])
	})
	return inv, nil
}

// listCluster adds the cluster of directory cdir (named dirName) to inv
// and returns its key. A directory without a record whose name cannot be
// read back is an error. A cluster whose record is unreadable is listed
// READY keyed from its directory's name, or, when that cannot be read
// back, left out (nil key, no error); both are logged.
func (p *Platform) listCluster(ctx context.Context, inv *executor.Inventory, ck *edgeproto.CloudletKey, cdir, dirName string) (*edgeproto.ClusterKey, error) {
	var rec clusterRecord
	ok, err := p.readRecord(filepath.Join(cdir, clusterFile), &rec)
	if err != nil {
		org, name, decoded := parseDirName(dirName)
		if !decoded {
			p.log.WarnContext(ctx, "cluster record unreadable and its key cannot be read back from its directory's name: not listed", "error", err)
			return nil, nil
		}
		ci := &edgeproto.ClusterInst{Key: &edgeproto.ClusterKey{Organization: org, Name: name}, CloudletKey: ck.Clone(), State: edgeproto.TrackedState_TRACKED_STATE_READY}
		p.log.WarnContext(ctx, "cluster record unreadable: listed as ready, keyed from its directory's name", "cluster", clusterString(ci.Key), "error", err)
		inv.Clusters = append(inv.Clusters, ci)
		return ci.Key, nil
	}
	ci := &edgeproto.ClusterInst{CloudletKey: ck.Clone(), State: edgeproto.TrackedState_TRACKED_STATE_CREATING}
	if ok {
		ci.Key = &edgeproto.ClusterKey{Organization: rec.Organization, Name: rec.Name}
		if rng := (portRange{rec.PortFirst, rec.PortLast}); rng.valid() {
			ci.Resources = clusterResources(cdir, rng)
		}
		if rec.Phase != phaseCreating {
			ci.State = edgeproto.TrackedState_TRACKED_STATE_READY
		}
	} else {
		org, name, decoded := parseDirName(dirName)
		if !decoded {
			return nil, fmt.Errorf("%w: %s has no record and its key cannot be read back from its name", ErrState, p.rel(cdir))
		}
		ci.Key = &edgeproto.ClusterKey{Organization: org, Name: name}
	}
	inv.Clusters = append(inv.Clusters, ci)
	return ci.Key, nil
}

// listInstance adds the instance of directory dir to inv. An instance
// whose record is unreadable is listed CREATING keyed from its
// directory's name, or, when that cannot be read back, left out; both
// are logged.
func (p *Platform) listInstance(ctx context.Context, inv *executor.Inventory, ck *edgeproto.CloudletKey, clusterKey *edgeproto.ClusterKey, dir, mark string, procs []found) error {
	var rec appRecord
	ok, err := p.readRecord(filepath.Join(dir, appStateFile), &rec)
	inst := &edgeproto.AppInst{ClusterKey: clusterKey.Clone(), CloudletKey: ck.Clone(), State: edgeproto.TrackedState_TRACKED_STATE_CREATING}
	if err != nil || !ok {
		org, name, decoded := parseDirName(filepath.Base(dir))
		switch {
		case !decoded && err != nil:
			p.log.WarnContext(ctx, "instance record unreadable and its key cannot be read back from its directory's name: not listed", "pids", pidsOf(procs), "error", err)
			return nil
		case !decoded:
			return fmt.Errorf("%w: %s has no record and its key cannot be read back from its name", ErrState, p.rel(dir))
		case err != nil:
			p.log.WarnContext(ctx, "instance record unreadable: listed as an unfinished create, keyed from its directory's name", "appinst", appInstString(&edgeproto.AppInstKey{Organization: org, Name: name}), "error", err)
		}
		inst.Key = &edgeproto.AppInstKey{Organization: org, Name: name}
		inst.RuntimeInfo = &edgeproto.AppInstRuntime{Pids: pidsOf(procs)}
		inv.AppInsts = append(inv.AppInsts, inst)
		return nil
	}
	inst.Key = &edgeproto.AppInstKey{Organization: rec.Organization, Name: rec.Name}
	if rec.AppName != "" {
		inst.AppKey = &edgeproto.AppKey{Organization: rec.AppOrg, Name: rec.AppName, Version: rec.AppVersion}
	}
	if rec.Created {
		inst.State = edgeproto.TrackedState_TRACKED_STATE_READY
	}
	if rec.Phase == phaseOff {
		inst.PowerState = edgeproto.PowerState_POWER_STATE_POWER_OFF
	}
	if st, _ := p.checkRecorded(&rec, mark); st != procOurs {
		rec.Pid = 0
	}
	inst.RuntimeInfo = rec.publish(inst)
	if rec.Pid == 0 && len(procs) > 0 {
		// What runs is not what the record names (an interrupted start):
		// list it, so that whoever reconciles knows something runs.
		inst.RuntimeInfo.Pids = pidsOf(procs)
	}
	inv.AppInsts = append(inv.AppInsts, inst)
	return nil
}

func pidsOf(procs []found) []int64 {
	out := make([]int64, 0, len(procs))
	for _, f := range procs {
		out = append(out, int64(f.pid))
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// appDirs lists the names of the instance directories of cluster
// directory cdir (none when it cannot be listed).
func appDirs(cdir string) []string {
	ents, _ := os.ReadDir(filepath.Join(cdir, appsDir))
	var out []string
	for _, e := range ents {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out
}
