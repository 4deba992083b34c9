package region

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// InfoFile is the file, in the state directory, where up describes the
// running region.
const InfoFile = "region.json"

// Info describes a running region: what up writes to InfoFile once the
// region is ready, for the tour and for tools that drive the region.
type Info struct {
	// PID is up's process id.
	PID int `json:"pid"`
	// StateDir is the region's state directory (absolute).
	StateDir string `json:"state_dir"`
	// Region is the controller's region.
	Region string `json:"region"`
	// Executable is the multi-call binary every process runs; the tour
	// deploys "<Executable> serve".
	Executable string `json:"executable"`
	// Controller is the controller's API address, StatusPage the URL of
	// its status page.
	Controller string `json:"controller"`
	StatusPage string `json:"status_page"`
	// AdminTokenFile holds an admin token; CAFile verifies the controller.
	AdminTokenFile string `json:"admin_token_file"`
	CAFile         string `json:"ca_file"`
	// EdgectlConfig and EdgectlContext are where the edgectl context was
	// written.
	EdgectlConfig  string `json:"edgectl_config"`
	EdgectlContext string `json:"edgectl_context"`
	// Cloudlets are the region's cloudlets.
	Cloudlets []CloudletInfo `json:"cloudlets"`
	// FluidosTLSDir is the FLUIDOS nodes' development authority: an
	// "admin" certificate of it may use their APIs.
	FluidosTLSDir string `json:"fluidos_tls_dir"`
	// Nodes are the FLUIDOS nodes, by identity: Provider, Consumer, and
	// KubernetesProvider when the region has a Kubernetes cluster.
	Nodes map[string]NodeInfo `json:"nodes"`
	// KubeconfigFile is the kubeconfig of the region's Kubernetes cluster
	// (Options.KubeconfigFile, absolute), "" when it has none. Its
	// content is a secret and is never copied here.
	KubeconfigFile string `json:"kubeconfig_file,omitempty"`
	// Processes are the processes up runs.
	Processes []ProcessInfo `json:"processes"`
}

// CloudletInfo is one of the region's cloudlets.
type CloudletInfo struct {
	Organization string `json:"organization"`
	Name         string `json:"name"`
	// Manager is "CRM" or "CCRM".
	Manager string `json:"manager"`
	// Platform is the cloudlet's platform type.
	Platform string `json:"platform"`
}

// NodeInfo is a FLUIDOS node's endpoints.
type NodeInfo struct {
	REAR string `json:"rear"`
	API  string `json:"api"`
}

// ProcessInfo is a process up runs.
type ProcessInfo struct {
	Name string `json:"name"`
	PID  int    `json:"pid"`
	Log  string `json:"log"`
	// Listeners are its listening addresses, by role.
	Listeners map[string]string `json:"listeners,omitempty"`
}

// ErrNotRunning is returned by ReadInfo when no up runs on the state
// directory.
var ErrNotRunning = errors.New("no region runs on this state directory (start one with edgekit up)")

// ReadInfo reads the description of the region running on stateDir; it
// fails with ErrNotRunning when up is not running there.
func ReadInfo(stateDir string) (*Info, error) {
	data, err := os.ReadFile(filepath.Join(stateDir, InfoFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", stateDir, ErrNotRunning)
	}
	if err != nil {
		return nil, err
	}
	var info Info
	if err := json.Unmarshal(data, &info); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(stateDir, InfoFile), err)
	}
	if !lockHeld(filepath.Join(stateDir, "up.lock")) {
		return nil, fmt.Errorf("%s: %w", stateDir, ErrNotRunning)
	}
	return &info, nil
}

// write writes the description (0600), replacing the file atomically.
func (i *Info) write(path string) error {
	data, err := json.MarshalIndent(i, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(data, '\n'), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
