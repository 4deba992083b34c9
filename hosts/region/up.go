package region

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/edgekit/edgekit/fluidos"
	"github.com/edgekit/edgekit/internal/cli/clientconfig"
	"github.com/edgekit/edgekit/internal/kvservice"
)

// Defaults of Options.
const (
	DefaultBasePort     = 55000
	DefaultContext      = "up"
	DefaultReadyTimeout = 60 * time.Second
	DefaultStopTimeout  = 15 * time.Second
)

// Options configure Up.
type Options struct {
	// StateDir holds the region (see the package doc). Required. It must
	// be new, empty, or the state directory of an earlier Up.
	StateDir string
	// Executable is the multi-call edgekit binary; default the running
	// program (os.Executable).
	Executable string
	// BasePort places the listeners (see pickPorts): the controller's API
	// at BasePort+1, its HTTP server (status page, metrics) at BasePort+2,
	// and so on; 0 picks free ports. Negative means DefaultBasePort.
	BasePort int
	// Fresh deletes what an earlier Up left in StateDir before starting.
	Fresh bool
	// Context names the edgectl context Up writes (and makes current);
	// default DefaultContext. EdgectlConfig is the file it goes in;
	// default edgectl's own (clientconfig.DefaultPath).
	Context, EdgectlConfig string
	// Out receives what Up reports; nil discards.
	Out io.Writer
	// ReadyTimeout bounds the start; default DefaultReadyTimeout.
	ReadyTimeout time.Duration
	// StopTimeout bounds the stop of each process before it is killed;
	// default DefaultStopTimeout.
	StopTimeout time.Duration
	// KubeconfigFile, when set, is a kubeconfig: Up adds the cloudlet
	// KubernetesCloudlet on its cluster (platform kubernetes, served by the
	// CCRM replicas), with the file's content as its access variable
	// KUBECONFIG, and starts the FLUIDOS node KubernetesProvider on that
	// cluster (it reads the file itself at each start). A file that is not
	// a usable kubeconfig fails Up before anything starts. A cloudlet an
	// earlier Up created keeps the kubeconfig it was created with (Fresh
	// starts over).
	KubeconfigFile string
	// OnReady, when set, runs in a goroutine of its own once the region is
	// ready, with Up's context (the tour, for "edgekit up --tour").
	OnReady func(ctx context.Context, info *Info)
}

// Up runs the region until ctx ends, then stops it (see the package doc).
// It returns an error when the region could not start (after stopping what
// had started) or did not stop cleanly; ErrLocked when another Up runs on
// the state directory.
func Up(ctx context.Context, o Options) error {
	if err := o.defaults(); err != nil {
		return err
	}
	kubeconfig, err := readKubeconfig(o.KubeconfigFile)
	if err != nil {
		return err
	}
	if err := checkStateDir(o.StateDir); err != nil {
		return err
	}
	l := layout{dir: o.StateDir}
	if err := os.MkdirAll(l.dir, 0o700); err != nil {
		return fmt.Errorf("region: %w", err)
	}
	unlock, err := lockState(l.lock())
	if err != nil {
		return err
	}
	defer unlock()
	u := &upRun{o: o, l: l, out: newPrinter(o.Out), procs: map[string]*proc{}, kubeconfig: kubeconfig}
	if err := u.prepare(); err != nil {
		return err
	}
	err = u.start(ctx)
	switch {
	case err == nil:
		err = u.serve(ctx)
	case ctx.Err() != nil:
		err = nil // interrupted while starting: a stop like any other
	case strings.Contains(err.Error(), "address already in use"):
		err = fmt.Errorf("%w\nanother program listens on a port of the region: stop it, or give --base-port (0 picks free ports)", err)
	}
	return errors.Join(err, u.stop())
}

func (o *Options) defaults() error {
	if o.StateDir == "" {
		return errors.New("region: a state directory is required")
	}
	dir, err := filepath.Abs(o.StateDir)
	if err != nil {
		return fmt.Errorf("region: %w", err)
	}
	o.StateDir = dir
	if o.KubeconfigFile != "" {
		// The Kubernetes provider node reads it, from another directory.
		if o.KubeconfigFile, err = filepath.Abs(o.KubeconfigFile); err != nil {
			return fmt.Errorf("region: %w", err)
		}
	}
	if o.Executable == "" {
		if o.Executable, err = os.Executable(); err != nil {
			return fmt.Errorf("region: the program's path: %w", err)
		}
	}
	if o.BasePort < 0 {
		o.BasePort = DefaultBasePort
	}
	if o.Context == "" {
		o.Context = DefaultContext
	}
	if o.EdgectlConfig == "" {
		if o.EdgectlConfig, err = clientconfig.DefaultPath(os.Getenv); err != nil {
			return err
		}
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	if o.ReadyTimeout <= 0 {
		o.ReadyTimeout = DefaultReadyTimeout
	}
	if o.StopTimeout <= 0 {
		o.StopTimeout = DefaultStopTimeout
	}
	return nil
}

// stateEntries are the names Up creates in a state directory; Fresh
// removes exactly these.
var stateEntries = []string{"bin", "controller", "crm", "ccrm", "fluidos", "logs", "run", InfoFile, "powered-off.json"}

// checkStateDir refuses a directory that holds files but is not a state
// directory of Up's: Fresh would delete what it created there, and the
// rest would be in the way.
func checkStateDir(dir string) error {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) || (err == nil && len(ents) == 0) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("region: %w", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "up.lock")); err != nil {
		return fmt.Errorf("region: %s holds files and is not a region's state directory (no up.lock): give a new or empty directory", dir)
	}
	return nil
}

// upRun is one run of Up.
type upRun struct {
	o     Options
	l     layout
	out   *printer
	ports ports
	api   *api // the controller's API, once it serves
	// kubeconfig is the content of Options.KubeconfigFile (a secret).
	kubeconfig []byte

	mu    sync.Mutex
	procs map[string]*proc
	order []string       // start order
	wg    sync.WaitGroup // supervisors
}

// prepare picks and checks the ports, cleans up for Fresh, lays out the
// directory and installs the binary.
func (u *upRun) prepare() error {
	p, err := pickPorts(u.o.BasePort, len(u.kubeconfig) > 0)
	if err != nil {
		return err
	}
	if err := checkPorts(p); err != nil {
		return err
	}
	u.ports = p
	fresh := true
	if _, err := os.Stat(u.l.controller()); err == nil {
		fresh = false
	}
	if u.o.Fresh && !fresh {
		if n := stopLeftovers(u.l.dir, 5*time.Second); n > 0 {
			u.out.printf("stopped %d application processes of the old state\n", n)
		}
		for _, e := range stateEntries {
			if err := os.RemoveAll(u.l.path(e)); err != nil {
				return fmt.Errorf("region: --fresh: %w", err)
			}
		}
		fresh = true
	}
	if err := u.l.mkdirs(); err != nil {
		return err
	}
	if _, err := install(u.o.Executable, u.l.bin()); err != nil {
		return err
	}
	if err := link(u.l.bin(), u.l.kvImage()); err != nil {
		return err
	}
	if err := writeBlueprints(u.l.blueprints(), blueprint()); err != nil {
		return err
	}
	if len(u.kubeconfig) > 0 {
		if err := writeBlueprints(u.l.k8sBlueprints(), k8sBlueprint()); err != nil {
			return err
		}
	}
	what := "resuming the region"
	if fresh {
		what = "a new region"
	}
	u.out.printf("edgekit up: %s %q in %s\n", what, RegionName, u.l.dir)
	return nil
}

// blueprint is the Service the provider sells: the key-value service of
// package kvservice, run as the image "kv" of the provider's catalog (the
// region's binary under the name edgekit-kv).
func blueprint() *fluidos.ServiceBlueprint {
	bp := kvservice.Blueprint(ServiceBlueprint, 2)
	bp.Name = "Key-value store"
	bp.Description = "A small key-value store over HTTP; clients authenticate with the user name and password the buyer chooses"
	return bp
}

func writeBlueprints(path string, bp *fluidos.ServiceBlueprint) error {
	data, err := protojson.Marshal(bp)
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o600)
}
