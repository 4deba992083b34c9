package local

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/executor"
)

// CreateCluster creates the cluster's directory and reserves its port
// range, or adopts both when they exist (a re-run keeps the recorded
// range when the reservation store still allows it).
func (p *Platform) CreateCluster(ctx context.Context, cloudlet *edgeproto.Cloudlet, cluster *edgeproto.ClusterInst, res executor.Reservations, pr executor.Progress) error {
	return p.ensureCluster(ctx, cloudlet, cluster, res, pr, "created")
}

// UpdateCluster has nothing to change on a directory: it makes sure the
// directory and the port range are there, as CreateCluster does.
func (p *Platform) UpdateCluster(ctx context.Context, cloudlet *edgeproto.Cloudlet, cluster *edgeproto.ClusterInst, res executor.Reservations, pr executor.Progress) error {
	return p.ensureCluster(ctx, cloudlet, cluster, res, pr, "updated")
}

func (p *Platform) ensureCluster(ctx context.Context, cloudlet *edgeproto.Cloudlet, cluster *edgeproto.ClusterInst, res executor.Reservations, pr executor.Progress, verb string) error {
	if res == nil {
		return fmt.Errorf("%w: no reservations store", ErrInvalidObject)
	}
	orig := cluster
	cluster = withCloudlet(cluster, cloudlet)
	dir, err := p.clusterDir(cluster)
	if err != nil {
		return err
	}
	unlock, err := p.locks.lock(ctx, dir)
	if err != nil {
		return err
	}
	defer unlock()

	step(pr, "Creating cluster directory")
	if err := os.MkdirAll(filepath.Join(dir, appsDir), 0o700); err != nil {
		return fmt.Errorf("%w: cluster directory: %w", ErrState, err)
	}
	path := filepath.Join(dir, clusterFile)
	var rec clusterRecord
	had, err := readJSON(path, &rec)
	if err != nil {
		return err
	}
	step(pr, "Reserving port range")
	owner := clusterOwner(cluster.GetKey())
	var want portRange
	if had {
		want = portRange{rec.PortFirst, rec.PortLast}
	}
	got, err := p.reserveRange(ctx, res, cloudletID(cluster.GetCloudletKey()), owner, want)
	if err != nil {
		return err
	}
	if had && got != want {
		p.log.WarnContext(ctx, "cluster port range changed: the recorded one is held by another owner",
			"cluster", clusterString(cluster.GetKey()), "recorded", want.String(), "reserved", got.String())
	}
	if !had || got != want {
		rec = clusterRecord{
			Format:       stateFileFormat,
			Organization: cluster.GetKey().GetOrganization(),
			Name:         cluster.GetKey().GetName(),
			PortFirst:    got.first,
			PortLast:     got.last,
			CreatedAt:    time.Now().UTC(),
		}
		if err := writeJSON(path, &rec); err != nil {
			return err
		}
	}
	orig.Resources = clusterResources(dir, got)
	p.log.InfoContext(ctx, "cluster "+verb, "cluster", clusterString(cluster.GetKey()), "ports", got.String(), "adopted", had)
	return nil
}

// DeleteCluster stops every process of the cluster, releases the ports of
// its application instances and its port range, and removes its
// directory. Deleting an absent cluster succeeds.
func (p *Platform) DeleteCluster(ctx context.Context, cloudlet *edgeproto.Cloudlet, cluster *edgeproto.ClusterInst, res executor.Reservations, pr executor.Progress) error {
	cluster = withCloudlet(cluster, cloudlet)
	dir, err := p.clusterDir(cluster)
	if err != nil {
		return err
	}
	unlock, err := p.locks.lock(ctx, dir)
	if err != nil {
		return err
	}
	defer unlock()

	owners := []string{clusterOwner(cluster.GetKey())}
	if _, err := os.Stat(dir); err == nil {
		step(pr, "Stopping processes")
		if err := p.stopAllApps(ctx, dir); err != nil {
			return err
		}
		appOwners, err := appOwnersIn(dir)
		if err != nil {
			return err
		}
		owners = append(owners, appOwners...)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: %w", ErrState, err)
	}
	if res != nil {
		step(pr, "Releasing port range")
		err := res.Update(ctx, cloudletID(cluster.GetCloudletKey()), func(set executor.ReservationSet) error {
			for _, o := range owners[1:] {
				set.Release(KindPort, o)
			}
			set.Release(KindPortRange, owners[0])
			return nil
		})
		if err != nil {
			return fmt.Errorf("releasing ports of cluster %s: %w", clusterString(cluster.GetKey()), err)
		}
	}
	step(pr, "Removing cluster directory")
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("%w: removing cluster directory: %w", ErrState, err)
	}
	p.log.InfoContext(ctx, "cluster deleted", "cluster", clusterString(cluster.GetKey()))
	return nil
}

// readCluster returns the record of the cluster an application instance
// runs in, or ErrClusterNotFound.
func (p *Platform) readCluster(cluster *edgeproto.ClusterInst) (string, clusterRecord, error) {
	dir, err := p.clusterDir(cluster)
	if err != nil {
		return "", clusterRecord{}, err
	}
	var rec clusterRecord
	ok, err := readJSON(filepath.Join(dir, clusterFile), &rec)
	if err != nil {
		return "", clusterRecord{}, err
	}
	if !ok {
		return dir, clusterRecord{}, fmt.Errorf("%w: %s", ErrClusterNotFound, clusterString(cluster.GetKey()))
	}
	return dir, rec, nil
}

// stopAllApps stops the process of every application instance recorded
// under a cluster directory.
func (p *Platform) stopAllApps(ctx context.Context, clusterDir string) error {
	ents, err := os.ReadDir(filepath.Join(clusterDir, appsDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%w: %w", ErrState, err)
	}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		var rec appRecord
		ok, err := readJSON(filepath.Join(clusterDir, appsDir, e.Name(), appStateFile), &rec)
		if err != nil || !ok || rec.Pid == 0 {
			continue
		}
		if _, err := stopProcess(ctx, rec.Pid, rec.StartTime, p.stopPolicy()); err != nil {
			return err
		}
	}
	return nil
}

// appOwnersIn lists the reservation owners of the application instances
// recorded under a cluster directory.
func appOwnersIn(clusterDir string) ([]string, error) {
	ents, err := os.ReadDir(filepath.Join(clusterDir, appsDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrState, err)
	}
	var out []string
	for _, e := range ents {
		var rec appRecord
		ok, err := readJSON(filepath.Join(clusterDir, appsDir, e.Name(), appStateFile), &rec)
		if err != nil || !ok {
			continue
		}
		out = append(out, appOwner(&edgeproto.AppInstKey{Organization: rec.Organization, Name: rec.Name}))
	}
	return out, nil
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

func (p *Platform) stopPolicy() stopPolicy {
	return stopPolicy{grace: p.cfg.StopGrace, interval: 10 * time.Millisecond, killWait: 10 * time.Second}
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
