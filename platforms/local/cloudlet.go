package local

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
)

// Resource names of the snapshot GatherCloudletInfo reports.
const (
	ResourceVCPUs = "vCPUs"
	ResourceRAM   = "RAM"
	ResourceDisk  = "Disk"
)

// flavorShapes are the flavors offered when the host is large enough for
// them; a "local.host" flavor the size of the whole host is always added.
var flavorShapes = []*edgeproto.FlavorInfo{
	{Name: "local.tiny", Vcpus: 1, RamMb: 512, DiskGb: 5},
	{Name: "local.small", Vcpus: 1, RamMb: 2048, DiskGb: 10},
	{Name: "local.medium", Vcpus: 2, RamMb: 4096, DiskGb: 20},
	{Name: "local.large", Vcpus: 4, RamMb: 8192, DiskGb: 40},
	{Name: "local.xlarge", Vcpus: 8, RamMb: 16384, DiskGb: 80},
}

// InitCloudlet creates the cloudlet's directory under the state root. It is
// idempotent, and runs beside operations on the cloudlet's clusters (a
// cleanup waits for it). An unreadable cloudlet record (it only marks the
// directory as initialised) is logged and written again: failing the
// init would have the engine undo it, stopping every instance of the
// cloudlet.
func (p *Platform) InitCloudlet(ctx context.Context, cloudlet *edgeproto.Cloudlet, _ executor.Reservations, pr executor.Progress) error {
	if err := p.enter(); err != nil {
		return err
	}
	l, err := p.cloudletLoc(cloudlet.GetKey())
	if err != nil {
		return err
	}
	unlock, err := p.lockShared(ctx, l)
	if err != nil {
		return err
	}
	defer unlock()
	// The record is written under its own exclusive lock, so that inits
	// by several platforms over the directory do not remove each other's
	// temporary file; the cloudlet's lock stays shared, so the init runs
	// beside operations on its clusters.
	release, err := p.locks.lock(ctx, l.mark+"#record", true)
	if err != nil {
		return err
	}
	defer release()
	step(pr, "Preparing state directory")
	p.removeTemps(ctx, l.dir, cloudletFile)
	if err := p.mkdir(filepath.Join(l.dir, clustersDir)); err != nil {
		return err
	}
	path := filepath.Join(l.dir, cloudletFile)
	var rec cloudletRecord
	ok, err := p.readRecord(path, &rec)
	if err != nil {
		p.log.WarnContext(ctx, "cloudlet record unreadable: writing it again", "cloudlet", cloudletID(cloudlet.GetKey()), "error", err)
	}
	if !ok {
		rec = cloudletRecord{
			Format:       stateFileFormat,
			Organization: cloudlet.GetKey().GetOrganization(),
			Name:         cloudlet.GetKey().GetName(),
			InitAt:       time.Now().UTC(),
		}
		if err := p.writeRecord(ctx, path, &rec); err != nil {
			return err
		}
	}
	p.log.InfoContext(ctx, "cloudlet initialised", "cloudlet", cloudletID(cloudlet.GetKey()))
	return nil
}

// GatherCloudletInfo reports the host: flavors that fit its capacity, a
// resources snapshot (CPUs, memory, disk of the state root's filesystem,
// the cloudlet's clusters as ListInsts finds them: an unreadable record
// affects its object only, never the cloudlet), one node and host
// properties.
func (p *Platform) GatherCloudletInfo(ctx context.Context, cloudlet *edgeproto.Cloudlet, info *edgeproto.CloudletInfo) error {
	if err := p.enter(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if info == nil {
		return fmt.Errorf("%w: nil CloudletInfo", ErrInvalidObject)
	}
	hi, err := readHostInfo(p.cfg.Root)
	if err != nil {
		return fmt.Errorf("gathering host info: %w", err)
	}
	info.Flavors = hostFlavors(hi)

	clusters, err := p.listClusters(ctx, cloudlet.GetKey())
	if err != nil {
		return err
	}
	info.ResourcesSnapshot = &edgeproto.InfraResourcesSnapshot{
		Info: []*edgeproto.InfraResource{
			resource(cloudlet, ResourceVCPUs, hi.cpusUsed(), uint64(hi.cpus), "", "CPUs of the host; used is the one-minute load average rounded up"),
			resource(cloudlet, ResourceRAM, hi.memUsedMB(), hi.memTotalMB(), "MB", "memory of the host; used is total minus available"),
			resource(cloudlet, ResourceDisk, hi.diskUsedGB(), hi.diskTotalGB(), "GB", "filesystem holding the state directory"),
		},
		ClusterInsts: clusters,
		TakenAt:      timestamppb.Now(),
	}
	info.NodeInfos = []*edgeproto.NodeInfo{{
		Name: hi.hostname,
		Capacity: map[string]string{
			"cpu":               strconv.Itoa(hi.cpus),
			"memory":            strconv.FormatUint(hi.memTotalKB, 10) + "Ki",
			"ephemeral-storage": strconv.FormatUint(hi.diskTotalB>>10, 10) + "Ki",
		},
		Allocatable: map[string]string{
			"cpu":               strconv.Itoa(hi.cpus),
			"memory":            strconv.FormatUint(hi.memAvailKB, 10) + "Ki",
			"ephemeral-storage": strconv.FormatUint(hi.diskAvailB>>10, 10) + "Ki",
		},
		Roles: []string{"local"},
	}}
	info.Properties = map[string]string{
		"platform":   PlatformType,
		"os":         runtime.GOOS,
		"arch":       runtime.GOARCH,
		"kernel":     hi.kernel,
		"hostname":   hi.hostname,
		"cpus":       strconv.Itoa(hi.cpus),
		"ports":      fmt.Sprintf("%d-%d", p.cfg.PortMin, p.cfg.PortMax),
		"port-range": strconv.Itoa(p.cfg.PortRangeSize),
	}
	return nil
}

// CleanupCloudlet stops every process carrying a marker of the cloudlet
// and removes the cloudlet's directory. Cleaning up an absent cloudlet, or
// one whose key could never have been created, succeeds. Port
// reservations of clusters still present are not released (no reservation
// store is handed in); the cloudlet's table goes with it. A live process
// that a record names but that is not provably the platform's fails the
// cleanup (ErrNotOwned); an unreadable record does not.
func (p *Platform) CleanupCloudlet(ctx context.Context, cloudlet *edgeproto.Cloudlet, pr executor.Progress) error {
	l, err := p.cloudletLoc(cloudlet.GetKey())
	if errors.Is(err, errNeverCreatable) {
		return nil
	}
	unlock, err := p.begin(ctx, l, err)
	if err != nil {
		return err
	}
	defer unlock()
	step(pr, "Stopping processes")
	ents, err := os.ReadDir(filepath.Join(l.dir, clustersDir))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return p.stateErr("listing", err)
	}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		if _, err := p.checkInstances(ctx, filepath.Join(l.dir, clustersDir, e.Name(), appsDir), l.mark+"/"+e.Name()); err != nil {
			return err
		}
	}
	if _, err := p.stopMarked(ctx, l.mark, nil); err != nil {
		return err
	}
	step(pr, "Removing state directory")
	if err := p.removeAll(l.dir); err != nil {
		return err
	}
	p.log.InfoContext(ctx, "cloudlet cleaned up", "cloudlet", cloudletID(cloudlet.GetKey()))
	return nil
}

func hostFlavors(hi hostInfo) []*edgeproto.FlavorInfo {
	var out []*edgeproto.FlavorInfo
	for _, f := range flavorShapes {
		if f.Vcpus <= uint64(hi.cpus) && f.RamMb <= hi.memTotalMB() && f.DiskGb <= hi.diskTotalGB() {
			out = append(out, f.Clone())
		}
	}
	out = append(out, &edgeproto.FlavorInfo{
		Name:    "local.host",
		Vcpus:   uint64(hi.cpus),
		RamMb:   hi.memTotalMB(),
		DiskGb:  hi.diskTotalGB(),
		PropMap: map[string]string{"whole-host": "true"},
	})
	return out
}

func resource(cloudlet *edgeproto.Cloudlet, name string, used, total uint64, units, desc string) *edgeproto.InfraResource {
	r := &edgeproto.InfraResource{
		Name:           name,
		Used:           used,
		Total:          total,
		Units:          units,
		Description:    desc,
		AlertThreshold: cloudlet.GetDefaultResourceAlertThreshold(),
	}
	for _, q := range cloudlet.GetResourceQuotas() {
		if q.GetName() == name {
			r.Quota = q.GetValue()
			if q.GetAlertThreshold() != 0 {
				r.AlertThreshold = q.GetAlertThreshold()
			}
		}
	}
	return r
}

// listClusters returns the keys of the clusters recorded under a cloudlet,
// sorted by organization then name. An unreadable record affects its
// cluster only (see ListInsts).
func (p *Platform) listClusters(ctx context.Context, k *edgeproto.CloudletKey) ([]*edgeproto.ClusterKey, error) {
	inv, err := p.inventory(ctx, k)
	if err != nil {
		return nil, err
	}
	out := make([]*edgeproto.ClusterKey, 0, len(inv.Clusters))
	for _, c := range inv.Clusters {
		out = append(out, c.GetKey())
	}
	return out, nil
}
