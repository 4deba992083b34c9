package local

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/edgekit/edgekit/edgeproto"
)

// File and directory names of the on-disk layout (see the package doc).
const (
	cloudletsDir    = "cloudlets"
	clustersDir     = "clusters"
	appsDir         = "apps"
	cloudletFile    = "cloudlet.json"
	clusterFile     = "cluster.json"
	appStateFile    = "state.json"
	stdoutLogFile   = "stdout.log"
	stderrLogFile   = "stderr.log"
	appWorkDir      = "work"
	stateFileFormat = 1
)

// cloudletRecord marks an initialised cloudlet.
type cloudletRecord struct {
	Format       int       `json:"format"`
	Organization string    `json:"organization"`
	Name         string    `json:"name"`
	InitAt       time.Time `json:"init_at"`
}

// clusterRecord is the state of a cluster: its key and its port range.
type clusterRecord struct {
	Format       int       `json:"format"`
	Organization string    `json:"organization"`
	Name         string    `json:"name"`
	PortFirst    int       `json:"port_first"`
	PortLast     int       `json:"port_last"`
	CreatedAt    time.Time `json:"created_at"`
}

// mappedPort is one declared port of an application and where it is
// reached on this host.
type mappedPort struct {
	Proto     edgeproto.PortProtocol `json:"proto"`
	Internal  int32                  `json:"internal"`
	EndPort   int32                  `json:"end_port,omitempty"`
	Public    int32                  `json:"public"`
	PublicEnd int32                  `json:"public_end,omitempty"`
}

// appRecord is the state of an application instance. Pid and StartTime
// identify the process; StartTime is field 22 of /proc/<pid>/stat, so a
// reused pid never passes for the process the platform started.
type appRecord struct {
	Format       int          `json:"format"`
	Organization string       `json:"organization"`
	Name         string       `json:"name"`
	Pid          int          `json:"pid,omitempty"`
	StartTime    uint64       `json:"start_time,omitempty"`
	StartedAt    time.Time    `json:"started_at,omitzero"`
	PoweredOff   bool         `json:"powered_off,omitempty"`
	Ports        []int        `json:"ports"`
	Mapped       []mappedPort `json:"mapped"`
	ConfigHash   string       `json:"config_hash"`
}

// readJSON decodes path into v; it returns false (and no error) when the
// file does not exist.
func readJSON(path string, v any) (bool, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("%w: %w", ErrState, err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return false, fmt.Errorf("%w: %s: %w", ErrState, path, err)
	}
	return true, nil
}

// writeJSON writes v to path atomically (temporary file, fsync, rename),
// readable by the owner only.
func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("%w: %w", ErrState, err)
	}
	b = append(b, '\n')
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("%w: %w", ErrState, err)
	}
	tmp := f.Name()
	_, werr := f.Write(b)
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp, path)
	}
	if werr != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("%w: %w", ErrState, werr)
	}
	return nil
}

// cloudletDir is the directory of a cloudlet.
func (p *Platform) cloudletDir(k *edgeproto.CloudletKey) (string, error) {
	n, err := cloudletDirName(k)
	if err != nil {
		return "", err
	}
	return filepath.Join(p.cfg.Root, cloudletsDir, n), nil
}

// clusterDir is the directory of a cluster, under its cloudlet.
func (p *Platform) clusterDir(c *edgeproto.ClusterInst) (string, error) {
	cl, err := p.cloudletDir(c.GetCloudletKey())
	if err != nil {
		return "", err
	}
	n, err := clusterDirName(c.GetKey())
	if err != nil {
		return "", err
	}
	return filepath.Join(cl, clustersDir, n), nil
}

// appDir is the directory of an application instance, under its cluster.
func (p *Platform) appDir(c *edgeproto.ClusterInst, inst *edgeproto.AppInst) (string, error) {
	cd, err := p.clusterDir(c)
	if err != nil {
		return "", err
	}
	n, err := appDirName(inst.GetKey())
	if err != nil {
		return "", err
	}
	return filepath.Join(cd, appsDir, n), nil
}
