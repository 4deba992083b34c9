package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
)

// CreateCluster creates the cluster's directory and reserves its port
// range, or adopts both when they exist (a re-run keeps the recorded
// range when the reservation store still allows it). The record is
// written before the range is reserved, so an interrupted create is
// listed (CREATING) and undone by a delete.
func (p *Platform) CreateCluster(ctx context.Context, cloudlet *edgeproto.Cloudlet, cluster *edgeproto.ClusterInst, res executor.Reservations, pr executor.Progress) error {
	return p.ensureCluster(ctx, cloudlet, cluster, res, pr, false)
}

// UpdateCluster has nothing to change on a directory: it makes sure the
// port range is reserved, as CreateCluster does. A cluster that was never
// created (or is being deleted) is ErrClusterNotFound.
func (p *Platform) UpdateCluster(ctx context.Context, cloudlet *edgeproto.Cloudlet, cluster *edgeproto.ClusterInst, res executor.Reservations, pr executor.Progress) error {
	return p.ensureCluster(ctx, cloudlet, cluster, res, pr, true)
}

func (p *Platform) ensureCluster(ctx context.Context, cloudlet *edgeproto.Cloudlet, cluster *edgeproto.ClusterInst, res executor.Reservations, pr executor.Progress, update bool) error {
	if res == nil {
		return fmt.Errorf("%w: no reservations store", ErrInvalidObject)
	}
	orig := cluster
	q, err := clusterQuota(cluster)
	if err != nil {
		return err
	}
	cluster = withCloudlet(cluster, cloudlet)
	l, err := p.clusterLoc(cluster)
	name := clusterString(cluster.GetKey())
	unlock, err := p.begin(ctx, l, err)
	if err != nil {
		return err
	}
	defer unlock()

	p.removeTemps(ctx, l.dir, clusterFile)
	path := filepath.Join(l.dir, clusterFile)
	var rec clusterRecord
	had, err := p.readRecord(path, &rec)
	switch {
	case err != nil:
		return err
	case update && !had:
		return fmt.Errorf("%w: %s was never created on this platform", ErrClusterNotFound, name)
	case update && rec.Phase == phaseDeleting:
		return fmt.Errorf("%w: %s is being deleted", ErrClusterNotFound, name)
	}
	step(pr, "Creating cluster directory")
	if !had {
		if err := p.mkdir(l.dir); err != nil {
			return err
		}
		rec = clusterRecord{
			Format:       stateFileFormat,
			Organization: cluster.GetKey().GetOrganization(),
			Name:         cluster.GetKey().GetName(),
			Phase:        phaseCreating,
			CreatedAt:    time.Now().UTC(),
		}
		if err := p.writeRecord(ctx, path, &rec); err != nil {
			return err
		}
	}
	p.at(hookClusterIntent)
	if err := p.mkdir(filepath.Join(l.dir, appsDir)); err != nil {
		return err
	}
	step(pr, "Reserving port range")
	want := portRange{rec.PortFirst, rec.PortLast}
	got, err := p.reserveRange(ctx, res, cloudletID(cluster.GetCloudletKey()), clusterOwner(cluster.GetKey()), want)
	if err != nil {
		return err
	}
	if want.valid() && got != want {
		p.log.WarnContext(ctx, "cluster port range changed: the recorded one is held by another owner",
			"cluster", name, "recorded", want.String(), "reserved", got.String())
	}
	if got != want || rec.Phase != phaseReady || !sameQuota(rec.Quota, q) {
		rec.PortFirst, rec.PortLast, rec.Phase, rec.Quota = got.first, got.last, phaseReady, q
		if err := p.writeRecord(ctx, path, &rec); err != nil {
			return err
		}
	}
	orig.Resources = clusterResources(l.dir, got)
	verb := map[bool]string{false: "created", true: "updated"}[update]
	p.log.InfoContext(ctx, "cluster "+verb, "cluster", name, "ports", got.String(), "adopted", had, "quota", q.String())
	return nil
}

// DeleteCluster marks the cluster as being deleted (application creates on
// it fail from then on; it waits for operations on its instances that are
// running), stops every process carrying a marker of the cluster, releases
// its port range and every port reserved in it, and removes its directory.
// Deleting an absent cluster, or one whose key could never have been
// created, succeeds. A live process that a record names but that is not
// provably the platform's fails the delete (ErrNotOwned); an unreadable
// record does not (its processes are found by their marker).
func (p *Platform) DeleteCluster(ctx context.Context, cloudlet *edgeproto.Cloudlet, cluster *edgeproto.ClusterInst, res executor.Reservations, pr executor.Progress) error {
	cluster = withCloudlet(cluster, cloudlet)
	l, err := p.clusterLoc(cluster)
	if errors.Is(err, errNeverCreatable) {
		return nil
	}
	name := clusterString(cluster.GetKey())
	unlock, err := p.begin(ctx, l, err)
	if err != nil {
		return err
	}
	defer unlock()

	var rng portRange
	path := filepath.Join(l.dir, clusterFile)
	var rec clusterRecord
	had, err := p.readRecord(path, &rec)
	switch {
	case err != nil:
		p.log.WarnContext(ctx, "cluster record unreadable: deleting what is found", "cluster", name, "error", err)
	case had && rec.Phase != phaseDeleting:
		rng = portRange{rec.PortFirst, rec.PortLast}
		rec.Phase = phaseDeleting
		if err := p.writeRecord(ctx, path, &rec); err != nil {
			return err
		}
	case had:
		rng = portRange{rec.PortFirst, rec.PortLast}
	}
	p.at(hookClusterDeleting)
	step(pr, "Stopping processes")
	owners, err := p.checkInstances(ctx, filepath.Join(l.dir, appsDir), l.mark)
	if err != nil {
		return err
	}
	if _, err := p.stopMarked(ctx, l.mark, nil); err != nil {
		return err
	}
	if res != nil {
		step(pr, "Releasing port range")
		if err := releaseCluster(ctx, res, cloudletID(cluster.GetCloudletKey()), clusterOwner(cluster.GetKey()), rng, owners); err != nil {
			return fmt.Errorf("releasing ports of cluster %s: %w", name, err)
		}
	}
	step(pr, "Removing cluster directory")
	if err := p.removeAll(l.dir); err != nil {
		return err
	}
	p.log.InfoContext(ctx, "cluster deleted", "cluster", name)
	return nil
}

// releaseCluster frees a cluster's port range (the one it holds in the
// store, and rng, the one its record names) and every port reserved
// inside it, whoever holds it (an application instance's ports are always
// in its cluster's range), and the ports of owners.
func releaseCluster(ctx context.Context, res executor.Reservations, cloudlet, owner string, rng portRange, owners []string) error {
	return res.Update(ctx, cloudlet, func(set executor.ReservationSet) error {
		ranges := []portRange{}
		if rng.valid() {
			ranges = append(ranges, rng)
		}
		for _, v := range set.Values(KindPortRange, owner) {
			if r, err := parsePortRange(v); err == nil {
				ranges = append(ranges, r)
			}
		}
		for _, r := range ranges {
			if o := set.Owner(KindPortRange, r.String()); o != "" && o != owner {
				continue // the record's range went to another cluster
			}
			for q := r.first; q <= r.last; q++ {
				if o := set.Owner(KindPort, strconv.Itoa(q)); o != "" {
					set.Release(KindPort, o)
				}
			}
		}
		for _, o := range owners {
			set.Release(KindPort, o)
		}
		set.Release(KindPortRange, owner)
		return nil
	})
}

// checkInstances reads the records of the instances under an apps
// directory (mark is the marks' prefix): a live process that a record
// names and that is not provably ours is an error; an unreadable record
// is logged (its processes are found by their marker). It returns the
// reservation owners of the instances it could read.
func (p *Platform) checkInstances(ctx context.Context, dir, mark string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, p.stateErr("listing", err)
	}
	var owners []string
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		var rec appRecord
		ok, err := p.readRecord(filepath.Join(dir, e.Name(), appStateFile), &rec)
		if err != nil {
			p.log.WarnContext(ctx, "record unreadable: stopping the instance's processes found by their marker", "error", err)
			continue
		}
		if !ok {
			continue
		}
		key := &edgeproto.AppInstKey{Organization: rec.Organization, Name: rec.Name}
		if st, why := p.checkRecorded(&rec, mark+"/"+e.Name()); st == procForeign {
			return nil, foreignError("application instance "+appInstString(key), rec.Pid, why)
		}
		owners = append(owners, appOwner(key))
	}
	return owners, nil
}

// withCloudlet fills the cluster's cloudlet key from cloudlet when the
// cluster carries none, without changing the caller's object.
func withCloudlet(cluster *edgeproto.ClusterInst, cloudlet *edgeproto.Cloudlet) *edgeproto.ClusterInst {
	if cluster.GetCloudletKey() != nil || cloudlet.GetKey() == nil {
		return cluster
	}
	c := &edgeproto.ClusterInst{Key: cluster.GetKey(), CloudletKey: cloudlet.GetKey()}
	return c
}

// clusterResources describes what the platform made for a cluster: one
// "cluster-dir" entry on this host, reached on loopback, with its port
// range as its flavor.
func clusterResources(dir string, rng portRange) *edgeproto.InfraResources {
	return &edgeproto.InfraResources{Vms: []*edgeproto.VmInfo{{
		Name:        filepath.Base(dir),
		Type:        "cluster-dir",
		Status:      "ACTIVE",
		InfraFlavor: "ports:" + rng.String(),
		Ipaddresses: []*edgeproto.IpAddr{{InternalIp: "127.0.0.1", ExternalIp: "127.0.0.1"}},
	}}}
}
