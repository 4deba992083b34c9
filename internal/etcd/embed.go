package etcd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
)

// Defaults of EmbedConfig.
const (
	DefaultName         = "default"
	DefaultReadyTimeout = 30 * time.Second
	DefaultStopTimeout  = 10 * time.Second
	// DefaultMaxTxnOps is the number of operations (compares and writes)
	// one transaction may hold; etcd's own default is 128, too few for a
	// multi-object transaction with prefix guards.
	DefaultMaxTxnOps = 1024
)

// startTries bounds the attempts at starting a member whose free ports
// were taken by someone else between picking and binding them.
const startTries = 3

// ServerTLS is the TLS of a member's client listener, from PEM files.
type ServerTLS struct {
	CertFile, KeyFile string
	// TrustedCAFile holds the CAs that sign client certificates; with
	// ClientCertAuth, clients must present one.
	TrustedCAFile  string
	ClientCertAuth bool
	// ClientCertFile and ClientKeyFile are what the member's own clients
	// (Client, NewClient) present when ClientCertAuth is on; empty means
	// CertFile and KeyFile, which then need the client-auth usage too.
	ClientCertFile, ClientKeyFile string
}

func (t *ServerTLS) info() transport.TLSInfo {
	return transport.TLSInfo{
		CertFile:       t.CertFile,
		KeyFile:        t.KeyFile,
		TrustedCAFile:  t.TrustedCAFile,
		ClientCertAuth: t.ClientCertAuth,
	}
}

// EmbedConfig configures one embedded member. Only DataDir is required.
type EmbedConfig struct {
	// Name of the member, unique in its cluster; default DefaultName.
	Name string
	// DataDir holds the member's data (WAL and snapshots); created when
	// missing. A member started again on the same directory keeps its data.
	DataDir string
	// ClientAddr and PeerAddr are "host:port" addresses (or URLs) to serve
	// clients and peers on. Empty means "127.0.0.1:0"; port 0 picks a free
	// port, which Endpoints and PeerURL report. The host must be a loopback
	// address unless AllowRemote is set.
	ClientAddr, PeerAddr string
	// AllowRemote lets ClientAddr and PeerAddr use non-loopback hosts.
	AllowRemote bool
	// InitialCluster lists the members of a new cluster as
	// "name=peerURL,name=peerURL"; empty means this member alone. With more
	// than one member, PeerAddr must have a fixed port and this member's
	// entry must match it.
	InitialCluster string
	// InitialClusterToken tells clusters apart at bootstrap; default
	// "edgekit".
	InitialClusterToken string
	// JoinExisting starts a member that was added to a running cluster
	// (etcd's initial-cluster-state "existing").
	JoinExisting bool
	// ClientTLS, when set, serves clients over TLS.
	ClientTLS *ServerTLS
	// Auth, when set, is applied with EnableAuth once the member serves
	// (at every start, so a changed policy takes effect), which turns
	// etcd's authentication on. It needs ClientTLS with ClientCertAuth:
	// clients authenticate by the Common Name of their certificate, and
	// the member's own client (ClientCertFile, or CertFile) must be a
	// user of the policy with RootRole.
	Auth *AuthPolicy
	// Logger receives etcd's warnings and errors; nil discards them.
	Logger *slog.Logger
	// ReadyTimeout bounds the wait for the member to serve; default
	// DefaultReadyTimeout. StopTimeout bounds Close; default
	// DefaultStopTimeout.
	ReadyTimeout, StopTimeout time.Duration
	// HeartbeatInterval and ElectionTimeout tune raft; zero keeps etcd's
	// 100ms and 1s.
	HeartbeatInterval, ElectionTimeout time.Duration
	// CompactionRetention, when positive, compacts history older than it
	// periodically. Zero keeps every revision until compacted by a client.
	CompactionRetention time.Duration
	// MaxTxnOps bounds the operations of one transaction; default
	// DefaultMaxTxnOps.
	MaxTxnOps uint
	// QuotaBackendBytes bounds the database size; zero keeps etcd's
	// DefaultQuotaBackendBytes. A write that would pass it raises etcd's
	// NOSPACE alarm, which refuses writes (not reads and deletes) until it
	// is disarmed (see SpaceGuard). StartEmbedded refuses to start when the
	// data directory's file system cannot hold the database up to the
	// quota and the WAL (a SpaceError), so that the alarm fires before the
	// disk is full.
	QuotaBackendBytes int64
	// UnsafeNoFsync skips fsync: faster, and loses data on a machine
	// crash. For tests only.
	UnsafeNoFsync bool
}

// Embedded is a running embedded etcd member.
type Embedded struct {
	etcd       *embed.Etcd
	cfg        EmbedConfig // with defaults and chosen addresses filled in
	clientURLs []string
	peerURL    string
	client     *clientv3.Client

	closeOnce sync.Once
	closeErr  error
}

// StartEmbedded starts a member and waits until it serves requests (for a
// member of a new cluster, until a quorum of members has started), ctx
// ends or cfg.ReadyTimeout runs out. On error nothing is left running.
func StartEmbedded(ctx context.Context, cfg EmbedConfig) (*Embedded, error) {
	if err := cfg.fill(); err != nil {
		return nil, err
	}
	if err := checkSpace(cfg); err != nil {
		return nil, err
	}
	var lastErr error
	for range startTries {
		m, err := startOnce(ctx, cfg)
		if err == nil {
			return m, nil
		}
		lastErr = err
		// A free port picked for us was taken before etcd bound it: pick
		// others. Fixed ports, and clusters whose peers know our peer URL,
		// cannot move.
		if !IsAddrInUse(err) || cfg.InitialCluster != "" ||
			(!zeroPort(cfg.ClientAddr) && !zeroPort(cfg.PeerAddr)) {
			break
		}
	}
	return nil, lastErr
}

func (c *EmbedConfig) fill() error {
	if c.DataDir == "" {
		return errors.New("embedded etcd: no data directory")
	}
	if c.Name == "" {
		c.Name = DefaultName
	}
	if c.ClientAddr == "" {
		c.ClientAddr = "127.0.0.1:0"
	}
	if c.PeerAddr == "" {
		c.PeerAddr = "127.0.0.1:0"
	}
	if c.InitialClusterToken == "" {
		c.InitialClusterToken = "edgekit"
	}
	if c.ReadyTimeout <= 0 {
		c.ReadyTimeout = DefaultReadyTimeout
	}
	if c.StopTimeout <= 0 {
		c.StopTimeout = DefaultStopTimeout
	}
	if c.QuotaBackendBytes != 0 && c.QuotaBackendBytes < MinQuotaBackendBytes {
		return fmt.Errorf("embedded etcd %s: database quota %d bytes: want at least %s", c.Name, c.QuotaBackendBytes, FormatBytes(MinQuotaBackendBytes))
	}
	if c.MaxTxnOps == 0 {
		c.MaxTxnOps = DefaultMaxTxnOps
	}
	for _, a := range []struct{ what, addr string }{{"client", c.ClientAddr}, {"peer", c.PeerAddr}} {
		host, _, err := splitAddr(a.addr)
		if err != nil {
			return fmt.Errorf("embedded etcd %s: %s address: %w", c.Name, a.what, err)
		}
		if !c.AllowRemote && !isLoopback(host) {
			return fmt.Errorf("embedded etcd %s: %s address %q is not a loopback address (set AllowRemote to serve other hosts)", c.Name, a.what, a.addr)
		}
	}
	if c.Auth != nil {
		if c.ClientTLS == nil || !c.ClientTLS.ClientCertAuth {
			return fmt.Errorf("embedded etcd %s: authentication needs client TLS with client certificates (users authenticate by their certificate's Common Name)", c.Name)
		}
		if err := c.Auth.Validate(); err != nil {
			return fmt.Errorf("embedded etcd %s: %w", c.Name, err)
		}
	}
	if c.InitialCluster != "" && zeroPort(c.PeerAddr) {
		return fmt.Errorf("embedded etcd %s: a member of a multi-member cluster needs a fixed peer port", c.Name)
	}
	return nil
}

func startOnce(ctx context.Context, c EmbedConfig) (*Embedded, error) {
	scheme := "http"
	if c.ClientTLS != nil {
		scheme = "https"
	}
	curl, err := resolveURL(scheme, c.ClientAddr)
	if err != nil {
		return nil, fmt.Errorf("embedded etcd %s: client address: %w", c.Name, err)
	}
	purl, err := resolveURL("http", c.PeerAddr)
	if err != nil {
		return nil, fmt.Errorf("embedded etcd %s: peer address: %w", c.Name, err)
	}
	ec := embed.NewConfig()
	ec.Name = c.Name
	ec.Dir = c.DataDir
	ec.ListenClientUrls = []url.URL{*curl}
	ec.AdvertiseClientUrls = []url.URL{*curl}
	ec.ListenPeerUrls = []url.URL{*purl}
	ec.AdvertisePeerUrls = []url.URL{*purl}
	ec.InitialCluster = c.InitialCluster
	if ec.InitialCluster == "" {
		ec.InitialCluster = c.Name + "=" + purl.String()
	}
	ec.InitialClusterToken = c.InitialClusterToken
	ec.ClusterState = embed.ClusterStateFlagNew
	if c.JoinExisting {
		ec.ClusterState = embed.ClusterStateFlagExisting
	}
	if c.ClientTLS != nil {
		ec.ClientTLSInfo = c.ClientTLS.info()
	}
	ec.Logger = "zap"
	ec.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zapLogger(c.Logger, "etcd"))
	ec.EnableGRPCGateway = false
	if c.HeartbeatInterval > 0 {
		ec.TickMs = uint(c.HeartbeatInterval / time.Millisecond)
	}
	if c.ElectionTimeout > 0 {
		ec.ElectionMs = uint(c.ElectionTimeout / time.Millisecond)
	}
	ec.AutoCompactionMode = embed.CompactorModePeriodic
	ec.AutoCompactionRetention = "0"
	if c.CompactionRetention > 0 {
		ec.AutoCompactionRetention = c.CompactionRetention.String()
	}
	ec.MaxTxnOps = c.MaxTxnOps
	if c.QuotaBackendBytes > 0 {
		ec.QuotaBackendBytes = c.QuotaBackendBytes
	}
	ec.UnsafeNoFsync = c.UnsafeNoFsync

	e, err := embed.StartEtcd(ec)
	if err != nil {
		return nil, fmt.Errorf("embedded etcd %s: start: %w", c.Name, err)
	}
	m := &Embedded{etcd: e, cfg: c, clientURLs: []string{curl.String()}, peerURL: purl.String()}
	// From here on the member runs: every failure closes it.
	timer := time.NewTimer(c.ReadyTimeout)
	defer timer.Stop()
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		m.closeEtcd()
		return nil, fmt.Errorf("embedded etcd %s: %w", c.Name, err)
	case <-timer.C:
		m.closeEtcd()
		return nil, fmt.Errorf("embedded etcd %s: not ready within %v", c.Name, c.ReadyTimeout)
	case <-ctx.Done():
		m.closeEtcd()
		return nil, fmt.Errorf("embedded etcd %s: %w", c.Name, ctx.Err())
	}
	cli, err := m.NewClient()
	if err != nil {
		m.closeEtcd()
		return nil, err
	}
	m.client = cli
	if c.Auth != nil {
		actx, cancel := context.WithTimeout(ctx, c.ReadyTimeout)
		err := EnableAuth(actx, cli, *c.Auth)
		cancel()
		if err != nil {
			m.closeEtcd()
			return nil, fmt.Errorf("embedded etcd %s: %w", c.Name, err)
		}
	}
	return m, nil
}

// Name returns the member's name.
func (m *Embedded) Name() string { return m.cfg.Name }

// DataDir returns the member's data directory.
func (m *Embedded) DataDir() string { return m.cfg.DataDir }

// Endpoints returns the member's client URLs.
func (m *Embedded) Endpoints() []string { return append([]string(nil), m.clientURLs...) }

// PeerURL returns the URL the member serves its peers on.
func (m *Embedded) PeerURL() string { return m.peerURL }

// Config returns the member's configuration with every default and chosen
// address filled in: starting a member with it on the same data directory
// starts the same member again.
func (m *Embedded) Config() EmbedConfig {
	c := m.cfg
	c.ClientAddr = hostPort(m.clientURLs[0])
	c.PeerAddr = hostPort(m.peerURL)
	return c
}

// ClientConfig returns what a client needs to reach this member.
func (m *Embedded) ClientConfig() ClientConfig {
	cc := ClientConfig{Endpoints: m.Endpoints(), Logger: m.cfg.Logger}
	if t := m.cfg.ClientTLS; t != nil {
		cc.CAFile = t.TrustedCAFile
		if t.ClientCertAuth {
			cc.CertFile, cc.KeyFile = t.CertFile, t.KeyFile
			if t.ClientCertFile != "" {
				cc.CertFile, cc.KeyFile = t.ClientCertFile, t.ClientKeyFile
			}
		}
	}
	return cc
}

// Client returns a client of this member that Close closes. Callers that
// need a client of their own (to close it separately) use NewClient.
func (m *Embedded) Client() *clientv3.Client { return m.client }

// NewClient returns a new client of this member; the caller closes it.
func (m *Embedded) NewClient() (*clientv3.Client, error) { return NewClient(m.ClientConfig()) }

// Err reports a failure of the running member (its listeners failing).
func (m *Embedded) Err() <-chan error { return m.etcd.Err() }

// Close closes the client of Client and stops the member, waiting at most
// StopTimeout. Calling it again returns the first result.
func (m *Embedded) Close() error {
	m.closeOnce.Do(func() {
		var errs []error
		if m.client != nil {
			if err := m.client.Close(); err != nil && !errors.Is(err, context.Canceled) {
				errs = append(errs, fmt.Errorf("embedded etcd %s: close client: %w", m.cfg.Name, err))
			}
		}
		done := make(chan struct{})
		go func() {
			m.etcd.Close()
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(m.cfg.StopTimeout):
			errs = append(errs, fmt.Errorf("embedded etcd %s: not stopped within %v", m.cfg.Name, m.cfg.StopTimeout))
		}
		m.closeErr = errors.Join(errs...)
	})
	return m.closeErr
}

// closeEtcd stops a member that failed to start, bounded like Close.
func (m *Embedded) closeEtcd() { _ = m.Close() }

// IsAddrInUse reports whether err says that an address was taken.
func IsAddrInUse(err error) bool {
	// etcd does not always wrap the listener's error with %w.
	return errors.Is(err, syscall.EADDRINUSE) || (err != nil && strings.Contains(err.Error(), "address already in use"))
}

// splitAddr accepts "host:port" or a URL with a host and port.
func splitAddr(addr string) (host string, port int, err error) {
	hp := hostPort(addr)
	host, ps, err := net.SplitHostPort(hp)
	if err != nil {
		return "", 0, fmt.Errorf("%q: %w", addr, err)
	}
	port, err = strconv.Atoi(ps)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("%q: bad port %q", addr, ps)
	}
	return host, port, nil
}

func hostPort(addr string) string {
	if i := strings.Index(addr, "://"); i >= 0 {
		return strings.TrimSuffix(addr[i+3:], "/")
	}
	return addr
}

func zeroPort(addr string) bool {
	_, port, err := splitAddr(addr)
	return err == nil && port == 0
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// resolveURL builds the URL of addr, replacing port 0 by a port that is
// free now.
func resolveURL(scheme, addr string) (*url.URL, error) {
	host, port, err := splitAddr(addr)
	if err != nil {
		return nil, err
	}
	if port == 0 {
		if port, err = FreePort(host); err != nil {
			return nil, err
		}
	}
	return &url.URL{Scheme: scheme, Host: net.JoinHostPort(host, strconv.Itoa(port))}, nil
}

// FreePort returns a TCP port of host that nothing listens on now. Another
// process may take it before the caller binds it; callers retry then.
func FreePort(host string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, fmt.Errorf("pick a free port on %s: %w", host, err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	if err := l.Close(); err != nil {
		return 0, fmt.Errorf("pick a free port on %s: %w", host, err)
	}
	return port, nil
}
