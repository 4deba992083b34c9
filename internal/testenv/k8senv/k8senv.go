package k8senv

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/edgekit/edgekit/internal/etcd"
	"github.com/edgekit/edgekit/internal/testenv/freeport"
)

// Defaults of Options.
const (
	DefaultStartTimeout = 3 * time.Minute
	// ServiceCIDR is the cluster's service IP range (a configuration value:
	// nothing routes to it).
	ServiceCIDR = "10.0.0.0/24"
	// PodCIDR is where kwok takes the IPs of pods from (kwok's default
	// would overlap ServiceCIDR).
	PodCIDR = "10.244.0.0/16"
	// KwokAnnotation is the annotation (key=value) that makes kwok manage a
	// Node; AddNode sets it.
	KwokAnnotation = "kwok.x-k8s.io/node=fake"
)

// portTries bounds the starts of the API server when its free port was
// taken between picking and binding it.
const portTries = 3

// pollInterval is how often start-up conditions are checked.
const pollInterval = 100 * time.Millisecond

// Options configure Start. The zero value is usable.
type Options struct {
	// BinDir holds the binaries; empty means Binaries().
	BinDir string
	// StartTimeout bounds Start (with ctx); zero means DefaultStartTimeout.
	StartTimeout time.Duration
	// APIServerFlags are added to kube-apiserver's command line (for
	// example "--enable-admission-plugins=...").
	APIServerFlags []string
}

// Env is a running control plane. Its methods may be called from several
// goroutines.
type Env struct {
	dir     string
	etcd    *etcd.Embedded
	webhook *tokenWebhook
	pki     *pki
	server  string // https://127.0.0.1:PORT
	admin   string // the admin's bearer token
	procs   []*process

	closeOnce sync.Once
	closeErr  error
}

// Start starts etcd (embedded in this process), kube-apiserver,
// kube-controller-manager, kube-scheduler and kwok, and returns when the API
// server's /readyz is ok and the controller manager has created the default
// ServiceAccount (the scheduler and kwok run by then; a test waits for what
// it needs of them, such as a node being Ready, with AddNode). On error
// nothing is left running, and the error includes the end of the log of the
// process that failed.
func Start(ctx context.Context, opts Options) (_ *Env, err error) {
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = DefaultStartTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, opts.StartTimeout)
	defer cancel()
	bin := opts.BinDir
	if bin == "" {
		if bin, err = Binaries(); err != nil {
			return nil, err
		}
	} else if err := checkBinaries(bin); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "k8senv-")
	if err != nil {
		return nil, fmt.Errorf("k8senv: %w", err)
	}
	e := &Env{dir: dir, admin: newToken()}
	defer func() {
		if err != nil {
			_ = e.Close()
		}
	}()

	if e.etcd, err = etcd.StartEmbedded(ctx, etcd.EmbedConfig{
		DataDir:       filepath.Join(dir, "etcd"),
		UnsafeNoFsync: true,
	}); err != nil {
		return nil, fmt.Errorf("k8senv: %w", err)
	}
	if e.pki, err = newPKI(dir); err != nil {
		return nil, fmt.Errorf("k8senv: keys and certificates: %w", err)
	}
	if e.webhook, err = startTokenWebhook(); err != nil {
		return nil, err
	}
	tokenFile := filepath.Join(dir, "tokens.csv")
	webhookConfig := filepath.Join(dir, "token-webhook.kubeconfig")
	if err := writeTokenFile(tokenFile, e.admin); err != nil {
		return nil, fmt.Errorf("k8senv: %w", err)
	}
	if err := e.webhook.writeConfig(webhookConfig); err != nil {
		return nil, fmt.Errorf("k8senv: %w", err)
	}

	if err := e.startAPIServer(ctx, bin, tokenFile, webhookConfig, opts.APIServerFlags); err != nil {
		return nil, err
	}
	adminConfig := filepath.Join(dir, "admin.kubeconfig")
	if err := os.WriteFile(adminConfig, e.AdminKubeconfig(), 0o600); err != nil {
		return nil, fmt.Errorf("k8senv: %w", err)
	}

	// The controller manager and the scheduler serve no port
	// (--secure-port=0): nothing here reads their health endpoints, and a
	// port picked for them could be taken before they bind it.
	cm, err := e.start("kube-controller-manager", filepath.Join(bin, controllerBin), []string{
		"--kubeconfig=" + adminConfig,
		"--leader-elect=false",
		// nodeipam would give nodes pod CIDRs from a cluster CIDR no one
		// configured; every other controller runs, node lifecycle
		// included (it lifts the not-ready taint off Ready nodes).
		"--controllers=*,-nodeipam",
		"--service-account-private-key-file=" + e.pki.saKey,
		"--root-ca-file=" + e.pki.caFile,
		"--use-service-account-credentials=false",
		"--secure-port=0",
	})
	if err != nil {
		return nil, err
	}
	if _, err := e.start("kube-scheduler", filepath.Join(bin, schedulerBin), []string{
		"--kubeconfig=" + adminConfig,
		"--leader-elect=false",
		"--secure-port=0",
	}); err != nil {
		return nil, err
	}
	if _, err := e.start("kwok", filepath.Join(bin, kwokBin), []string{
		"--kubeconfig=" + adminConfig,
		"--config=" + filepath.Join(bin, kwokStages),
		"--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector=" + KwokAnnotation,
		"--node-ip=127.0.0.1",
		"--cidr=" + PodCIDR,
		"--node-port=0", // no kubelet-like server
	}); err != nil {
		return nil, err
	}
	if err := e.waitDefaultServiceAccount(ctx, cm); err != nil {
		return nil, err
	}
	return e, nil
}

// start runs one component of the Env.
func (e *Env) start(name, bin string, args []string) (*process, error) {
	p, err := startProcess(e.dir, name, bin, args)
	if err != nil {
		return nil, err
	}
	e.procs = append(e.procs, p)
	return p, nil
}

func (e *Env) startAPIServer(ctx context.Context, bin, tokenFile, webhookConfig string, extra []string) error {
	for try := 1; ; try++ {
		addr, err := freeport.Pick()
		if err != nil {
			return fmt.Errorf("k8senv: kube-apiserver: %w", err)
		}
		_, port, _ := net.SplitHostPort(addr)
		e.server = "https://" + addr
		args := append([]string{
			"--etcd-servers=" + e.etcd.Endpoints()[0],
			"--bind-address=127.0.0.1",
			"--advertise-address=127.0.0.1",
			"--secure-port=" + port,
			"--cert-dir=" + filepath.Join(e.dir, "apiserver-certs"),
			"--tls-cert-file=" + e.pki.servingCert,
			"--tls-private-key-file=" + e.pki.servingKey,
			"--service-account-issuer=https://kubernetes.default.svc",
			"--service-account-key-file=" + e.pki.saPub,
			"--service-account-signing-key-file=" + e.pki.saKey,
			"--token-auth-file=" + tokenFile,
			"--authentication-token-webhook-config-file=" + webhookConfig,
			"--authentication-token-webhook-version=v1",
			"--authorization-mode=RBAC",
			"--service-cluster-ip-range=" + ServiceCIDR,
			"--allow-privileged=true",
			// The "kubernetes" Service's endpoints would be 127.0.0.1,
			// which Endpoints refuse: do not maintain them.
			"--endpoint-reconciler-type=none",
		}, extra...)
		p, err := e.start("kube-apiserver", filepath.Join(bin, apiserverBin), args)
		if err != nil {
			return err
		}
		err = e.waitReady(ctx, p)
		if err == nil {
			return nil
		}
		if p.addrInUse() && try < portTries {
			continue
		}
		return err
	}
}

// waitReady waits until the API server's /readyz answers ok while p runs.
func (e *Env) waitReady(ctx context.Context, p *process) error {
	cfg := e.RESTConfig()
	cfg.Timeout = 5 * time.Second
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("k8senv: %w", err)
	}
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	var last error
	for {
		if p.exited() {
			return p.exitError()
		}
		body, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		if err == nil {
			return nil
		}
		last = fmt.Errorf("%w: %s", err, body)
		select {
		case <-ctx.Done():
			return fmt.Errorf("k8senv: kube-apiserver not ready (%v): %w; the end of its log:\n%s", last, ctx.Err(), p.tail())
		case <-p.done:
		case <-tick.C:
		}
	}
}

// waitDefaultServiceAccount waits until the controller manager (process
// cm) has created the ServiceAccount "default" of namespace "default": its
// controllers run then, and pods may be created.
func (e *Env) waitDefaultServiceAccount(ctx context.Context, cm *process) error {
	cs, err := kubernetes.NewForConfig(e.RESTConfig())
	if err != nil {
		return fmt.Errorf("k8senv: %w", err)
	}
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		for _, p := range e.procs {
			if p.exited() {
				return p.exitError()
			}
		}
		_, err := cs.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		if err == nil {
			return nil
		}
		if !apierrors.IsNotFound(err) && ctx.Err() == nil {
			return fmt.Errorf("k8senv: get the default ServiceAccount: %w", err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("k8senv: the controller manager did not create the default ServiceAccount: %w; the end of its log:\n%s", ctx.Err(), cm.tail())
		case <-tick.C:
		}
	}
}

// Close stops every process the Env started (SIGTERM to its pid's group,
// SIGKILL after a grace period), all at once, then etcd and the token webhook, and
// removes the Env's directory (logs included). It returns nil the second
// time.
func (e *Env) Close() error {
	e.closeOnce.Do(func() {
		// Every process stops at once: each waits at most its grace
		// period, not the sum of them.
		errs := make([]error, len(e.procs))
		var wg sync.WaitGroup
		for i, p := range e.procs {
			wg.Go(func() { errs[i] = p.stop() })
		}
		wg.Wait()
		if e.etcd != nil {
			errs = append(errs, e.etcd.Close())
		}
		if e.webhook != nil {
			errs = append(errs, e.webhook.close())
		}
		errs = append(errs, os.RemoveAll(e.dir))
		e.closeErr = errors.Join(errs...)
	})
	return e.closeErr
}

// Server returns the API server's URL (https://127.0.0.1:PORT).
func (e *Env) Server() string { return e.server }

// CAData returns the PEM certificate that the API server's certificate is
// signed by.
func (e *Env) CAData() []byte { return append([]byte(nil), e.pki.caPEM...) }

// AdminKubeconfig returns a kubeconfig (YAML) of a system:masters user.
func (e *Env) AdminKubeconfig() []byte {
	return kubeconfig(e.server, e.pki.caPEM, adminUser, e.admin)
}

// RESTConfig returns the admin's client configuration (AdminKubeconfig as a
// client-go config); each call returns a new one, the caller's to change.
func (e *Env) RESTConfig() *rest.Config {
	return &rest.Config{
		Host:            e.server,
		BearerToken:     e.admin,
		TLSClientConfig: rest.TLSClientConfig{CAData: e.CAData()},
		QPS:             100,
		Burst:           200,
	}
}

// Kubeconfig returns a kubeconfig (YAML) of user, member of groups, with a
// bearer token made for this call. The user has no rights of its own: RBAC
// decides (bind roles to the user or a group with the admin's client).
func (e *Env) Kubeconfig(user string, groups ...string) []byte {
	return kubeconfig(e.server, e.pki.caPEM, user, e.webhook.add(user, groups))
}

// Dir returns the Env's temporary directory, which holds each process's
// log (NAME.log) until Close.
func (e *Env) Dir() string { return e.dir }
